"""The incident-timeline kinds the pager writes, registered with incidents from
PagerConfig.ready(). The values are stored data: they never change."""

from django.utils.translation import gettext_lazy as _

PAGE = "page"  # a page made, delivered, failed through every method, acknowledged by link
ESCALATION = "escalation"  # started, step skipped, wait, repeat, last step, stop, re-page
MAINTENANCE = "maintenance"  # opened inside a maintenance window: nobody paged

LABELS = {PAGE: _("Page"), ESCALATION: _("Escalation"), MAINTENANCE: _("Maintenance")}
