"""Action items: create, accept a suggestion, edit, move through open -> in progress ->
done / won't do (with a reason) as postmortems/transitions.py allows. Who hears of an
overdue item, and how, is the notifications app's (notifications/services/overdue.py);
it reads postmortems.selectors.action_items_overdue."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError, NotAllowed, NotFound
from console.permissions import require
from console.texts import msg
from incidents.models import Incident
from incidents.selectors import incident_get
from postmortems.models import (
    DUE_BY_PRIORITY,
    ActionItem,
    ItemCategory,
    ItemStatus,
    Postmortem,
    PostmortemEdit,
    PostmortemStatus,
    Priority,
)
from postmortems.permissions import ADMIN_EDIT, MANAGE
from postmortems.services.incident_timeline import item_event, listed
from postmortems.services.revisions import content_changed
from postmortems.transitions import check_item

EDITABLE = ("title", "description", "owner", "due_date", "priority", "category", "external_url")
_DUE_DATE = gettext_noop("due_date: use YYYY-MM-DD.")
# A changed value on the timeline line: enough to recognise it (a description can be long).
CHANGED_VALUE_CHARS = 200
_PUBLISHED = gettext_noop("This postmortem is published; only an admin can add to it.")


def _require(actor: User) -> None:
    require(actor, MANAGE, gettext_lazy("change action items"))


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    """Validate item fields; errors name the field."""
    out = {}
    for key, value in values.items():
        if key not in EDITABLE:
            raise DomainError(
                gettext_noop("%(key)s: not an action item field."),
                code="invalid_params",
                params={"key": key},
            )
        if key == "title":
            value = str(value or "").strip()
            if not value or len(value) > 300:
                raise DomainError(
                    gettext_noop("title: 1 to 300 characters."), code="invalid_params"
                )
        elif key == "description":
            value = str(value or "")[:20_000]
        elif key == "owner":
            if value in (None, ""):
                value = None
            elif not hasattr(value, "pk"):
                user = get_user_model().objects.filter(username=str(value), is_active=True).first()
                if user is None:
                    raise DomainError(
                        gettext_noop("owner: no active user named %(name)s."),
                        code="invalid_params",
                        params={"name": repr(value)},
                    )
                value = user
        elif key == "due_date":
            if isinstance(value, str):
                try:
                    value = date.fromisoformat(value)
                except ValueError:
                    raise DomainError(_DUE_DATE, code="invalid_params") from None
            if not isinstance(value, date):
                raise DomainError(_DUE_DATE, code="invalid_params")
        elif key == "priority" and value not in Priority.values:
            raise DomainError(
                gettext_noop("priority: one of %(values)s."),
                code="invalid_params",
                params={"values": ", ".join(Priority.values)},
            )
        elif key == "category" and value not in ItemCategory.values:
            raise DomainError(
                gettext_noop("category: one of %(values)s."),
                code="invalid_params",
                params={"values": ", ".join(ItemCategory.values)},
            )
        elif key == "external_url" and value:
            try:
                URLValidator(schemes=["http", "https"])(value)
            except ValidationError:
                raise DomainError(
                    gettext_noop("external_url: an http(s) URL."), code="invalid_params"
                ) from None
        out[key] = value
    return out


def _document(postmortem_id: int, incident: Incident, actor: User) -> Postmortem:
    """The postmortem an item is attached to, locked: attaching one changes what the
    postmortem publishes, so the same rules as editing it apply."""
    pm = Postmortem.objects.select_for_update().filter(pk=postmortem_id).first()
    if pm is None:
        raise NotFound(
            gettext_noop("Postmortem #%(id)s does not exist."), params={"id": postmortem_id}
        )
    if pm.incident_id != incident.pk:
        raise DomainError(
            gettext_noop("postmortem: #%(pm)s is not the postmortem of incident #%(incident)s."),
            code="invalid_params",
            params={"pm": pm.pk, "incident": incident.pk},
        )
    if pm.status == PostmortemStatus.PUBLISHED and not actor.has_perm(ADMIN_EDIT):
        raise NotAllowed(_PUBLISHED)
    return pm


def _default_due(priority: str) -> date:
    return timezone.localdate() + DUE_BY_PRIORITY.get(priority, timedelta(days=30))


@transaction.atomic
def action_item_create(
    *,
    incident_id: int,
    actor: User,
    values: dict[str, Any],
    postmortem_id: int | None = None,
    source: str = "",
    status: str | None = None,
    reason: str = "",
) -> ActionItem:
    _require(actor)
    incident = incident_get(incident_id=incident_id)
    values = _clean(values)
    if "title" not in values:
        raise DomainError(gettext_noop("title: required."), code="invalid_params")
    pm = _document(postmortem_id, incident, actor) if postmortem_id is not None else None
    values.setdefault("priority", Priority.P2)
    values.setdefault("category", ItemCategory.PROCESS)
    values.setdefault("due_date", _default_due(values["priority"]))
    item = ActionItem.objects.create(
        incident=incident,
        postmortem_id=postmortem_id,
        namespace=incident.namespace,
        runbook=incident.runbook,
        source=source,
        created_by=actor,
        created_at=timezone.now(),
        **values,
    )
    owner = item.owner.get_username() if item.owner else msg("postmortems.nobody")
    added = msg(
        "postmortems.item.added",
        priority=item.priority,
        category=msg(f"postmortems.item_category.{item.category}"),
        owner=owner,
        due=item.due_date.isoformat(),
    )
    item_event(item, actor, added)
    if pm is not None:  # the document's Action items section changed
        PostmortemEdit.objects.create(
            postmortem=pm, editor=actor, at=item.created_at, field="action_item", new=item.title
        )
        content_changed(pm, actor=actor, what=msg("postmortems.change.item_added", id=item.pk))
    if status is not None and status != item.status:  # same transaction: all or nothing
        item = action_item_set_status(item_id=item.pk, actor=actor, status=status, reason=reason)
    return item


def action_item_accept_suggestion(*, postmortem_id: int, actor: User, source: str) -> ActionItem:
    """One click: the runbook's long-term improvement becomes an item (once)."""
    _require(actor)
    pm = Postmortem.objects.filter(pk=postmortem_id).first()
    if pm is None:
        raise NotFound(
            gettext_noop("Postmortem #%(id)s does not exist."), params={"id": postmortem_id}
        )
    if pm.status == PostmortemStatus.PUBLISHED and not actor.has_perm(ADMIN_EDIT):
        raise NotAllowed(_PUBLISHED)
    suggestion = next((s for s in pm.suggestions if s.get("source") == source), None)
    if suggestion is None:
        raise NotFound(
            gettext_noop("No suggestion %(source)s on this postmortem."),
            params={"source": repr(source)},
        )
    existing = ActionItem.objects.filter(postmortem=pm, source=source).first()
    if existing is not None:
        return existing
    try:
        return action_item_create(
            incident_id=pm.incident_id,
            actor=actor,
            postmortem_id=pm.pk,
            source=source,
            values={k: suggestion[k] for k in ("title", "description", "priority", "category")},
        )
    except IntegrityError:  # accepted twice at once
        return ActionItem.objects.get(postmortem=pm, source=source)


@transaction.atomic
def action_item_update(*, item_id: int, actor: User, values: dict[str, Any]) -> ActionItem:
    _require(actor)
    item = ActionItem.objects.select_for_update().filter(pk=item_id).first()
    if item is None:
        raise NotFound(gettext_noop("Action item #%(id)s does not exist."), params={"id": item_id})
    changed = []
    for key, value in _clean(values).items():
        if getattr(item, key) != value:
            shown = value.get_username() if hasattr(value, "get_username") else value
            shown = str(shown)[:CHANGED_VALUE_CHARS] if shown else "—"
            if key == "category":  # a word of the reader's language, not the stored value
                shown = msg(f"postmortems.item_category.{value}")
            field = msg(f"postmortems.item_field.{key}")
            changed.append(msg("postmortems.item.changed", field=field, value=shown))
            setattr(item, key, value)
    if changed:
        item.save()
        item_event(item, actor, listed(changed, key="postmortems.item.changes"))
    return item


@transaction.atomic
def action_item_save(
    *,
    item_id: int,
    actor: User,
    values: dict[str, Any],
    status: str | None = None,
    reason: str = "",
) -> ActionItem:
    """Fields and status in one save (the inline row, API PATCH): a refused status (won't
    do without a reason) leaves the fields as they were too."""
    item = action_item_update(item_id=item_id, actor=actor, values=values)
    if status is not None and (status != item.status or status == ItemStatus.WONT_DO):
        item = action_item_set_status(item_id=item_id, actor=actor, status=status, reason=reason)
    return item


@transaction.atomic
def action_item_set_status(
    *, item_id: int, actor: User, status: str, reason: str = ""
) -> ActionItem:
    """The one writer of an item's status: the moves allowed are in transitions.py."""
    _require(actor)
    item = ActionItem.objects.select_for_update().filter(pk=item_id).first()
    if item is None:
        raise NotFound(gettext_noop("Action item #%(id)s does not exist."), params={"id": item_id})
    if status not in ItemStatus.values:
        raise DomainError(
            gettext_noop("status: one of %(values)s."),
            code="invalid_params",
            params={"values": ", ".join(ItemStatus.values)},
        )
    check_item(item, status)
    reason = (reason or "").strip()
    if status == ItemStatus.WONT_DO and not reason:
        raise DomainError(
            gettext_noop("reason: say why this will not be done."), code="invalid_params"
        )
    old = item.status
    item.status = status
    item.wont_do_reason = reason if status == ItemStatus.WONT_DO else ""
    item.closed_at = timezone.now() if status in (ItemStatus.DONE, ItemStatus.WONT_DO) else None
    item.save()
    if item.status != old:
        words = {
            "old": msg(f"postmortems.item_status.{old}"),
            "new": msg(f"postmortems.item_status.{item.status}"),
        }
        if reason:
            line = msg("postmortems.item.status_reason", **words, reason=reason[:200])
        else:
            line = msg("postmortems.item.status", **words)
        item_event(item, actor, line)
    return item


def action_items_mark_reminded(*, item_ids: list[int], on: date) -> None:
    """Record the day the overdue reminders last named these items (the notifications
    app's overdue pipeline calls this once a run)."""
    ActionItem.objects.filter(pk__in=item_ids).update(last_reminded_on=on)


@transaction.atomic
def action_item_delete(*, item_id: int, actor: User) -> None:
    """Only admins delete (a mistaken entry); everyone else closes items as won't do,
    which keeps the record the reports count."""
    if actor is None or not actor.has_perm(ADMIN_EDIT):
        raise NotAllowed(
            gettext_noop("Only an admin deletes action items; mark it won't do instead.")
        )
    deleted, _ = ActionItem.objects.filter(pk=item_id).delete()
    if not deleted:
        raise NotFound(gettext_noop("Action item #%(id)s does not exist."), params={"id": item_id})
