"""What people do to an incident: acknowledge, mitigate, resolve, reopen, notes, command.

Each service locks the incident row, checks the actor's permission and the state,
and writes the change and its timeline event in one transaction.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from console.errors import DomainError
from console.permissions import require
from incidents import permissions as perms
from incidents.lifecycle import apply_transition
from incidents.models import Incident, IncidentStatus, TimelineEvent, TimelineEventType
from incidents.selectors import incident_for_update

NOTE_MAX_CHARS = 10_000
REASON_MAX_CHARS = 2_000


def _clean_text(text: str, *, limit: int, what: str, required: bool) -> str:
    text = (text or "").strip()
    if required and not text:
        raise DomainError(f"The {what} is empty.", code="invalid")
    if len(text) > limit:
        raise DomainError(f"The {what} is longer than {limit} characters.", code="invalid")
    return text


def _transition(
    *, incident_id: int, actor: User, to: str, perm: str, what: str, reason: str = ""
) -> Incident:
    require(actor, perm, what)
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=False)
    incident = incident_for_update(incident_id=incident_id)
    _, event = apply_transition(
        incident, to, at=timezone.now(), actor=actor, source="console", reason=reason
    )
    incident.save()
    event.save()
    return incident


@transaction.atomic
def incident_acknowledge(*, incident_id: int, actor: User) -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.ACKNOWLEDGED,
        perm=perms.ACKNOWLEDGE,
        what="acknowledge incidents",
    )


@transaction.atomic
def incident_mitigate(*, incident_id: int, actor: User, reason: str = "") -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.MITIGATED,
        perm=perms.MITIGATE,
        what="mark incidents mitigated",
        reason=reason,
    )


@transaction.atomic
def incident_resolve(*, incident_id: int, actor: User, reason: str = "") -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.RESOLVED,
        perm=perms.RESOLVE,
        what="resolve incidents",
        reason=reason,
    )


@transaction.atomic
def incident_reopen(*, incident_id: int, actor: User, reason: str) -> Incident:
    require(actor, perms.REOPEN, "reopen incidents")
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=True)
    incident = incident_for_update(incident_id=incident_id)
    if incident.status != IncidentStatus.RESOLVED:
        raise DomainError(f"Incident #{incident_id} is {incident.status}, not resolved.")
    conflict = (
        Incident.objects.filter(grouping_key=incident.grouping_key)
        .exclude(status=IncidentStatus.RESOLVED)
        .exclude(pk=incident.pk)
        .first()
    )
    if conflict is not None:
        raise DomainError(
            f"Incident #{conflict.pk} is already open for the same alert group; "
            "work there instead of reopening this one.",
            code="conflict",
        )
    _, event = apply_transition(
        incident, IncidentStatus.TRIGGERED, at=timezone.now(), actor=actor, reason=reason
    )
    incident.save()
    event.save()
    return incident


@transaction.atomic
def incident_note_add(*, incident_id: int, actor: User, text: str) -> TimelineEvent:
    require(actor, perms.ADD_NOTE, "add notes")
    text = _clean_text(text, limit=NOTE_MAX_CHARS, what="note", required=True)
    incident = incident_for_update(incident_id=incident_id)
    return TimelineEvent.objects.create(
        incident=incident,
        kind=TimelineEventType.NOTE,
        occurred_at=timezone.now(),
        actor=actor,
        source="console",
        message=text,
    )


@transaction.atomic
def incident_commander_set(*, incident_id: int, actor: User, commander_id: int | None) -> Incident:
    """Take command (anyone who may, when nobody holds it) or assign it (commanders)."""
    incident = incident_for_update(incident_id=incident_id)
    taking_free_seat = commander_id == actor.pk and incident.commander_id is None
    if taking_free_seat and actor.has_perm(perms.TAKE_COMMAND):
        pass
    else:
        require(actor, perms.ASSIGN_COMMANDER, "assign the incident commander")
    if commander_id == incident.commander_id:
        raise DomainError("That person is already the incident commander.", code="unchanged")
    new = None
    if commander_id is not None:
        new = get_user_model().objects.filter(pk=commander_id, is_active=True).first()
        if new is None:
            raise DomainError(f"No active user with id {commander_id}.", code="invalid")
        if not new.has_perm(perms.TAKE_COMMAND):
            raise DomainError(
                f"{new.get_username()} has no responder role, so cannot command.",
                code="invalid",
            )
    old = incident.commander
    incident.commander = new
    incident.save(update_fields=["commander", "updated_at"])
    old_name = old.get_username() if old else None
    new_name = new.get_username() if new else None
    verb = "took command" if taking_free_seat else "set the commander"
    TimelineEvent.objects.create(
        incident=incident,
        kind=TimelineEventType.COMMANDER_CHANGED,
        occurred_at=timezone.now(),
        actor=actor,
        source="console",
        message=f"{actor.get_username()} {verb}: {old_name or 'nobody'} → {new_name or 'nobody'}.",
        payload={"from": old_name, "to": new_name},
    )
    return incident
