"""The runbooks app's permission strings (runbooks, actions, drills), named once for its
pages, API and services. Kubernetes' own permissions for the action kinds are another
matter: runbooks/actions/permissions.py."""

from incidents.permissions import MITIGATE

# A runbook's writes on the incident (choose the runbook, confirm the diagnosis, check off
# steps) are part of responding to it: whoever may mark it mitigated may make them.
RESPOND = MITIGATE
VIEW_ACTIONS = "runbooks.view_actionrun"
REQUEST_ACTION = "runbooks.request_actionrun"
APPROVE_ACTION = "runbooks.approve_actionrun"
VIEW_DRILLS = "runbooks.view_drillrun"
RUN_DRILL = "runbooks.run_drill"
