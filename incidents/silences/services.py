"""Silence an incident's alerts in Alertmanager, and expire such a silence early
(commander role: incidents.silence_alerts).

Nothing half-done: Alertmanager is asked first, and the timeline entry is written only
once it said yes, so the timeline never shows a silence that does not exist. These
services are not one `@transaction.atomic`: the call to Alertmanager (up to
ALERTMANAGER_TIMEOUT_SECONDS) must not hold the incident's row lock, and a silence whose
timeline entry could not be written is expired again after the rollback.

A silence never reaches beyond its incident (incidents/silences/scope.py): a group is
silenced by alertname and namespace, one that would cover another open incident's firing
alerts is refused, and expiring one the console did not make from this incident, or one
broader than it, needs `confirm` (recorded on the timeline entry).
"""

import logging
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from console.errors import DomainError, NotFound
from console.permissions import require
from console.surface import current_surface
from console.texts import Msg, msg
from incidents import permissions as perms
from incidents.models import Alert, TimelineEventType
from incidents.selectors import incident_for_update, incident_get
from incidents.services.lifecycle import _clean_text
from incidents.services.timeline import incident_event_record
from incidents.silences import client as silences
from incidents.silences import scope as scope_of
from incidents.silences.client import IncidentSilence, Matcher, Silence
from incidents.silences.comments import default_comment

log = logging.getLogger(__name__)

DEFAULT_MINUTES = 120
MIN_MINUTES = 5
# Long enough for a weekend; a longer silence hides the incident's next occurrence.
MAX_MINUTES = 72 * 60
COMMENT_MAX_CHARS = 1_000
_MATCHERS_SHOWN = 600  # characters of matchers in a timeline message (all are in payload)


def duration_text(minutes: int) -> str:
    """120 -> "2h", 90 -> "1h 30m", 45 -> "45m"."""
    hours, rest = divmod(minutes, 60)
    return " ".join(p for p in (f"{hours}h" if hours else "", f"{rest}m" if rest else "") if p)


def duration_words(minutes: int) -> str:
    """duration_text in the active language (pages, refusals): "2小时", "1小时30分"."""
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return gettext("%(hours)sh %(minutes)sm") % {"hours": hours, "minutes": rest}
    if hours:
        return gettext("%(hours)sh") % {"hours": hours}
    return gettext("%(minutes)sm") % {"minutes": rest}


_duration_lazy = lazy(duration_words, str)


def duration_msg(minutes: int) -> Msg:
    """duration_text as a phrase of a stored text (the same words as duration_words)."""
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return msg("incidents.duration.hm", hours=hours, minutes=rest)
    if hours:
        return msg("incidents.duration.h", hours=hours)
    return msg("incidents.duration.m", minutes=rest)


def _utc(at: datetime) -> str:
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def alert_matchers(alert: Alert) -> list[Matcher]:
    """The alert's exact labels, each an equality matcher; alertname and namespace even
    when absent (as "", which matches only alerts without them)."""
    labels = {str(k): str(v) for k, v in (alert.labels or {}).items()}
    labels = {**dict.fromkeys(scope_of.SCOPE_LABELS, ""), **labels}
    return [
        Matcher.equal(k, v) for k, v in sorted(labels.items()) if v or k in scope_of.SCOPE_LABELS
    ]


def _scope(*, incident_id: int, alert_id: int | None) -> tuple[list[tuple[Matcher, ...]], str, Msg]:
    """(the silences to create, each its matchers; scope; words for the timeline)."""
    if alert_id is None:
        found = scope_of.group_silences(scope_of.incident_scope(incident_id=incident_id))
        if not found:
            raise DomainError(
                gettext_noop("Incident #%(id)s has no alerts, so there is nothing to silence."),
                code="invalid",
                params={"id": incident_id},
            )
        if len(found) > scope_of.MAX_GROUP_SILENCES:
            raise DomainError(
                gettext_noop(
                    "Incident #%(id)s's alerts span %(count)s different sets of alert "
                    "names and namespaces; a group silence covers at most %(max)s. "
                    "Silence its alerts one by one."
                ),
                code="invalid",
                params={
                    "id": incident_id,
                    "count": len(found),
                    "max": scope_of.MAX_GROUP_SILENCES,
                },
            )
        return found, "group", msg("incidents.silence.scope.group")
    alert = Alert.objects.filter(pk=alert_id, incident_id=incident_id).first()
    if alert is None:
        raise DomainError(
            gettext_noop("Alert #%(alert)s is not one of incident #%(incident)s's alerts."),
            code="invalid",
            params={"alert": alert_id, "incident": incident_id},
        )
    return (
        [tuple(alert_matchers(alert))],
        "alert",
        msg("incidents.silence.scope.alert", name=alert.alertname),
    )


@transaction.atomic
def _record(
    *, incident_id: int, actor: User, kind: str, entries: list[tuple[Msg, dict[str, Any]]]
) -> None:
    """Write the (message, payload) entries in one short transaction: all or none."""
    incident_for_update(incident_id=incident_id)  # keeps one incident's events in order
    for message, payload in entries:
        incident_event_record(
            incident_id=incident_id,
            kind=kind,
            message=message,
            payload=payload,
            actor=actor,
            source=current_surface(),
        )


def _matchers_text(silence: Silence) -> str:
    text = silence.matchers_text()
    return text if len(text) <= _MATCHERS_SHOWN else text[: _MATCHERS_SHOWN - 1] + "…"


def incident_silence_create(
    *,
    incident_id: int,
    actor: User,
    alert_id: int | None = None,
    duration_minutes: int = DEFAULT_MINUTES,
    comment: str = "",
) -> list[IncidentSilence]:
    """Silence one alert of the incident (its exact labels) or, without `alert_id`, the
    whole group (by alertname and namespace plus the labels its alerts share: one
    silence per set of alertnames firing in the same namespaces, see
    incidents/silences/scope.py) for `duration_minutes`. Refused (CoversOtherIncidents)
    when a silence would also match another open incident's firing alerts. The comment
    defaults to "#12 <title> - silenced from the console by <user>"; createdBy is the
    user. AlertmanagerError when Alertmanager cannot be asked or refuses; then no
    silence is left behind."""
    require(actor, perms.SILENCE, gettext_lazy("silence alerts"))
    incident = incident_get(incident_id=incident_id)
    if not MIN_MINUTES <= duration_minutes <= MAX_MINUTES:
        raise DomainError(
            gettext_noop(
                "A silence lasts from %(min)s minutes to %(max)s; "
                "%(minutes)s minutes is outside that."
            ),
            code="invalid",
            params={
                "min": MIN_MINUTES,
                "max": _duration_lazy(MAX_MINUTES),
                "minutes": duration_minutes,
            },
        )
    comment = _clean_text(comment, limit=COMMENT_MAX_CHARS, what="comment", required=False)
    comment = comment or default_comment(incident, actor)
    matcher_sets, scope, scope_words = _scope(incident_id=incident.pk, alert_id=alert_id)
    others, more = scope_of.other_incidents_covered(matcher_sets, incident_id=incident.pk)
    if others:
        raise scope_of.CoversOtherIncidents(incident_id=incident.pk, others=others, more=more)
    starts_at = timezone.now()
    ends_at = starts_at + timedelta(minutes=duration_minutes)
    made: list[Silence] = []
    try:  # no transaction is open here: Alertmanager is asked, then the timeline written
        for matchers in matcher_sets:
            silence_id = silences.silence_post(
                matchers=list(matchers),
                starts_at=starts_at,
                ends_at=ends_at,
                created_by=actor.get_username(),
                comment=comment,
            )
            made.append(
                Silence(
                    id=silence_id,
                    state="active",
                    matchers=matchers,
                    starts_at=starts_at,
                    ends_at=ends_at,
                    created_by=actor.get_username(),
                    comment=comment,
                )
            )
        entries = [
            _created_entry(
                silence,
                scope=scope,
                scope_words=scope_words
                if len(made) == 1
                else msg("incidents.silence.scope.part", scope=scope_words, n=n, total=len(made)),
                alert_id=alert_id,
                duration_minutes=duration_minutes,
            )
            for n, silence in enumerate(made, start=1)
        ]
        _record(
            incident_id=incident.pk,
            actor=actor,
            kind=TimelineEventType.SILENCE_CREATED,
            entries=entries,
        )
    except BaseException:
        for silence in made:  # all of the group or none of it
            _take_back(silence.id)
        raise
    label_sets = silences.incident_label_sets(incident_id=incident.pk)
    return [
        IncidentSilence(
            silence=silence,
            created_here=True,
            alerts_matched=sum(1 for labels in label_sets if silence.matches(labels)),
        )
        for silence in made
    ]


def _created_entry(
    silence: Silence, *, scope: str, scope_words: Msg, alert_id: int | None, duration_minutes: int
) -> tuple[Msg, dict[str, Any]]:
    message = msg(
        "incidents.silence.created",
        scope=scope_words,
        duration=duration_msg(duration_minutes),
        until=_utc(silence.ends_at),
        matchers=_matchers_text(silence),
        id=silence.id,
    )
    payload = {
        "silence_id": silence.id,
        "scope": scope,
        "alert_id": alert_id,
        "matchers": [m.as_json() for m in silence.matchers],
        "starts_at": silence.starts_at.isoformat(),
        "ends_at": silence.ends_at.isoformat(),
        "duration_minutes": duration_minutes,
        "created_by": silence.created_by,
        "comment": silence.comment,
    }
    return message, payload


def _take_back(silence_id: str) -> None:
    """Expire a silence whose timeline entry was not written, so none is left behind."""
    try:
        silences.silence_delete(silence_id)
    except silences.AlertmanagerError:
        log.exception(
            "Silence %s was created but not recorded, and could not be expired.", silence_id
        )


def _confirmation_reasons(
    silence: Silence, *, incident_id: int, origins: dict[str, tuple[str, str]]
) -> list[str]:
    """Why expiring the silence needs a confirmation: it is not one the console made
    from this incident (its id is not on the timeline, or its author or comment changed
    since), or it reaches beyond the incident's alerts."""
    reasons = []
    origin = origins.get(silence.id)
    if origin is None or (silence.created_by, silence.comment) != origin:
        reasons.append(scope_of.NOT_CREATED_HERE)
    scope = scope_of.incident_scope(incident_id=incident_id)
    if not scope_of.within(silence.matchers, scope) or scope_of.covers_another_incident(
        silence.matchers, incident_id=incident_id
    ):
        reasons.append(scope_of.BROADER)
    return reasons


def incident_silence_expire(
    *, incident_id: int, actor: User, silence_id: str, confirm: bool = False
) -> IncidentSilence:
    """End one of the incident's silences now. NotFound for a silence Alertmanager does
    not have or that covers none of the incident's alerts (and was not created from it).
    ConfirmationRequired, unless `confirm`, for one the console did not create from this
    incident or one that matches alerts outside it; the timeline says it was confirmed."""
    require(actor, perms.SILENCE, gettext_lazy("expire silences"))
    incident = incident_get(incident_id=incident_id)
    try:
        silence_id = str(uuid.UUID(str(silence_id)))
    except ValueError:
        raise NotFound(
            gettext_noop("%(id)s is not a silence id."), params={"id": repr(str(silence_id)[:60])}
        ) from None
    silence = silences.silence_fetch(silence_id)
    # The silences made from this incident, read once: which are its own, and as made.
    origins = silences.incident_silence_origins(incident_id=incident.pk)
    mine = None
    if silence is not None:
        mine = silences.covering(
            silence,
            label_sets=silences.incident_label_sets(incident_id=incident.pk),
            created_ids=set(origins),
        )
    if silence is None or mine is None:
        raise NotFound(
            gettext_noop("Silence %(silence)s is not one of incident #%(incident)s's silences."),
            params={"silence": silence_id, "incident": incident.pk},
        )
    if not silence.is_active:
        raise DomainError(
            gettext_noop("Silence %(id)s has already expired."),
            code="unchanged",
            params={"id": silence_id},
        )
    reasons = _confirmation_reasons(silence, incident_id=incident.pk, origins=origins)
    if reasons and not confirm:
        raise scope_of.ConfirmationRequired(silence=silence, reasons=reasons)
    silences.silence_delete(silence_id)
    now = timezone.now()
    said = msg(
        "incidents.silence.expired",
        id=silence_id,
        until=_utc(silence.ends_at),
        by=silence.created_by or msg("incidents.silence.nobody_named"),
        matchers=_matchers_text(silence),
    )
    if reasons:
        said += _confirmed(actor.get_username(), reasons)
    entry = (
        said,
        {
            "silence_id": silence_id,
            "was_ends_at": silence.ends_at.isoformat(),
            "created_by": silence.created_by,
            "comment": silence.comment,
            "matchers": [m.as_json() for m in silence.matchers],
            "confirmed": bool(reasons),
            "confirmed_because": reasons,
        },
    )
    _record(
        incident_id=incident.pk,
        actor=actor,
        kind=TimelineEventType.SILENCE_EXPIRED,
        entries=[entry],
    )
    return replace(mine, silence=silences.expired_copy(silence, at=now))


# Why expiring needed a confirmation, as the timeline says it (incidents/texts.py).
_REASON_IDS = {
    scope_of.NOT_CREATED_HERE: "incidents.silence.not_created_here",
    scope_of.BROADER: "incidents.silence.broader",
}


def _confirmed(actor: str, reasons: list[str]) -> Msg:
    words = [msg(_REASON_IDS[r]) for r in reasons]
    if len(words) == 1:
        return msg("incidents.silence.confirmed", actor=actor, reason=words[0])
    return msg("incidents.silence.confirmed_both", actor=actor, first=words[0], second=words[1])
