"""Timeline writes other than lifecycle moves: the incident's runbook, and a generic
append that higher apps (runbooks, later postmortems) use for their own event kinds.

`incidents` imports neither of those apps; they call in here instead. Apps that act on
what lands on the timeline (notifications) connect to `timeline_appended`
(incidents/timeline_signal.py) instead.
"""

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from console.surface import current_surface
from console.texts import Msg, msg
from incidents import permissions as perms
from incidents.models import Incident, TimelineEvent, TimelineEventType
from incidents.rules import RUNBOOK_SLUG_RULE, is_runbook_slug
from incidents.selectors import incident_for_update
from incidents.services.lifecycle import REASON_MAX_CHARS, _clean_text
from incidents.texts import event_say
from incidents.timeline_kinds import timeline_kind_known
from incidents.timeline_signal import timeline_announce

MESSAGE_MAX_CHARS = 2_000


@transaction.atomic
def incident_runbook_set(*, incident_id: int, actor: User, slug: str, reason: str = "") -> Incident:
    """Point the incident at another runbook ("" clears it: matching by alert labels again).

    The slug's format is checked here; whether the catalogue has it is the caller's
    business (runbooks.services.runbook_change), since incidents does not know runbooks.
    """
    require(actor, perms.MITIGATE, gettext_lazy("change the incident's runbook"))
    slug = (slug or "").strip()
    if slug and not is_runbook_slug(slug):
        raise DomainError(
            gettext_noop("%(slug)s is not a runbook name (%(rule)s)."),
            code="invalid",
            params={"slug": repr(slug[:120]), "rule": gettext_lazy(RUNBOOK_SLUG_RULE)},
        )
    reason = _clean_text(reason, limit=REASON_MAX_CHARS, what="reason", required=False)
    incident = incident_for_update(incident_id=incident_id)
    old = incident.runbook
    if old == slug:
        if slug:
            raise DomainError(
                gettext_noop("The runbook is already %(slug)s."),
                code="unchanged",
                params={"slug": repr(slug)},
            )
        raise DomainError(gettext_noop("No runbook is set."), code="unchanged")
    incident.runbook = slug
    incident.save(update_fields=["runbook", "updated_at"])
    by_alert = msg("incidents.runbook.matched_by_alert")
    params: dict[str, Any] = {"from": old or by_alert, "to": slug or by_alert}
    if reason:
        said = msg("incidents.runbook.changed.reason", reason=reason, **params)
    else:
        said = msg("incidents.runbook.changed", **params)
    # Not incident_event_record: a reason of REASON_MAX_CHARS makes a longer line.
    event = TimelineEvent(
        incident=incident,
        kind=TimelineEventType.RUNBOOK_CHANGED,
        occurred_at=timezone.now(),
        actor=actor,
        source=current_surface(),
        payload={"from": old, "to": slug},
    )
    event_say(event, said)
    event.save()
    return incident


@transaction.atomic
def incident_event_add(
    *,
    incident_id: int,
    actor: User,
    kind: str,
    message: str | Msg,
    payload: dict[str, Any],
    perm: str,
    what: str | Promise = "do this",
) -> TimelineEvent:
    """Append one event of a known kind, if the actor holds `perm` (`what` words the
    refusal: "Your role does not allow you to <what>.")."""
    require(actor, perm, what)
    # NotFound for a missing incident; the lock keeps one incident's events in order.
    incident_for_update(incident_id=incident_id)
    return incident_event_record(
        incident_id=incident_id,
        kind=kind,
        message=message,
        payload=payload,
        actor=actor,
        source=current_surface(),
    )


def incident_event_record(
    *,
    incident_id: int,
    kind: str,
    message: str | Msg,
    payload: dict[str, Any],
    actor: User | None = None,
    source: str = "system",
) -> TimelineEvent:
    """Append one event on behalf of a caller that has already checked permissions (a
    higher app's service, or a worker acting for a run someone was allowed to request).
    Runs inside the caller's transaction so the event and the change commit together.
    `kind` must be registered (incidents.timeline_kinds) by the app that writes it.
    A `Msg` message is stored as its English words and, in `payload["msg"]`, its parts,
    so every reader sees it in their language (incidents/timeline_text.py)."""
    event = _event(incident_id, kind, message, payload, actor, source)
    event.save()  # announces itself (post_save above)
    return event


def incident_events_record(
    *, events: Sequence[tuple[int, str, str | Msg, dict[str, Any]]], source: str = "system"
) -> list[TimelineEvent]:
    """incident_event_record for many (incident id, kind, message, payload) at once, in
    one INSERT: a worker posting a batch (auto-triage) pays one round trip, not one each.
    The caller holds the incidents' row locks, as for one event."""
    built = [_event(pk, kind, text, payload, None, source) for pk, kind, text, payload in events]
    created = TimelineEvent.objects.bulk_create(built)
    timeline_announce(created)  # bulk_create sends no post_save
    return created


def _event(
    incident_id: int,
    kind: str,
    message: str | Msg,
    payload: dict[str, Any],
    actor: User | None,
    source: str,
) -> TimelineEvent:
    if not timeline_kind_known(kind):
        raise DomainError(
            gettext_noop("%(kind)s is not a timeline event kind."),
            code="invalid",
            params={"kind": repr(kind)},
        )
    payload = dict(payload or {})
    if isinstance(message, Msg):
        payload["msg"] = message.stored
        message = message.english
    message = _clean_text(message, limit=MESSAGE_MAX_CHARS, what="message", required=True)
    return TimelineEvent(
        incident_id=incident_id,
        kind=kind,
        occurred_at=timezone.now(),
        actor=actor,
        source=source,
        message=message,
        payload=payload,
    )
