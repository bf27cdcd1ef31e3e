"""What people do to an incident: acknowledge, mitigate, resolve, reopen, notes, command.

Each service locks the incident row, checks the actor's permission and the state,
and writes the change and its timeline event in one transaction.
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from console.errors import DomainError
from incidents.lifecycle import apply_transition
from incidents.models import Incident, IncidentStatus, TimelineEvent, TimelineEventType

NOTE_MAX_CHARS = 10_000
REASON_MAX_CHARS = 2_000


def _require(actor, perm: str, what: str) -> None:
    if actor is None or not actor.has_perm(perm):
        raise PermissionDenied(f"Your role does not allow you to {what}.")


def _locked(incident_id: int) -> Incident:
    try:
        return Incident.objects.select_for_update().get(pk=incident_id)
    except Incident.DoesNotExist:
        raise DomainError(f"Incident #{incident_id} does not exist.", code="not_found") from None


def _clean_text(text: str, *, limit: int, what: str, required: bool) -> str:
    text = (text or "").strip()
    if required and not text:
        raise DomainError(f"The {what} is empty.", code="invalid")
    if len(text) > limit:
        raise DomainError(f"The {what} is longer than {limit} characters.", code="invalid")
    return text


def _transition(
    *, incident_id: int, actor, to: str, perm: str, what: str, reason: str = ""
) -> Incident:
    _require(actor, perm, what)
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=False)
    incident = _locked(incident_id)
    _, event = apply_transition(
        incident, to, at=timezone.now(), actor=actor, source="console", reason=reason
    )
    incident.save()
    event.save()
    return incident


@transaction.atomic
def incident_acknowledge(*, incident_id: int, actor) -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.ACKNOWLEDGED,
        perm="incidents.acknowledge_incident",
        what="acknowledge incidents",
    )


@transaction.atomic
def incident_mitigate(*, incident_id: int, actor, reason: str = "") -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.MITIGATED,
        perm="incidents.mitigate_incident",
        what="mark incidents mitigated",
        reason=reason,
    )


@transaction.atomic
def incident_resolve(*, incident_id: int, actor, reason: str = "") -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.RESOLVED,
        perm="incidents.resolve_incident",
        what="resolve incidents",
        reason=reason,
    )


@transaction.atomic
def incident_reopen(*, incident_id: int, actor, reason: str) -> Incident:
    _require(actor, "incidents.reopen_incident", "reopen incidents")
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=True)
    incident = _locked(incident_id)
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
def incident_note_add(*, incident_id: int, actor, text: str) -> TimelineEvent:
    _require(actor, "incidents.add_note", "add notes")
    text = _clean_text(text, limit=NOTE_MAX_CHARS, what="note", required=True)
    incident = _locked(incident_id)
    return TimelineEvent.objects.create(
        incident=incident,
        kind=TimelineEventType.NOTE,
        occurred_at=timezone.now(),
        actor=actor,
        source="console",
        message=text,
    )


@transaction.atomic
def incident_commander_set(*, incident_id: int, actor, commander_id: int | None) -> Incident:
    """Take command (anyone who may, when nobody holds it) or assign it (commanders)."""
    incident = _locked(incident_id)
    taking_free_seat = commander_id == actor.pk and incident.commander_id is None
    if taking_free_seat and actor.has_perm("incidents.take_command"):
        pass
    else:
        _require(actor, "incidents.assign_commander", "assign the incident commander")
    if commander_id == incident.commander_id:
        raise DomainError("That person is already the incident commander.", code="unchanged")
    new = None
    if commander_id is not None:
        new = get_user_model().objects.filter(pk=commander_id, is_active=True).first()
        if new is None:
            raise DomainError(f"No active user with id {commander_id}.", code="invalid")
        if not new.has_perm("incidents.take_command"):
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
