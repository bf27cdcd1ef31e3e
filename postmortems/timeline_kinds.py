"""The incident-timeline kinds postmortems writes, registered with incidents from
PostmortemsConfig.ready(). The values are stored data."""

from django.utils.translation import gettext_lazy as _

POSTMORTEM = "postmortem"
ACTION_ITEM = "action_item"

LABELS = {POSTMORTEM: _("Postmortem"), ACTION_ITEM: _("Action item")}
