"""Editing a postmortem: its title, text sections and timeline lines. A published
postmortem is read-only except for admins; every edit goes into the append-only edit
history and, being a content change, withdraws approvals (services/revisions.py). The
review workflow itself is in services/review.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_noop, pgettext_lazy

from console.errors import DomainError, NotFound
from console.texts import msg
from postmortems.models import (
    TEXT_SECTIONS,
    Postmortem,
    PostmortemEdit,
    PostmortemStatus,
    PostmortemTimelineEntry,
    TimelineSource,
)
from postmortems.permissions import edit_refusal
from postmortems.services.incident_timeline import field_word, listed
from postmortems.services.revisions import content_changed

TEXT_MAX = 50_000
TITLE_MAX = 300
S = PostmortemStatus
# A field named in a refusal: English in the API, the page's language on a page.
_FIELD_WORDS = {
    "title": pgettext_lazy("postmortem field", "title"),
    "summary": pgettext_lazy("postmortem field", "summary"),
    "impact": pgettext_lazy("postmortem field", "impact"),
    "root_cause": pgettext_lazy("postmortem field", "root cause"),
    "contributing_factors": pgettext_lazy("postmortem field", "contributing factors"),
    "lessons_learned": pgettext_lazy("postmortem field", "lessons learned"),
    "timeline text": pgettext_lazy("postmortem field", "timeline text"),
}


def _locked(postmortem_id: int) -> Postmortem:
    pm = Postmortem.objects.select_for_update().filter(pk=postmortem_id).first()
    if pm is None:
        raise NotFound(
            gettext_noop("Postmortem #%(id)s does not exist."), params={"id": postmortem_id}
        )
    return pm


def _editable(pm: Postmortem, actor: User) -> None:
    refusal = edit_refusal(actor, pm)  # the rule the pages show the forms by
    if refusal is not None:
        raise refusal


def _text(value: object, *, what: str | Promise, limit: int) -> str:
    text = "" if value is None else str(value)
    if len(text) > limit:
        raise DomainError(
            gettext_noop("The %(what)s is longer than %(limit)s characters."),
            code="invalid",
            params={"what": what, "limit": limit},
        )
    return text.replace("\r\n", "\n")


def _history(pm: Postmortem, actor: User, field: str, old: str, new: str) -> None:
    PostmortemEdit.objects.create(
        postmortem=pm, editor=actor, at=timezone.now(), field=field, old=old, new=new
    )


@transaction.atomic
def postmortem_update(
    *, postmortem_id: int, actor: User, version: int, changes: dict[str, Any]
) -> Postmortem:
    """Change the title and text sections. `version` is the one the editor loaded: if
    someone saved in between, the save is refused (nothing is lost: the form keeps it)."""
    pm = _locked(postmortem_id)
    _editable(pm, actor)
    if int(version) != pm.version:
        raise DomainError(
            gettext_noop(
                "Someone else saved this postmortem while you were editing. Copy your text, "
                "reload, and apply it again."
            ),
            code="conflict",
        )
    allowed = {"title", *TEXT_SECTIONS}
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise DomainError(
            gettext_noop("%(field)s is not a postmortem field."),
            code="invalid",
            params={"field": unknown[0]},
        )
    changed = []
    for field, value in changes.items():
        limit = TITLE_MAX if field == "title" else TEXT_MAX
        new = _text(value, what=_FIELD_WORDS.get(field, field), limit=limit)
        if field == "title" and not new.strip():
            raise DomainError(gettext_noop("The title is empty."), code="invalid")
        old = getattr(pm, field)
        if new != old:
            setattr(pm, field, new)
            _history(pm, actor, field, old, new)
            changed.append(field_word(field))
    if changed:
        content_changed(pm, actor=actor, what=listed(changed))
        pm.version += 1
        pm.save()
    return pm


@transaction.atomic
def timeline_entry_update(
    *, entry_id: int, actor: User, text: str | None = None, included: bool | None = None
) -> PostmortemTimelineEntry:
    """Reword a timeline line or leave it out; its time never changes."""
    entry = PostmortemTimelineEntry.objects.select_for_update().filter(pk=entry_id).first()
    if entry is None:
        raise NotFound(
            gettext_noop("Timeline entry #%(id)s does not exist."), params={"id": entry_id}
        )
    pm = _locked(entry.postmortem_id)
    _editable(pm, actor)
    changed = []
    if text is not None:
        new = _text(text, what=_FIELD_WORDS["timeline text"], limit=2000).strip()
        if not new:
            raise DomainError(
                gettext_noop("A timeline line needs text; leave it out instead."), code="invalid"
            )
        if new != entry.text:
            _history(pm, actor, f"timeline:{entry.pk}", entry.text, new)
            entry.text = new
            changed.append(msg("postmortems.change.reworded"))
    if included is not None and bool(included) != entry.included:
        _history(pm, actor, f"timeline:{entry.pk}:included", str(entry.included), str(included))
        entry.included = bool(included)
        which = "included" if entry.included else "left_out"
        changed.append(msg(f"postmortems.change.{which}"))
    entry.save()
    if changed:
        how = listed(changed, key="postmortems.change.both")
        content_changed(pm, actor=actor, what=msg("postmortems.change.line", id=entry.pk, how=how))
    return entry


@transaction.atomic
def timeline_entry_add(
    *, postmortem_id: int, actor: User, occurred_at: datetime | None, text: str
) -> PostmortemTimelineEntry:
    pm = _locked(postmortem_id)
    _editable(pm, actor)
    text = _text(text, what=_FIELD_WORDS["timeline text"], limit=2000).strip()
    if not text or occurred_at is None:
        raise DomainError(gettext_noop("A timeline line needs a time and text."), code="invalid")
    entry = PostmortemTimelineEntry.objects.create(
        postmortem=pm,
        occurred_at=occurred_at,
        source=TimelineSource.MANUAL,
        kind="manual",
        original_text=text,
        text=text,
    )
    _history(pm, actor, f"timeline:{entry.pk}", "", text)
    content_changed(pm, actor=actor, what=msg("postmortems.change.line_added", id=entry.pk))
    return entry
