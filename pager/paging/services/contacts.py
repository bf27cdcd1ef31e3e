"""A person's contact methods: add, change, remove, reorder, and the Test button.

A responder manages their own (pager.manage_own_oncall); a commander anyone's
(pager.manage_pager). Every change is written to the audit log with the address
masked (scheme and host). The Test button sends now, outside any transaction, through
that one method, and records when and how it went.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.audit.models import AuditKind, AuditMethod
from console.audit.services import audit_record
from console.errors import DomainError, NotFound
from console.permissions import require
from pager import audit_texts as A
from pager import permissions as perms
from pager.audit_texts import audit_reason
from pager.models import ContactKind, ContactMethod
from pager.paging.messages import test_text
from pager.paging.methods import KIND_WORDS, address_check, address_masked
from pager.paging.send import SendError, send
from pager.texts import method_words, pager_msg

# Audit rows of contact-method changes (console.audit; see the notes on adding these to
# AuditKind and AuditMethod).
AUDIT_KIND = AuditKind.CONTACT_METHOD
AUDIT_METHOD = AuditMethod.PAGER
LABEL_MAX = 100


def _authorise(actor: User, user_id: int, *, what_own: Any, what_other: Any) -> None:
    if actor is not None and actor.is_authenticated and actor.pk == user_id:
        require(actor, perms.OWN, what_own)
    else:
        require(actor, perms.MANAGE, what_other)


def _method_for(actor: User, method_id: int, *, lock: bool = False) -> ContactMethod:
    rows = ContactMethod.objects.select_related("user")
    if lock:
        rows = rows.select_for_update(of=("self",))
    method = rows.filter(pk=method_id).first()
    if method is None:
        raise NotFound(
            gettext_noop("Contact method #%(id)s does not exist."), params={"id": method_id}
        )
    _authorise(
        actor,
        method.user_id,
        what_own=gettext_lazy("change your contact methods"),
        what_other=gettext_lazy("change other people's contact methods"),
    )
    return method


def _seen(method: ContactMethod) -> dict[str, Any]:
    """What the audit keeps of a method: never the address itself."""
    return {
        "user": method.user.get_username(),
        "kind": method.kind,
        "label": method.label,
        "address": address_masked(method.kind, method.address),
        "position": method.position,
        "enabled": method.enabled,
    }


def _audit(actor: User, method: ContactMethod, verb: str, old: Any, new: Any) -> None:
    audit_record(
        kind=AUDIT_KIND,
        method=AUDIT_METHOD,
        user=actor,
        reason=audit_reason(
            A.METHOD_VERBS[verb],
            method_kind=KIND_WORDS.get(method.kind, method.kind),
            id=method.pk,
            user=method.user.get_username(),
        ),
        old=old,
        new=new,
    )


def _label(label: str) -> str:
    label = (label or "").strip()
    if len(label) > LABEL_MAX:
        raise DomainError(
            gettext_noop("The label is longer than %(max)s characters."),
            code="invalid",
            params={"max": LABEL_MAX},
        )
    return label


def contact_method_create(
    *, actor: User, user_id: int, kind: str, address: str, label: str = "", enabled: bool = True
) -> ContactMethod:
    """Add a method at the end of the person's order."""
    _authorise(
        actor,
        user_id,
        what_own=gettext_lazy("add contact methods"),
        what_other=gettext_lazy("add contact methods for other people"),
    )
    address = address_check(kind, address)  # resolves a server's name: before the transaction
    label = _label(label)
    with transaction.atomic():
        owner = get_user_model().objects.select_for_update().filter(pk=user_id).first()
        if owner is None:
            raise NotFound(gettext_noop("User #%(id)s does not exist."), params={"id": user_id})
        last = ContactMethod.objects.filter(user=owner).aggregate(last=Max("position"))["last"]
        method = ContactMethod.objects.create(
            user=owner,
            position=(last or 0) + 1,
            kind=kind,
            label=label,
            address=address,
            enabled=enabled,
        )
        _audit(actor, method, "added", None, _seen(method))
    return method


def contact_method_update(
    *,
    actor: User,
    method_id: int,
    kind: str | None = None,
    address: str | None = None,
    label: str | None = None,
    enabled: bool | None = None,
) -> ContactMethod:
    """Change what is given (None: unchanged). A new kind needs its address again."""
    current = _method_for(actor, method_id)
    new_kind = kind if kind is not None else current.kind
    if kind is not None and kind != current.kind and address is None:
        raise DomainError(
            gettext_noop("Give the address again when changing the kind of a contact method."),
            code="invalid",
        )
    checked = address_check(new_kind, address) if address is not None else None
    with transaction.atomic():
        method = _method_for(actor, method_id, lock=True)
        old = _seen(method)
        method.kind = new_kind
        if checked is not None:
            method.address = checked
        if label is not None:
            method.label = _label(label)
        if enabled is not None:
            method.enabled = enabled
        method.save(update_fields=["kind", "address", "label", "enabled"])
        _audit(actor, method, "changed", old, _seen(method))
    return method


@transaction.atomic
def contact_method_delete(*, actor: User, method_id: int) -> None:
    """Remove a method; pages already sent keep their deliveries (without the method)."""
    method = _method_for(actor, method_id, lock=True)
    _audit(actor, method, "removed", _seen(method), None)
    method.delete()


@transaction.atomic
def contact_method_move(*, actor: User, method_id: int, position: int) -> list[ContactMethod]:
    """Put a method at `position` (1 = tried first) in its person's order; returns the
    person's methods in their new order, numbered 1, 2, 3..."""
    method = _method_for(actor, method_id, lock=True)
    methods = list(
        ContactMethod.objects.select_for_update()
        .filter(user_id=method.user_id)
        .order_by("position")
    )
    old = [m.pk for m in methods]
    ordered = [m for m in methods if m.pk != method.pk]
    ordered.insert(min(max(position, 1), len(methods)) - 1, method)
    # Two steps: (user, position) is unique, so numbers are first moved out of the way.
    base = max(m.position for m in methods) + 1
    for offset, m in enumerate(ordered):
        ContactMethod.objects.filter(pk=m.pk).update(position=base + offset)
    for number, m in enumerate(ordered, start=1):
        ContactMethod.objects.filter(pk=m.pk).update(position=number)
        m.position = number
    _audit(actor, method, "reordered", {"order": old}, {"order": [m.pk for m in ordered]})
    return ordered


def contact_method_test(*, method_id: int, actor: User) -> str:
    """Send a test message through this one method now (never inside a transaction: it
    waits up to PAGER_TIMEOUT_SECONDS on the service) and record the outcome. Returns
    the outcome, as recorded (English: pager.paging.methods.contact_test_words words it)."""
    method = _method_for(actor, method_id)
    if method.kind not in ContactKind.values:
        raise DomainError(gettext_noop("Unknown contact method kind."), code="invalid")
    now = timezone.now()
    masked = address_masked(method.kind, method.address)
    try:
        send(method.kind, method.address, test_text(method), ref=f"test.{method.pk}")
    except SendError as exc:
        outcome = pager_msg("test.failed", detail=str(exc))
    else:
        sent_at = f"{now:%Y-%m-%d %H:%M}"
        kind = method_words(method.kind)
        outcome = pager_msg("test.sent", method=kind, address=masked, time=sent_at)
    # Kept as English (the column has no parts): contact_test_words words it when shown.
    result = outcome.english
    ContactMethod.objects.filter(pk=method.pk).update(
        last_test_at=now, last_test_result=result[:500]
    )
    return result
