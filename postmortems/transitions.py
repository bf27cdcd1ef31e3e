"""The postmortem's state machines (its review status and its drafting state) and the
action items': which moves are allowed, and which service makes each. The one writer of
each state (in postmortems/services/) checks its move here first.
"""

from __future__ import annotations

from django.db import models
from django.utils.functional import Promise, lazy
from django.utils.translation import gettext, gettext_noop, pgettext

from incidents.transitions import TransitionError
from postmortems.models import ActionItem, DraftState, ItemStatus, Postmortem, PostmortemStatus

S, D, A = PostmortemStatus, DraftState, ItemStatus  # A: action items

# Where each machine starts, and the service that creates the row in it.
INITIAL: dict[str, str] = {
    S.DRAFT: "postmortem_draft",
    D.PENDING: "postmortem_draft",
    A.OPEN: "action_item_create",
}

# (from, to) -> the service that makes the move. A published postmortem stays published
# (admins correct its text without a new review).
STATUS: dict[tuple[str, str], str] = {
    (S.DRAFT, S.IN_REVIEW): "postmortem_request_review",
    (S.IN_REVIEW, S.IN_REVIEW): "postmortem_request_review",  # more reviewers named
    (S.IN_REVIEW, S.DRAFT): "postmortem_review",  # changes requested
    (S.IN_REVIEW, S.PUBLISHED): "postmortem_publish",
}

DRAFTING: dict[tuple[str, str], str] = {
    (D.PENDING, D.READY): "postmortem_draft_build",
    (D.PENDING, D.FAILED): "postmortem_draft_build",
    (D.FAILED, D.PENDING): "postmortem_draft",  # drafted again
}

# Any move between different statuses, as before the table: an item marked done by
# mistake may be closed as won't do (with a reason) directly. Won't do -> won't do
# changes the reason.
ITEM: dict[tuple[str, str], str] = {
    (A.OPEN, A.IN_PROGRESS): "action_item_set_status",
    (A.OPEN, A.DONE): "action_item_set_status",
    (A.OPEN, A.WONT_DO): "action_item_set_status",
    (A.IN_PROGRESS, A.OPEN): "action_item_set_status",
    (A.IN_PROGRESS, A.DONE): "action_item_set_status",
    (A.IN_PROGRESS, A.WONT_DO): "action_item_set_status",
    (A.DONE, A.OPEN): "action_item_set_status",
    (A.DONE, A.IN_PROGRESS): "action_item_set_status",
    (A.DONE, A.WONT_DO): "action_item_set_status",
    (A.WONT_DO, A.OPEN): "action_item_set_status",
    (A.WONT_DO, A.IN_PROGRESS): "action_item_set_status",
    (A.WONT_DO, A.DONE): "action_item_set_status",
    (A.WONT_DO, A.WONT_DO): "action_item_set_status",  # a new reason
}


def _either(labels: list[str]) -> str:
    if len(labels) < 2:
        return "".join(labels)
    some = pgettext("list separator", ", ").join(labels[:-1])
    return gettext("%(some)s or %(last)s") % {"some": some, "last": labels[-1]}


# Refusal params are lazy: English in the API (str of the error), the page's language on a
# page (console.errors). These turn into text only when the message is shown.
_lower = lazy(lambda word: str(word).lower(), str)
_phrase = lazy(lambda msgid, params: gettext(msgid) % params, str)
_lazy_either = lazy(lambda labels: _either([str(word) for word in labels]), str)


def _check(
    table: dict,
    choices: type[models.TextChoices],
    what: str | Promise,
    start: str,
    to: str,
    hint: str | Promise,
) -> None:
    if (start, to) in table:
        return

    def label(value: str) -> str | Promise:
        return _lower(choices(value).label)

    if not hint:
        froms = [label(a) for a, b in table if b == to]
        if froms:
            hint = _phrase(
                gettext_noop("it becomes %(to)s only from %(froms)s"),
                {"to": label(to), "froms": _lazy_either(froms)},
            )
        else:
            hint = _phrase(gettext_noop("it is %(to)s only when it is created"), {"to": label(to)})
    raise TransitionError(
        gettext_noop("Cannot move %(what)s from %(start)s to %(to)s: %(hint)s."),
        params={"what": what, "start": label(start), "to": label(to), "hint": hint},
    )


def check_status(pm: Postmortem, to: str, *, hint: str | Promise = "") -> None:
    what = _phrase(gettext_noop("postmortem #%(id)s"), {"id": pm.pk})
    _check(STATUS, S, what, pm.status, to, hint)


def check_drafting(pm: Postmortem, start: str, to: str) -> None:
    """`start` rather than the copy in memory: drafting moves are made on the row itself
    (a parallel retry or a rolled-back build may have left the copy behind)."""
    what = _phrase(gettext_noop("the draft of postmortem #%(id)s"), {"id": pm.pk})
    _check(DRAFTING, D, what, start, to, "")


def check_item(item: ActionItem, to: str, *, hint: str | Promise = "") -> None:
    what = _phrase(gettext_noop("action item #%(id)s"), {"id": item.pk})
    _check(ITEM, A, what, item.status, to, hint)
