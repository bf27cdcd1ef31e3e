"""Who is in command of an incident: taking or assigning command, the first
acknowledgement taking a free seat, and resolving a serious incident nobody commands.

Every commander change goes through `commander_change` (the incident row locked by the
caller), so taking command by hand, being assigned and acknowledging write the same
COMMANDER_CHANGED timeline entry, which notifications tell as "commander changed".
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from console.service_accounts import is_service_account
from console.surface import current_surface
from console.texts import msg
from incidents import permissions as perms
from incidents.models import Incident, Severity, TimelineEvent, TimelineEventType
from incidents.selectors import incident_for_update
from incidents.texts import event_say, event_say_more

NO_COMMANDER = "no_commander"
# Resolving one of these with nobody in command is confirmed first: someone should
# own the decision that a serious incident is over.
COMMAND_EXPECTED = (Severity.SEV1, Severity.SEV2)


class NoCommander(DomainError):
    """Resolve refused: a SEV1/SEV2 incident nobody commands, not confirmed."""

    code = NO_COMMANDER


def commander_change(
    incident: Incident, *, actor: User, new: User | None, verb: str
) -> TimelineEvent:
    """Set the (locked) incident's commander and write the timeline entry. `verb`:
    "took", "took_by_ack" or "set" (incidents/texts.py)."""
    old = incident.commander
    incident.commander = new
    incident.save(update_fields=["commander", "updated_at"])
    old_name = old.get_username() if old else None
    new_name = new.get_username() if new else None
    nobody = msg("incidents.word.nobody")
    event = TimelineEvent(
        incident=incident,
        kind=TimelineEventType.COMMANDER_CHANGED,
        occurred_at=timezone.now(),
        actor=actor,
        source=current_surface(),
        payload={"from": old_name, "to": new_name},
    )
    said = msg(
        f"incidents.commander.{verb}",
        actor=actor.get_username(),
        to=new_name or nobody,
        **{"from": old_name or nobody},
    )
    event_say(event, said)
    event.save()
    return event


def command_on_acknowledge(incident: Incident, *, actor: User) -> TimelineEvent | None:
    """The first acknowledgement of an incident nobody commands makes that person the
    commander (a person who may take command; never a service account)."""
    if incident.commander_id is not None or is_service_account(actor):
        return None
    if not (actor.is_active and actor.has_perm(perms.TAKE_COMMAND)):
        return None
    return commander_change(incident, actor=actor, new=actor, verb="took_by_ack")


def no_commander_check(incident: Incident, event: TimelineEvent, *, confirm: bool) -> None:
    """Resolving a SEV1/SEV2 nobody commands: refused unless confirmed; the status
    event then says it was resolved with nobody in command."""
    if incident.commander_id is not None or incident.severity not in COMMAND_EXPECTED:
        return
    if not confirm:
        raise NoCommander(
            gettext_noop(
                "Incident #%(id)s is %(severity)s and nobody is in command. Take command "
                "first, or confirm that it is resolved with nobody in command "
                '("confirm_no_commander": true; it goes on the timeline).'
            ),
            params={"id": incident.pk, "severity": incident.severity},
        )
    event.payload = {**event.payload, "no_commander": True}
    event_say_more(event, msg("incidents.status.no_commander"))


@transaction.atomic
def incident_commander_set(*, incident_id: int, actor: User, commander_id: int | None) -> Incident:
    """Take command (anyone who may, when nobody holds it) or assign it (commanders)."""
    incident = incident_for_update(incident_id=incident_id)
    taking_free_seat = commander_id == actor.pk and incident.commander_id is None
    if taking_free_seat and actor.has_perm(perms.TAKE_COMMAND):
        pass
    else:
        require(actor, perms.ASSIGN_COMMANDER, gettext_lazy("assign the incident commander"))
    if commander_id == incident.commander_id:
        raise DomainError(
            gettext_noop("That person is already the incident commander."), code="unchanged"
        )
    new = None
    if commander_id is not None:
        new = get_user_model().objects.filter(pk=commander_id, is_active=True).first()
        if new is None:
            raise DomainError(
                gettext_noop("No active user with id %(id)s."),
                code="invalid",
                params={"id": commander_id},
            )
        if not new.has_perm(perms.TAKE_COMMAND):
            raise DomainError(
                gettext_noop("%(name)s has no responder role, so cannot command."),
                code="invalid",
                params={"name": new.get_username()},
            )
    verb = "took" if taking_free_seat else "set"
    commander_change(incident, actor=actor, new=new, verb=verb)
    return incident
