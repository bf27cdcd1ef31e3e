"""Every write to postmortems, their timelines, reviews, action items and notifications."""

from postmortems.services.documents import (
    postmortem_update,
    timeline_entry_add,
    timeline_entry_update,
)
from postmortems.services.drafting import (
    impact_data,
    postmortem_draft,
    postmortem_draft_build,
    postmortem_refresh,
)
from postmortems.services.inbox import notification_add, notification_read
from postmortems.services.items import (
    action_item_accept_suggestion,
    action_item_create,
    action_item_delete,
    action_item_save,
    action_item_set_status,
    action_item_update,
    action_items_mark_reminded,
)
from postmortems.services.review import (
    postmortem_comment,
    postmortem_publish,
    postmortem_request_review,
    postmortem_review,
)

__all__ = [
    "action_item_accept_suggestion",
    "action_item_create",
    "action_item_delete",
    "action_item_save",
    "action_item_set_status",
    "action_item_update",
    "action_items_mark_reminded",
    "impact_data",
    "notification_add",
    "notification_read",
    "postmortem_comment",
    "postmortem_draft",
    "postmortem_draft_build",
    "postmortem_publish",
    "postmortem_refresh",
    "postmortem_request_review",
    "postmortem_review",
    "postmortem_update",
    "timeline_entry_add",
    "timeline_entry_update",
]
