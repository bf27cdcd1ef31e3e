"""Console pages for postmortems and action items (server-rendered, htmx partials)."""

from postmortems.views.documents import (
    incident_panel,
    postmortem_detail,
    postmortem_draft,
    postmortem_drafting,
    postmortem_export,
    postmortem_history,
    postmortem_list,
    postmortem_print,
    section_save,
)
from postmortems.views.editing import (
    comment_add,
    publish,
    refresh,
    review_decide,
    review_request,
    timeline_add,
    timeline_entry,
)
from postmortems.views.items import (
    item_add,
    item_list,
    item_save,
    notification_list,
    notification_read,
    suggestion_accept,
)

__all__ = [
    "comment_add",
    "incident_panel",
    "item_add",
    "item_list",
    "item_save",
    "notification_list",
    "notification_read",
    "postmortem_detail",
    "postmortem_draft",
    "postmortem_drafting",
    "postmortem_export",
    "postmortem_history",
    "postmortem_list",
    "postmortem_print",
    "publish",
    "refresh",
    "review_decide",
    "review_request",
    "section_save",
    "suggestion_accept",
    "timeline_add",
    "timeline_entry",
]
