"""The incident-timeline kind the drills app writes, registered with incidents from
DrillsConfig.ready(). The value is stored data: it never changes."""

from django.utils.translation import gettext_lazy as _

DRILL = "drill"  # a drill's steps, once it has its incident

LABELS = {DRILL: _("Drill")}
