"""The timeline kinds related incidents write (registered by IncidentsConfig.ready())."""

from django.utils.translation import gettext_lazy as _

LINKED = "incident_linked"
MERGED = "incident_merged"
UNLINKED = "incident_unlinked"

LABELS = {
    LINKED: _("Related incident linked"),
    MERGED: _("Related incident merged"),
    UNLINKED: _("Related incident unlinked"),
}
