"""The runbooks app's permission strings, named once for its pages, API and services.
Action runs and drills have their own: actions/permissions.py, drills/permissions.py."""

from incidents.permissions import MITIGATE

# A runbook's writes on the incident (choose the runbook, confirm the diagnosis, check off
# steps) are part of responding to it: whoever may mark it mitigated may make them.
RESPOND = MITIGATE
