"""The incident-timeline kinds postmortems writes, registered with incidents from
PostmortemsConfig.ready(). The values are stored data."""

POSTMORTEM = "postmortem"
ACTION_ITEM = "action_item"

LABELS = {POSTMORTEM: "Postmortem", ACTION_ITEM: "Action item"}
