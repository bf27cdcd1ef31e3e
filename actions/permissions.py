"""The actions app's permission strings, named once for its pages, API and services.
What the worker may do in Kubernetes is another matter: actions/rbac.py."""

VIEW_ACTIONS = "actions.view_actionrun"
REQUEST_ACTION = "actions.request_actionrun"
APPROVE_ACTION = "actions.approve_actionrun"
