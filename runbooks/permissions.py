"""The runbooks app's permission strings (runbooks, actions, drills), named once for its
pages, API and services. Kubernetes' own permissions for the action kinds are another
matter: actions/permissions.py."""

from incidents.permissions import MITIGATE

# A runbook's writes on the incident (choose the runbook, confirm the diagnosis, check off
# steps) are part of responding to it: whoever may mark it mitigated may make them.
RESPOND = MITIGATE
VIEW_ACTIONS = "actions.view_actionrun"
REQUEST_ACTION = "actions.request_actionrun"
APPROVE_ACTION = "actions.approve_actionrun"
VIEW_DRILLS = "drills.view_drillrun"
RUN_DRILL = "drills.run_drill"
