"""Silence an incident's alerts in Alertmanager, and expire such a silence early
(commander role: incidents.silence_alerts).

Nothing half-done: Alertmanager is asked first, and the timeline entry is written only
once it said yes, so the timeline never shows a silence that does not exist. These
services are not one `@transaction.atomic`: the call to Alertmanager (up to
ALERTMANAGER_TIMEOUT_SECONDS) must not hold the incident's row lock, and a silence whose
timeline entry could not be written is expired again after the rollback.
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
from incidents import permissions as perms
from incidents import silences
from incidents.models import Alert, Incident, TimelineEventType
from incidents.selectors import incident_for_update, incident_get
from incidents.services.lifecycle import _clean_text
from incidents.services.timeline import incident_event_record
from incidents.silences import IncidentSilence, Matcher, Silence

log = logging.getLogger(__name__)

DEFAULT_MINUTES = 120
MIN_MINUTES = 5
# Long enough for a weekend; a longer silence hides the incident's next occurrence.
MAX_MINUTES = 72 * 60
COMMENT_MAX_CHARS = 1_000
_MATCHERS_SHOWN = 600  # characters of matchers in a timeline message (all are in payload)


def default_comment(incident: Incident, actor: User) -> str:
    return f"#{incident.pk} {incident.title} - silenced from the console by {actor.get_username()}"


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


def _utc(at: datetime) -> str:
    return f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def alert_matchers(alert: Alert) -> list[Matcher]:
    """The alert's exact labels, each an equality matcher."""
    return [Matcher.equal(k, str(v)) for k, v in sorted((alert.labels or {}).items()) if v]


def group_matchers(*, incident_id: int) -> list[Matcher]:
    """The labels every alert of the incident shares (Alertmanager's commonLabels)."""
    common: dict[str, str] | None = None
    rows = Alert.objects.filter(incident_id=incident_id).values_list("labels", flat=True)
    for labels in rows.iterator(chunk_size=500):
        items = {str(k): str(v) for k, v in (labels or {}).items()}
        common = items if common is None else {k: v for k, v in common.items() if items.get(k) == v}
        if not common:
            break
    return [Matcher.equal(k, v) for k, v in sorted((common or {}).items()) if v]


def _scope(*, incident_id: int, alert_id: int | None) -> tuple[list[Matcher], str, str]:
    """(matchers, scope, words for the timeline)."""
    if alert_id is None:
        matchers = group_matchers(incident_id=incident_id)
        if not matchers:
            raise DomainError(
                gettext_noop(
                    "Incident #%(id)s has no alert label that all its alerts share, so "
                    "there is no group to silence; silence its alerts one by one."
                ),
                code="invalid",
                params={"id": incident_id},
            )
        return matchers, "group", "the whole group"
    alert = Alert.objects.filter(pk=alert_id, incident_id=incident_id).first()
    if alert is None:
        raise DomainError(
            gettext_noop("Alert #%(alert)s is not one of incident #%(incident)s's alerts."),
            code="invalid",
            params={"alert": alert_id, "incident": incident_id},
        )
    return alert_matchers(alert), "alert", f"alert {alert.alertname}"


@transaction.atomic
def _record(
    *, incident_id: int, actor: User, kind: str, message: str, payload: dict[str, Any]
) -> None:
    incident_for_update(incident_id=incident_id)  # keeps one incident's events in order
    incident_event_record(
        incident_id=incident_id,
        kind=kind,
        message=message,
        payload=payload,
        actor=actor,
        source="console",
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
) -> IncidentSilence:
    """Silence one alert of the incident (its exact labels) or, without `alert_id`, the
    whole group (the labels its alerts share) for `duration_minutes`. The comment
    defaults to "#12 <title> - silenced from the console by <user>"; createdBy is the
    user. AlertmanagerError when Alertmanager cannot be asked or refuses."""
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
    matchers, scope, scope_words = _scope(incident_id=incident.pk, alert_id=alert_id)
    starts_at = timezone.now()
    ends_at = starts_at + timedelta(minutes=duration_minutes)
    silence_id = silences.silence_post(
        matchers=matchers,
        starts_at=starts_at,
        ends_at=ends_at,
        created_by=actor.get_username(),
        comment=comment,
    )
    silence = Silence(
        id=silence_id,
        state="active",
        matchers=tuple(matchers),
        starts_at=starts_at,
        ends_at=ends_at,
        created_by=actor.get_username(),
        comment=comment,
    )
    message = (
        f"Silenced {scope_words} in Alertmanager for {duration_text(duration_minutes)}, "
        f"until {_utc(ends_at)}: {_matchers_text(silence)}. Silence {silence_id}."
    )
    payload = {
        "silence_id": silence_id,
        "scope": scope,
        "alert_id": alert_id,
        "matchers": [m.as_json() for m in matchers],
        "starts_at": starts_at.isoformat(),
        "ends_at": ends_at.isoformat(),
        "duration_minutes": duration_minutes,
        "comment": comment,
    }
    try:
        _record(
            incident_id=incident.pk,
            actor=actor,
            kind=TimelineEventType.SILENCE_CREATED,
            message=message,
            payload=payload,
        )
    except BaseException:
        _take_back(silence_id)
        raise
    matched = sum(
        1
        for labels in silences.incident_label_sets(incident_id=incident.pk)
        if silence.matches(labels)
    )
    return IncidentSilence(silence=silence, created_here=True, alerts_matched=matched)


def _take_back(silence_id: str) -> None:
    """Expire a silence whose timeline entry was not written, so none is left behind."""
    try:
        silences.silence_delete(silence_id)
    except silences.AlertmanagerError:
        log.exception(
            "Silence %s was created but not recorded, and could not be expired.", silence_id
        )


def incident_silence_expire(*, incident_id: int, actor: User, silence_id: str) -> IncidentSilence:
    """End one of the incident's silences now. NotFound for a silence Alertmanager does
    not have or that covers none of the incident's alerts (and was not created from it)."""
    require(actor, perms.SILENCE, gettext_lazy("expire silences"))
    incident = incident_get(incident_id=incident_id)
    try:
        silence_id = str(uuid.UUID(str(silence_id)))
    except ValueError:
        raise NotFound(
            gettext_noop("%(id)s is not a silence id."), params={"id": repr(str(silence_id)[:60])}
        ) from None
    silence = silences.silence_fetch(silence_id)
    mine = None
    if silence is not None:
        mine = silences.covering(
            silence,
            label_sets=silences.incident_label_sets(incident_id=incident.pk),
            created_ids=silences.incident_silence_ids(incident_id=incident.pk),
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
    silences.silence_delete(silence_id)
    now = timezone.now()
    _record(
        incident_id=incident.pk,
        actor=actor,
        kind=TimelineEventType.SILENCE_EXPIRED,
        message=(
            f"Expired silence {silence_id} early (it ran until {_utc(silence.ends_at)}, "
            f"created by {silence.created_by or 'nobody named'}): {_matchers_text(silence)}."
        ),
        payload={
            "silence_id": silence_id,
            "was_ends_at": silence.ends_at.isoformat(),
            "created_by": silence.created_by,
            "matchers": [m.as_json() for m in silence.matchers],
        },
    )
    return replace(mine, silence=silences.expired_copy(silence, at=now))
