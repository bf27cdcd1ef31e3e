"""When each incident of the year happened and how it went, as plain data (no database).

Times are integer seconds since the epoch (UTC). Failures arrive with a daily and weekly
rhythm on a fleet that grows through the year; each lands on one Alertmanager group
(alertname, namespace, LWS), never while that group's previous incident is still open
or within its reopen window. Some groups flap: a chain of incidents one after another,
and some incidents reopen. Most are resolved within minutes; the newest few are open.
Deterministic for a seed: the same arguments give the same plan, ids included.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from dataclasses import dataclass, field

from postmortems.fleet_year.fleet import Fleet

DAY = 86_400
REOPEN_WINDOW = 1_800  # INCIDENT_REOPEN_WINDOW_SECONDS' default
SEVERITIES = ("SEV1", "SEV2", "SEV3", "SEV4")
SEVERITY_CUM = (2, 12, 57, 100)  # cumulative: 2% SEV1, 10% SEV2, 45% SEV3, 43% SEV4
ACK_SHARE = {"SEV1": 0.97, "SEV2": 0.9, "SEV3": 0.55, "SEV4": 0.25}
# Relative load by hour of day (UTC): a fleet serving people peaks in the afternoon.
HOURLY = (5, 4, 4, 4, 5, 6, 8, 10, 12, 13, 14, 15, 16, 16, 17, 17, 16, 15, 13, 11, 9, 8, 7, 6)
OPEN_STATUSES, OPEN_WEIGHTS = ("triggered", "acknowledged", "mitigated"), (35, 40, 25)
FLAP_SHARE = 0.12  # episodes that are a chain of incidents on one group
REOPEN_SHARE = 0.05
DRILL_SHARE = 0.03
RELATED_WINDOW = 600


@dataclass(slots=True)
class Inc:
    group: int
    trig: int
    started: int
    sev: str
    acked: int  # 0: never acknowledged by a person before mitigation
    mitigated: int  # 0: not yet
    resolved: int  # 0: open
    status: str
    user: int  # who acknowledged / resolved (index into the users)
    n_alerts: int
    seed: int
    drill: bool
    cycles: tuple[tuple[int, int, int], ...] = ()  # reopens: (reopened, mitigated, resolved)
    id: int = 0
    related_to: int = 0
    linked_at: int = 0
    why: tuple = ()  # (message id, params): why the lead leads
    lead_runbook: str = ""
    leads: list = field(default_factory=list)  # (related id, linked at, why, its runbook)

    @property
    def reopened(self) -> int:
        return self.cycles[-1][0] if self.cycles else 0

    @property
    def commander(self) -> int:
        """The first acknowledgement makes that person the commander (-1: nobody)."""
        return self.user if self.acked else -1

    def scale(self, until: int) -> None:
        """Squeeze a resolved incident's story so that it ends by `until`."""
        span = self.resolved - self.trig
        f = max(0.0, (until - self.trig) / span) if span > 0 else 0.0

        def s(t: int) -> int:
            return self.trig + int((t - self.trig) * f) if t else 0

        self.acked, self.mitigated, self.resolved = (
            s(self.acked),
            s(self.mitigated),
            s(self.resolved),
        )
        self.cycles = tuple((s(a), s(b), s(c)) for a, b, c in self.cycles)


@dataclass
class Plan:
    incidents: list[Inc]
    start: int
    end: int
    users: int


def _lognormal(rng: random.Random, median: float, sigma: float, low: float, high: float) -> int:
    return int(min(high, max(low, median * math.exp(rng.gauss(0.0, sigma)))))


def alerts_count(rng: random.Random, mean: float) -> int:
    """At least one; lognormal around `mean` (most small, a few storms)."""
    sigma = 1.1
    mu = math.log(max(mean, 1.0)) - sigma * sigma / 2
    return max(1, min(int(mean * 25), round(math.exp(rng.gauss(mu, sigma)))))


def _moment(rng: random.Random, start: int, days: int, hours: list[float]) -> int:
    """A second in [start, start + days): more later in the year (the fleet grows), fewer
    at weekends, more in the afternoon."""
    while True:
        day = rng.random() * days
        weekend = ((start // DAY + int(day)) + 3) % 7 >= 5  # 1970-01-01 was a Thursday
        if rng.random() * 1.5 > (1 + 0.5 * day / days) * (0.7 if weekend else 1.0):
            continue
        hour = rng.choices(range(24), cum_weights=hours)[0]
        moment = start + int(day) * DAY + hour * 3600 + rng.randrange(3600)
        if moment < start + days * DAY - 300:  # the newest is a few minutes old
            return moment


def _story(rng: random.Random, group: int, trig: int, n_users: int, alerts_per: float) -> Inc:
    sev = SEVERITIES[bisect.bisect(SEVERITY_CUM, rng.random() * SEVERITY_CUM[-1])]
    mitigate = _lognormal(rng, 600, 1.2, 120, 3 * DAY)
    ack = _lognormal(rng, 150, 1.0, 10, 3 * 3600)
    acked = trig + ack if rng.random() < ACK_SHARE[sev] and ack < mitigate else 0
    mitigated = trig + mitigate
    resolved = mitigated + _lognormal(rng, 300, 1.3, 20, 2 * DAY)
    cycles = []  # with reopenings: the first (0, mitigated, resolved), then each reopening
    if rng.random() < REOPEN_SHARE:
        cycles.append((0, mitigated, resolved))
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            again = resolved + rng.randint(60, REOPEN_WINDOW - 60)
            mitigated = again + _lognormal(rng, 400, 0.8, 120, 6 * 3600)
            resolved = mitigated + _lognormal(rng, 200, 1.0, 20, 6 * 3600)
            cycles.append((again, mitigated, resolved))
    return Inc(
        group=group,
        trig=trig,
        started=trig - rng.randint(45, 240),
        sev=sev,
        acked=acked,
        mitigated=mitigated,
        resolved=resolved,
        status="resolved",
        user=rng.randrange(n_users),
        n_alerts=alerts_count(rng, alerts_per),
        seed=rng.getrandbits(48),
        drill=rng.random() < DRILL_SHARE,
        cycles=tuple(cycles),
    )


def _group_weights(fleet: Fleet, rng: random.Random) -> list[float]:
    """Cumulative weights per group: the kind's frequency times the LWS's popularity
    (a few noisy pools, a long quiet tail)."""
    popularity = [1.0 / (rank + 1) ** 0.7 for rank in range(len(fleet.lws))]
    rng.shuffle(popularity)
    cum, total = [], 0.0
    for pop in popularity:
        for kind in fleet.kinds:
            total += pop * kind.weight
            cum.append(total)
    return cum


def _episode(
    rng: random.Random,
    out: list[Inc],
    when: int,
    size: int,
    cum: list[float],
    busy: list[int],
    end: int,
    users: int,
    alerts_per: float,
) -> int:
    """One group's incidents from `when`: one, or a flapping chain. Returns how many did
    not fit before the end."""
    for _ in range(20):
        group = bisect.bisect(cum, rng.random() * cum[-1])
        if busy[group] <= when:
            break
    else:  # every group tried is busy: any free one
        group = next(g for g in range(len(cum)) if busy[g] <= when)
    trig = when
    for made in range(size):
        if trig >= end - 300:
            return size - made
        inc = _story(rng, group, trig, users, alerts_per)
        out.append(inc)
        trig = inc.resolved + REOPEN_WINDOW + rng.randint(60, 3 * 3600)
        busy[group] = inc.resolved + REOPEN_WINDOW
    return 0


def plan_year(
    *,
    fleet: Fleet,
    incidents: int,
    seed: int,
    days: int,
    end: int,
    users: int,
    alerts_per: float,
    first_id: int = 1,
) -> Plan:
    rng = random.Random(f"plan:{seed}")  # noqa: S311 (a reproducible year, not a secret)
    start = end - days * DAY
    hours = [float(sum(HOURLY[: h + 1])) for h in range(24)]
    cum = _group_weights(fleet, rng)
    busy = [0] * len(cum)
    episodes = []
    total = 0
    while total < incidents:
        size = rng.randint(2, 6) if rng.random() < FLAP_SHARE else 1
        size = min(size, incidents - total)
        episodes.append((_moment(rng, start, days, hours), size))
        total += size
    heapq.heapify(episodes)
    out: list[Inc] = []
    while episodes:  # in time order; what a chain lost to the year's end comes back later
        when, size = heapq.heappop(episodes)
        left = _episode(rng, out, when, size, cum, busy, end, users, alerts_per)
        for _ in range(left):
            heapq.heappush(episodes, (rng.randint(when, end - 301), 1))
    out.sort(key=lambda i: (i.trig, i.group))
    for n, inc in enumerate(out):
        inc.id = first_id + n
    _settle_the_end(out, end, rng)
    _relate(out, fleet)
    return Plan(out, start, end, users)


def open_count(incidents: int) -> int:
    return min(200, max(1, incidents // 50))


def _settle_the_end(out: list[Inc], end: int, rng: random.Random) -> None:
    """The newest incidents (one per group) are still open; nothing else ends after `end`,
    and nothing starts after it."""
    wanted, seen = open_count(len(out)), set()
    for inc in reversed(out):
        if wanted and inc.group not in seen and not inc.drill:
            wanted -= 1
            seen.add(inc.group)
            inc.status = rng.choices(OPEN_STATUSES, weights=OPEN_WEIGHTS)[0]
            inc.cycles, inc.resolved = (), 0
            span = end - 30 - inc.trig
            inc.acked = (
                inc.trig + int(span * rng.uniform(0.1, 0.5)) if inc.status != "triggered" else 0
            )
            if inc.status == "mitigated":
                inc.mitigated = max(inc.acked, inc.trig) + int(span * rng.uniform(0.1, 0.4))
            else:
                inc.mitigated = 0
            continue
        seen.add(inc.group)  # an older incident of an open group stays resolved
        if inc.resolved > end - 5:
            inc.scale(end - 5)


def _relate(out: list[Inc], fleet: Fleet) -> None:
    """An incident opened on an LWS within minutes of another still open there is part of
    it (incidents/related/): the earlier leads unless the newer's runbook or severity
    outranks it, in which case they stay apart here."""
    kinds = len(fleet.kinds)
    last: dict[int, Inc] = {}
    for inc in out:
        lws = inc.group // kinds
        lead = last.get(lws)
        last[lws] = inc
        if lead is None or inc.drill or lead.drill or lead.group == inc.group:
            continue
        if inc.trig - lead.trig > RELATED_WINDOW or (lead.resolved and lead.resolved <= inc.trig):
            continue
        a, b = fleet.kinds[lead.group % kinds], fleet.kinds[inc.group % kinds]
        if a.slug in b.leads_over or inc.sev < lead.sev:
            continue
        if b.slug in a.leads_over:
            why = ("incidents.related.why.runbook", {"lead": a.slug, "other": b.slug})
        elif lead.sev < inc.sev:
            why = ("incidents.related.why.severity", {"higher": lead.sev, "lower": inc.sev})
        else:
            why = ("incidents.related.why.first", {})
        inc.related_to, inc.linked_at, inc.why = lead.id, inc.trig + 2, why
        inc.lead_runbook = a.slug
        lead.leads.append((inc.id, inc.trig + 2, why, b.slug))
