"""The audit log's reasons for the pager's configuration changes (console/audit/reasons.py):
written in English from these templates, worded in the reader's language on /audit/.

The English is what the pager has always written, so rows from before read the same way.
Imported by PagerConfig.ready() and by the services that write a reason."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from console.audit.reasons import audit_reason, audit_reasons_register
from pager.models import OverrideSource
from pager.paging.methods import KIND_WORDS
from pager.texts import method_words

CALENDAR_UPLOADED = "pager.audit.calendar_uploaded"
FEED_CHANGED = "pager.audit.feed_changed"
PERSONAL_FEED_CHANGED = "pager.audit.personal_feed_changed"
ON_CALL = "pager.audit.on_call"
OVERRIDE_ENDED = "pager.audit.override_ended"
OVERRIDE_CANCELLED = "pager.audit.override_cancelled"
SWAP_ASKED = "pager.audit.swap_asked"
SWAP_CANCELLED = "pager.audit.swap_cancelled"
METHOD_ADDED = "pager.audit.method_added"
METHOD_CHANGED = "pager.audit.method_changed"
METHOD_REMOVED = "pager.audit.method_removed"
METHOD_REORDERED = "pager.audit.method_reordered"
HEARTBEAT_CREATED = "pager.audit.heartbeat_created"
HEARTBEAT_TOKEN = "pager.audit.heartbeat_token"  # noqa: S105  (a message id)
HEARTBEAT_DELETED = "pager.audit.heartbeat_deleted"
WINDOW_CREATED = "pager.audit.window_created"
WINDOW_CANCELLED = "pager.audit.window_cancelled"

# contacts.py's verbs, as the reason starts with them.
METHOD_VERBS = {
    "added": METHOD_ADDED,
    "changed": METHOD_CHANGED,
    "removed": METHOD_REMOVED,
    "reordered": METHOD_REORDERED,
}
OVERRIDE_ENDS = {"ended": OVERRIDE_ENDED, "cancelled": OVERRIDE_CANCELLED}

_KINDS_BY_WORD = {word: kind for kind, word in KIND_WORDS.items()}


def _method_kind(word: str) -> Any:
    """The English word written ("email") as the reader's word for that kind."""
    kind = _KINDS_BY_WORD.get(word)
    return str(method_words(kind)) if kind else word


def _override_source(value: str) -> Any:
    return OverrideSource(value).label if value in OverrideSource.values else value


audit_reasons_register(
    {
        CALENDAR_UPLOADED: gettext_noop("Calendar uploaded to %(schedule)s: %(count)s event(s)"),
        FEED_CHANGED: gettext_noop("Feed address of %(schedule)s changed"),
        PERSONAL_FEED_CHANGED: gettext_noop("Personal feed address of %(user)s changed"),
        ON_CALL: gettext_noop(
            "%(user)s on call for %(schedule)s from %(starts)s to %(ends)s (%(override_source)s)"
        ),
        OVERRIDE_ENDED: gettext_noop("Override %(id)s of %(user)s on %(schedule)s ended"),
        OVERRIDE_CANCELLED: gettext_noop("Override %(id)s of %(user)s on %(schedule)s cancelled"),
        SWAP_ASKED: gettext_noop(
            "%(user)s asks for a swap on %(schedule)s from %(starts)s to %(ends)s"
        ),
        SWAP_CANCELLED: gettext_noop("Swap %(id)s on %(schedule)s cancelled"),
        METHOD_ADDED: gettext_noop("added %(method_kind)s contact method #%(id)s of %(user)s"),
        METHOD_CHANGED: gettext_noop("changed %(method_kind)s contact method #%(id)s of %(user)s"),
        METHOD_REMOVED: gettext_noop("removed %(method_kind)s contact method #%(id)s of %(user)s"),
        METHOD_REORDERED: gettext_noop(
            "reordered %(method_kind)s contact method #%(id)s of %(user)s"
        ),
        HEARTBEAT_CREATED: gettext_noop("Heartbeat %(name)s (%(slug)s) created"),
        HEARTBEAT_TOKEN: gettext_noop("Token of heartbeat %(name)s rotated"),
        HEARTBEAT_DELETED: gettext_noop("Heartbeat %(name)s deleted"),
        WINDOW_CREATED: gettext_noop("Maintenance window %(name)s created"),
        WINDOW_CANCELLED: gettext_noop("Maintenance window %(name)s cancelled"),
    },
    words={"method_kind": _method_kind, "override_source": _override_source},
)

__all__ = ["audit_reason"]
