"""Alertmanager silences for an incident's alerts: a small client for Alertmanager's v2
API (`/api/v2/silences`, `/api/v2/silence/{id}`) and the read of which silences cover an
incident.

Every call has an overall deadline (settings.ALERTMANAGER_TIMEOUT_SECONDS, through
console.outgoing.service_request), and every failure becomes `AlertmanagerError` with a
message that names Alertmanager and the reason
("Alertmanager at http://127.0.0.1:9093 did not answer in 3 s"): code
"alertmanager_unavailable" when it could not be asked (the API answers 503),
"alertmanager_refused" when it said no (a 4xx from Alertmanager: the API answers 409).

An incident's silences are the active or pending ones that the console created from it
(their ids are on its timeline) or whose matchers match the labels of one of its alerts,
by Alertmanager's own rules: every matcher must match, a missing label is the empty
string, and a regex must match the whole value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

import requests
from django.conf import settings
from django.utils.functional import Promise, lazy
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from console.errors import DomainError
from console.outgoing import service_request
from incidents.ingest.parse import PayloadError, parse_rfc3339
from incidents.models import Alert, TimelineEvent, TimelineEventType

UNAVAILABLE = "alertmanager_unavailable"
REFUSED = "alertmanager_refused"
ACTIVE_STATES = ("active", "pending")
# Label sets compared against each silence; an incident with more distinct alerts is a
# storm, and a silence covering none of the newest ones is not what a responder wants.
MAX_LABEL_SETS = 2000
_MAX_ERROR_CHARS = 300


class AlertmanagerError(DomainError):
    """Alertmanager could not be asked, or refused; the message says which and why."""

    code = UNAVAILABLE


@dataclass(frozen=True)
class Matcher:
    name: str
    value: str
    is_regex: bool = False
    is_equal: bool = True

    @classmethod
    def equal(cls, name: str, value: str) -> Matcher:
        return cls(name=name, value=value)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "isRegex": self.is_regex,
            "isEqual": self.is_equal,
        }

    def matches(self, labels: dict[str, str]) -> bool:
        value = labels.get(self.name, "")
        if self.is_regex:
            pattern = _anchored(self.value)
            hit = pattern is not None and pattern.fullmatch(value) is not None
        else:
            hit = value == self.value
        return hit == self.is_equal

    def __str__(self) -> str:
        op = {(False, True): "=", (False, False): "!=", (True, True): "=~", (True, False): "!~"}
        return f'{self.name}{op[(self.is_regex, self.is_equal)]}"{self.value}"'


@lru_cache(maxsize=512)
def _anchored(value: str) -> re.Pattern[str] | None:
    # Alertmanager anchors every regex (^(?:...)$); one Python cannot compile matches nothing.
    try:
        return re.compile(f"(?:{value})")
    except re.error:
        return None


@dataclass(frozen=True)
class Silence:
    id: str
    state: str  # active | pending | expired
    matchers: tuple[Matcher, ...]
    starts_at: datetime
    ends_at: datetime
    created_by: str
    comment: str

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_STATES

    def matches(self, labels: dict[str, str]) -> bool:
        return bool(self.matchers) and all(m.matches(labels) for m in self.matchers)

    def matchers_text(self) -> str:
        return ", ".join(str(m) for m in self.matchers)


@dataclass(frozen=True)
class IncidentSilence:
    """A silence as the incident page and the API show it."""

    silence: Silence
    created_here: bool  # the console created it from this incident
    alerts_matched: int  # how many of the incident's alerts it covers


# --- the HTTP client --------------------------------------------------------------------
def base_url() -> str:
    return str(settings.ALERTMANAGER_URL).rstrip("/")


def _call(method: str, path: str, *, base: str = "", **kwargs: Any) -> requests.Response:
    """One call to Alertmanager (`base`: one replica's URL, else ALERTMANAGER_URL)."""
    url, timeout = base.rstrip("/") or base_url(), float(settings.ALERTMANAGER_TIMEOUT_SECONDS)
    try:
        # The timeout bounds the whole call (connect, send, every read), not each read.
        return service_request(method, url + path, deadline=timeout, **kwargs)
    except requests.Timeout as exc:  # DeadlineExceeded is one
        raise AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s did not answer in %(timeout)s s."),
            params={"url": url, "timeout": f"{timeout:g}"},
        ) from exc
    except requests.ConnectionError as exc:
        if "refused" in str(exc).lower():
            raise AlertmanagerError(
                gettext_noop("Alertmanager at %(url)s refused the connection."),
                params={"url": url},
            ) from exc
        raise AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s could not be reached: %(error)s"),
            params={"url": url, "error": exc},
        ) from exc
    except requests.RequestException as exc:
        raise AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s could not be asked: %(error)s"),
            params={"url": url, "error": exc},
        ) from exc


def _words(message: str, **params: object) -> str:
    return gettext(message) % params if params else gettext(message)


# What was asked of Alertmanager, lazy: English in the error's str(), translated on pages.
_doing = lazy(_words, str)


def _failed(response: requests.Response, what: str | Promise) -> AlertmanagerError:
    """The error for an answer other than the one expected, with Alertmanager's words."""
    text = response.text.strip().strip('"')[:_MAX_ERROR_CHARS] or gettext_lazy("no message")
    params = {"url": base_url(), "what": what, "status": response.status_code, "text": text}
    if 400 <= response.status_code < 500:
        return AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s refused to %(what)s (%(status)s): %(text)s"),
            code=REFUSED,
            params=params,
        )
    return AlertmanagerError(
        gettext_noop("Alertmanager at %(url)s could not %(what)s (%(status)s): %(text)s"),
        params=params,
    )


def _json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise AlertmanagerError(
            gettext_noop(
                "Alertmanager at %(url)s answered %(status)s with a body that "
                "is not JSON; is ALERTMANAGER_URL pointing at Alertmanager?"
            ),
            params={"url": base_url(), "status": response.status_code},
        ) from None


def _parse_silence(raw: Any) -> Silence:
    try:
        matchers = tuple(
            Matcher(
                name=str(m["name"]),
                value=str(m["value"]),
                is_regex=bool(m.get("isRegex", False)),
                is_equal=bool(m.get("isEqual", True)),
            )
            for m in raw["matchers"]
        )
        return Silence(
            id=str(raw["id"]),
            state=str(raw["status"]["state"]),
            matchers=matchers,
            starts_at=parse_rfc3339(raw["startsAt"], "startsAt"),
            ends_at=parse_rfc3339(raw["endsAt"], "endsAt"),
            created_by=str(raw.get("createdBy", "")),
            comment=str(raw.get("comment", "")),
        )
    except (KeyError, TypeError, AttributeError, PayloadError) as exc:
        raise AlertmanagerError(
            gettext_noop(
                "Alertmanager at %(url)s answered a silence its v2 API does not "
                "describe (%(error)s)."
            ),
            params={"url": base_url(), "error": f"{exc!s:.100}"},
        ) from None


def silences_fetch() -> list[Silence]:
    """Every silence Alertmanager keeps (expired ones too, for its retention)."""
    response = _call("GET", "/api/v2/silences")
    if response.status_code != 200:
        raise _failed(response, _doing(gettext_noop("list silences")))
    body = _json(response)
    if not isinstance(body, list):
        raise AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s answered a list that is not one."),
            params={"url": base_url()},
        )
    return [_parse_silence(raw) for raw in body]


def silence_fetch(silence_id: str) -> Silence | None:
    """One silence, or None when Alertmanager has none with this id."""
    response = _call("GET", f"/api/v2/silence/{silence_id}")
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise _failed(response, _doing(gettext_noop("read silence %(id)s"), id=silence_id))
    return _parse_silence(_json(response))


def silence_post(
    *,
    matchers: list[Matcher],
    starts_at: datetime,
    ends_at: datetime,
    created_by: str,
    comment: str,
) -> str:
    """Create a silence; its id."""
    body = {
        "matchers": [m.as_json() for m in matchers],
        "startsAt": starts_at.isoformat(),
        "endsAt": ends_at.isoformat(),
        "createdBy": created_by,
        "comment": comment,
    }
    response = _call("POST", "/api/v2/silences", json=body)
    if response.status_code != 200:
        raise _failed(response, _doing(gettext_noop("create the silence")))
    body = _json(response)
    silence_id = body.get("silenceID") if isinstance(body, dict) else None
    if not silence_id:
        raise AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s created a silence without an id."),
            params={"url": base_url()},
        )
    return str(silence_id)


def silence_delete(silence_id: str) -> None:
    """Expire a silence now (Alertmanager keeps it, expired, for its retention)."""
    response = _call("DELETE", f"/api/v2/silence/{silence_id}")
    if response.status_code != 200:
        raise _failed(response, _doing(gettext_noop("expire silence %(id)s"), id=silence_id))


# --- which silences cover an incident -------------------------------------------------
def incident_label_sets(*, incident_id: int) -> list[dict[str, str]]:
    """The distinct label sets of the incident's alerts, newest first (one query)."""
    seen: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    rows = (
        Alert.objects.filter(incident_id=incident_id)
        .order_by("-starts_at", "-id")
        .values_list("labels", flat=True)
    )
    for labels in rows.iterator(chunk_size=500):
        labels = {str(k): str(v) for k, v in (labels or {}).items()}
        seen.setdefault(tuple(sorted(labels.items())), labels)
        if len(seen) >= MAX_LABEL_SETS:
            break
    return list(seen.values())


def incident_silence_ids(*, incident_id: int) -> set[str]:
    """Ids of the silences the console created from this incident (one query)."""
    ids = TimelineEvent.objects.filter(
        incident_id=incident_id, kind=TimelineEventType.SILENCE_CREATED
    ).values_list("payload__silence_id", flat=True)
    return {str(i) for i in ids if i}


def incident_silence_origins(*, incident_id: int) -> dict[str, tuple[str, str]]:
    """(createdBy, comment) the console gave each silence it created from this incident,
    by silence id (one query); an entry written before createdBy was recorded has its
    actor's username."""
    rows = TimelineEvent.objects.filter(
        incident_id=incident_id, kind=TimelineEventType.SILENCE_CREATED
    ).values_list(
        "payload__silence_id", "payload__created_by", "payload__comment", "actor__username"
    )
    return {
        str(sid): (str(by or actor or ""), str(comment or ""))
        for sid, by, comment, actor in rows
        if sid
    }


def covering(
    silence: Silence, *, label_sets: list[dict[str, str]], created_ids: set[str]
) -> IncidentSilence | None:
    """The silence as one of the incident's, or None when it is none of its business."""
    matched = sum(1 for labels in label_sets if silence.matches(labels))
    created_here = silence.id in created_ids
    if not (matched or created_here):
        return None
    return IncidentSilence(silence=silence, created_here=created_here, alerts_matched=matched)


def incident_silences(*, incident_id: int) -> list[IncidentSilence]:
    """The incident's active and pending silences, the soonest to end first. Two queries
    and one call to Alertmanager; AlertmanagerError when it cannot be asked."""
    label_sets = incident_label_sets(incident_id=incident_id)
    created_ids = incident_silence_ids(incident_id=incident_id)
    found = []
    for silence in silences_fetch():
        if not silence.is_active:
            continue
        mine = covering(silence, label_sets=label_sets, created_ids=created_ids)
        if mine is not None:
            found.append(mine)
    return sorted(found, key=lambda s: (s.silence.ends_at, s.silence.id))


def expired_copy(silence: Silence, *, at: datetime) -> Silence:
    """What Alertmanager keeps after an early expiry: the same silence, ended `at`."""
    return replace(silence, state="expired", ends_at=at)
