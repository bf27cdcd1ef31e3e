"""What people do to an incident: acknowledge, mitigate, resolve, reopen, notes (command:
command.py; the first acknowledgement takes command when nobody holds it).

Each service locks the incident row, checks the actor's permission and the state,
and writes the change and its timeline event in one transaction.

Mitigating or resolving an incident whose alerts still fire is refused with
`AlertsFiring` (code "alerts_firing", naming the alerts) unless the person confirms and
gives a reason; the timeline keeps both. Alertmanager's own "all resolved" (ingestion)
does not come through here and is not asked. Resolving a SEV1 or SEV2 that nobody
commands is refused with `NoCommander` (code "no_commander") unless confirmed.
"""

from collections.abc import Mapping

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise, lazy
from django.utils.translation import gettext_lazy, gettext_noop, ngettext

from console.errors import DomainError
from console.permissions import require
from console.surface import current_surface
from console.texts import msg
from incidents import permissions as perms
from incidents.models import (
    Alert,
    AlertStatus,
    Incident,
    IncidentStatus,
    TimelineEvent,
    TimelineEventType,
)
from incidents.selectors import incident_for_update
from incidents.services.command import command_on_acknowledge, no_commander_check
from incidents.texts import event_say_more
from incidents.transitions import apply_transition, status_word

NOTE_MAX_CHARS = 10_000
REASON_MAX_CHARS = 2_000
ALERTS_FIRING = "alerts_firing"
FIRING_NAMED = 5  # alerts named in the refusal and on the timeline; the rest are counted
_NAMING_LABELS = ("pod", "node", "lws", "namespace")  # the first one present tells alerts apart


class AlertsFiring(DomainError):
    """Mitigate or resolve refused: alerts still fire and the move was not confirmed with
    a reason. `alerts` names the first few firing alerts, `count` says how many fire."""

    code = ALERTS_FIRING

    def __init__(
        self,
        message: str,
        *,
        alerts: list[str],
        count: int,
        params: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message, params=params)
        self.alerts = alerts
        self.count = count


def _alert_words(alert: Alert) -> str:
    labels = alert.labels or {}
    for name in _NAMING_LABELS:
        if labels.get(name):
            return f"{alert.alertname} ({name}={labels[name]})"
    return alert.alertname


def _firing(incident: Incident) -> tuple[list[str], int]:
    """The first FIRING_NAMED firing alerts, in words, and how many fire."""
    firing = Alert.objects.filter(incident_id=incident.pk, status=AlertStatus.FIRING)
    count = firing.count()
    if not count:
        return [], 0
    newest = firing.order_by("-starts_at", "id").only("alertname", "labels")[:FIRING_NAMED]
    return [_alert_words(a) for a in newest], count


def _firing_text(names: list[str], count: int) -> str:
    """ "3 alerts still firing: a, b and 1 more", in the active language."""
    params = {"count": count, "names": ", ".join(names), "more": count - len(names)}
    if count > len(names):
        return (
            ngettext(
                "%(count)s alert still firing: %(names)s and %(more)s more",
                "%(count)s alerts still firing: %(names)s and %(more)s more",
                count,
            )
            % params
        )
    return (
        ngettext(
            "%(count)s alert still firing: %(names)s",
            "%(count)s alerts still firing: %(names)s",
            count,
        )
        % params
    )


# Lazy: English in the refusal's str() (the API), translated on the page that shows it.
_firing_words = lazy(_firing_text, str)

# What a refusal asks for when alerts still fire.
_ASK_CONFIRM = gettext_lazy("confirm and give a reason")
_ASK_REASON = gettext_lazy("give a reason with the confirmation")

# What a text field is, inside "The reason is empty." (lazy, like every refusal param).
TEXT_WORDS = {
    "reason": gettext_lazy("reason"),
    "note": gettext_lazy("note"),
    "comment": gettext_lazy("comment"),
    "message": gettext_lazy("message"),
}


def _clean_text(text: str, *, limit: int, what: str, required: bool) -> str:
    text = (text or "").strip()
    words = TEXT_WORDS.get(what, what)
    if required and not text:
        raise DomainError(
            gettext_noop("The %(what)s is empty."), code="invalid", params={"what": words}
        )
    if len(text) > limit:
        raise DomainError(
            gettext_noop("The %(what)s is longer than %(limit)s characters."),
            code="invalid",
            params={"what": words, "limit": limit},
        )
    return text


def _transition(
    *,
    incident_id: int,
    actor: User,
    to: str,
    perm: str,
    what: str | Promise,
    reason: str = "",
    confirm: bool = False,
    confirm_no_commander: bool = False,
) -> Incident:
    require(actor, perm, what)
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=False)
    incident = incident_for_update(incident_id=incident_id)
    transition, event = apply_transition(
        incident, to, at=timezone.now(), actor=actor, source=current_surface(), reason=reason
    )
    if to in (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED):
        names, count = _firing(incident)
        if count:
            _confirmed_while_firing(event, transition.verb, names, count, confirm, reason)
    if to == IncidentStatus.RESOLVED:
        no_commander_check(incident, event, confirm=confirm_no_commander)
    incident.save()
    event.save()
    if to == IncidentStatus.ACKNOWLEDGED:
        # After the status event, so the timeline reads "acknowledged", then "took command".
        command_on_acknowledge(incident, actor=actor)
    return incident


def _confirmed_while_firing(
    event: TimelineEvent, verb: str, names: list[str], count: int, confirm: bool, reason: str
) -> None:
    """Refuse the move unless confirmed with a reason; then the timeline event says so."""
    if not (confirm and reason):
        ask = _ASK_CONFIRM if not confirm else _ASK_REASON
        raise AlertsFiring(
            gettext_noop(
                "Incident #%(id)s has %(firing)s. To mark it %(verb)s anyway, %(ask)s "
                "(it goes on the timeline)."
            ),
            params={
                "id": event.incident_id,
                "firing": _firing_words(names, count),
                "verb": status_word(verb),
                "ask": ask,
            },
            alerts=names,
            count=count,
        )
    shown = ", ".join(names)
    if count > len(names):
        said = msg(
            "incidents.status.confirmed_firing_more",
            count=count,
            names=shown,
            more=count - len(names),
        )
    else:
        said = msg("incidents.status.confirmed_firing", count=count, names=shown)
    event.payload = {**event.payload, "confirmed_firing": {"count": count, "alerts": names}}
    event_say_more(event, said)


@transaction.atomic
def incident_acknowledge(*, incident_id: int, actor: User) -> Incident:
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.ACKNOWLEDGED,
        perm=perms.ACKNOWLEDGE,
        what=gettext_lazy("acknowledge incidents"),
    )


@transaction.atomic
def incident_mitigate(
    *, incident_id: int, actor: User, reason: str = "", confirm: bool = False
) -> Incident:
    """AlertsFiring while alerts fire, unless `confirm` and a `reason` are given."""
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.MITIGATED,
        perm=perms.MITIGATE,
        what=gettext_lazy("mark incidents mitigated"),
        reason=reason,
        confirm=confirm,
    )


@transaction.atomic
def incident_resolve(
    *,
    incident_id: int,
    actor: User,
    reason: str = "",
    confirm: bool = False,
    confirm_no_commander: bool = False,
) -> Incident:
    """AlertsFiring while alerts fire, unless `confirm` and a `reason` are given;
    NoCommander for a SEV1/SEV2 nobody commands, unless `confirm_no_commander`."""
    return _transition(
        incident_id=incident_id,
        actor=actor,
        to=IncidentStatus.RESOLVED,
        perm=perms.RESOLVE,
        what=gettext_lazy("resolve incidents"),
        reason=reason,
        confirm=confirm,
        confirm_no_commander=confirm_no_commander,
    )


@transaction.atomic
def incident_reopen(*, incident_id: int, actor: User, reason: str) -> Incident:
    require(actor, perms.REOPEN, gettext_lazy("reopen incidents"))
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=True)
    incident = incident_for_update(incident_id=incident_id)
    if incident.status != IncidentStatus.RESOLVED:
        raise DomainError(
            gettext_noop("Incident #%(id)s is %(status)s, not resolved."),
            params={"id": incident_id, "status": status_word(incident.status)},
        )
    conflict = (
        Incident.objects.filter(grouping_key=incident.grouping_key)
        .exclude(status=IncidentStatus.RESOLVED)
        .exclude(pk=incident.pk)
        .first()
    )
    if conflict is not None:
        raise DomainError(
            gettext_noop(
                "Incident #%(id)s is already open for the same alert group; "
                "work there instead of reopening this one."
            ),
            code="conflict",
            params={"id": conflict.pk},
        )
    _, event = apply_transition(
        incident, IncidentStatus.TRIGGERED, at=timezone.now(), actor=actor, reason=reason
    )
    incident.save()
    event.save()
    return incident


@transaction.atomic
def incident_note_add(*, incident_id: int, actor: User, text: str) -> TimelineEvent:
    require(actor, perms.ADD_NOTE, gettext_lazy("add notes"))
    text = _clean_text(text, limit=NOTE_MAX_CHARS, what="note", required=True)
    incident = incident_for_update(incident_id=incident_id)
    return TimelineEvent.objects.create(
        incident=incident,
        kind=TimelineEventType.NOTE,
        occurred_at=timezone.now(),
        actor=actor,
        source=current_surface(),
        message=text,
    )
