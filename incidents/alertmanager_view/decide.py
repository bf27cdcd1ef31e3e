"""Pure decisions, no queries: what Alertmanager's view says of one stored alert, and
whether the console may take that as the alert's end.

One alert episode is (fingerprint, startsAt). A replica listing the fingerprint with a
later startsAt has a new episode: this one is over. Across replicas the liveliest answer
wins (firing over silenced over inhibited over resolved over not listed), so an alert
counts as ended only when no replica that answered lists it as firing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from incidents.alertmanager_view.client import ListedAlert, View
from incidents.models import AlertmanagerState

S = AlertmanagerState
# Alertmanager and the webhook write the same startsAt; a second of slack for rounding.
_SAME_EPISODE = timedelta(seconds=1)
_RANK = {S.FIRING: 4, S.SILENCED: 3, S.INHIBITED: 2, S.RESOLVED: 1, S.GONE: 0}
ENDED = (S.RESOLVED, S.GONE)


@dataclass(frozen=True)
class Observed:
    state: str
    silenced_by: tuple[str, ...] = ()
    inhibited_by: tuple[str, ...] = ()
    ends_at: datetime | None = None  # when Alertmanager says it resolved

    @property
    def listed(self) -> bool:
        return self.state != S.GONE

    @property
    def ended(self) -> bool:
        return self.state in ENDED


def _one(alert: ListedAlert, at: datetime) -> Observed:
    if alert.ends_at is not None and alert.ends_at <= at:
        return Observed(S.RESOLVED, ends_at=alert.ends_at)
    if alert.state == "suppressed":
        if alert.silenced_by:
            return Observed(S.SILENCED, alert.silenced_by, alert.inhibited_by)
        if alert.inhibited_by:
            return Observed(S.INHIBITED, (), alert.inhibited_by)
    # "active", and "unprocessed" (not yet matched against silences): firing.
    return Observed(S.FIRING)


def observe(view: View, *, fingerprint: str, starts_at: datetime) -> Observed:
    """The alert episode as the replicas that answered see it."""
    seen = [
        _one(a, view.asked_at)
        for a in view.alerts.get(fingerprint, ())
        if a.starts_at <= starts_at + _SAME_EPISODE
    ]
    if not seen:
        return Observed(S.GONE)
    best = max(seen, key=lambda o: _RANK[S(o.state)])
    if best.state == S.SILENCED:  # every silence any replica names
        ids = sorted({i for o in seen for i in o.silenced_by})
        return Observed(S.SILENCED, tuple(ids), best.inhibited_by)
    return best


def may_end(
    observed: Observed,
    *,
    asked_at: datetime,
    last_evidence: datetime | None,
    grace: timedelta,
) -> bool:
    """Whether an alert the console holds firing ends now. Resolved: yes. Not listed:
    only when nothing showed it alive for `grace` before the asking began (the last
    replica listing, or the last webhook delivery): a restarted Alertmanager lists
    nothing until Prometheus resends, and a webhook can overtake the listing."""
    if observed.state == S.RESOLVED:
        return True
    if observed.state != S.GONE:
        return False
    return last_evidence is None or last_evidence <= asked_at - grace
