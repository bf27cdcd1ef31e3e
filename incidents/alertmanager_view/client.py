"""Alertmanager's own list of alerts (`GET /api/v2/alerts`), from every replica.

The calls go through the silences client (incidents/silences/client.py): the same
ALERTMANAGER_URL, the same overall deadline per call (ALERTMANAGER_TIMEOUT_SECONDS) and
the same `AlertmanagerError` wording. With replicas (ALERTMANAGER_REPLICA_URLS) each is
asked in turn; one that cannot be asked is left out and named, and the view is usable
as long as one answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_noop

from incidents.ingest.parse import PayloadError, parse_rfc3339
from incidents.silences.client import AlertmanagerError, _call, _doing, _failed, _json


@dataclass(frozen=True)
class ListedAlert:
    """One alert as a replica lists it (its v2 `gettableAlert`)."""

    fingerprint: str
    starts_at: datetime
    ends_at: datetime | None
    state: str  # active | suppressed | unprocessed
    silenced_by: tuple[str, ...]
    inhibited_by: tuple[str, ...]


@dataclass
class View:
    """What the replicas that answered list, by fingerprint, and who did not answer."""

    asked_at: datetime
    answered: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # replica URL -> why
    alerts: dict[str, list[ListedAlert]] = field(default_factory=dict)

    @property
    def usable(self) -> bool:
        return bool(self.answered)

    def error_text(self) -> str:
        return " ".join(self.failed.values())


def replica_urls() -> list[str]:
    """The replicas to ask: ALERTMANAGER_REPLICA_URLS, else ALERTMANAGER_URL alone."""
    urls = [str(u).strip().rstrip("/") for u in settings.ALERTMANAGER_REPLICA_URLS]
    return [u for u in urls if u] or [str(settings.ALERTMANAGER_URL).rstrip("/")]


def _parse(raw: Any, base: str) -> ListedAlert:
    try:
        status = raw["status"]
        ends = raw.get("endsAt")
        return ListedAlert(
            fingerprint=str(raw["fingerprint"]),
            starts_at=parse_rfc3339(raw["startsAt"], "startsAt"),
            ends_at=parse_rfc3339(ends, "endsAt", zero_ok=True) if ends else None,
            state=str(status["state"]),
            silenced_by=tuple(str(s) for s in status.get("silencedBy") or ()),
            inhibited_by=tuple(str(s) for s in status.get("inhibitedBy") or ()),
        )
    except (KeyError, TypeError, AttributeError, PayloadError) as exc:
        raise AlertmanagerError(
            gettext_noop(
                "Alertmanager at %(url)s answered an alert its v2 API does not "
                "describe (%(error)s)."
            ),
            params={"url": base, "error": f"{exc!s:.100}"},
        ) from None


def alerts_fetch(base: str) -> list[ListedAlert]:
    """Every alert one replica lists (active, silenced, inhibited and unprocessed: the
    API's defaults); AlertmanagerError when it cannot be asked."""
    response = _call("GET", "/api/v2/alerts", base=base)
    if response.status_code != 200:
        raise _failed(response, _doing(gettext_noop("list alerts")))
    body = _json(response)
    if not isinstance(body, list):
        raise AlertmanagerError(
            gettext_noop("Alertmanager at %(url)s answered a list that is not one."),
            params={"url": base},
        )
    return [_parse(raw, base) for raw in body]


def view_fetch() -> View:
    """Ask every replica, in turn (each call has its own deadline)."""
    view = View(asked_at=timezone.now())
    for base in replica_urls():
        try:
            listed = alerts_fetch(base)
        except AlertmanagerError as exc:
            view.failed[base] = str(exc)
            continue
        view.answered.append(base)
        for alert in listed:
            view.alerts.setdefault(alert.fingerprint, []).append(alert)
    return view
