"""The incident-timeline kind the actions app writes, registered with incidents from
ActionsConfig.ready(). The value is stored data: it never changes."""

from django.utils.translation import gettext_lazy as _

ACTION = "action"  # an action run's request, decision and outcome, and its guard's verdict

LABELS = {ACTION: _("Action")}
