"""The incidents app's permission strings (Meta.permissions of its models, granted per
role in console/roles.py), named once for its pages, API and services."""

VIEW = "incidents.view_incident"
ACKNOWLEDGE = "incidents.acknowledge_incident"
# Open an incident by hand, or page a team into one (chat's /incident, the API, the pages).
DECLARE = "incidents.declare_incident"
MITIGATE = "incidents.mitigate_incident"
RESOLVE = "incidents.resolve_incident"
REOPEN = "incidents.reopen_incident"
ADD_NOTE = "incidents.add_note"
TAKE_COMMAND = "incidents.take_command"
ASSIGN_COMMANDER = "incidents.assign_commander"
SILENCE = "incidents.silence_alerts"
VIEW_RECEIPTS = "incidents.view_webhookreceipt"
REPLAY_RECEIPTS = "incidents.replay_webhookreceipt"
