"""A believable year of a large vLLM fleet, written in bulk for the benches (issue 29):
incidents with their alerts and timelines across ~50 namespaces and ~400 LWS,
postmortems with action items, and a week of webhook receipts.

Modules in the order the data flows: `fleet` (the fleet and the failure kinds, from the
runbook catalogue), `plan` (when each incident happened and how it went), `rows` (its
alerts and its row as COPY text), `timeline` (its timeline), `documents` (people,
receipts, postmortems and action items), `copy` (COPY, and the indexes set aside for a
big load). `clock` and `texts` are their helpers. PostgreSQL only; `generate_year` is the
entry point, the `fleet_year` management command its front.
"""

from __future__ import annotations

import random
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connections, transaction
from django.utils import timezone

from incidents.models import Alert, Incident, TimelineEvent, WebhookReceipt
from postmortems.fleet_year import documents, rows, timeline
from postmortems.fleet_year.clock import Clock
from postmortems.fleet_year.copy import (
    Loader,
    Progress,
    YearRefused,
    analyze,
    put_back,
    sequences_reset,
    set_aside,
    table_bytes,
)
from postmortems.fleet_year.fleet import Fleet, fleet_build
from postmortems.fleet_year.plan import DAY, Inc, Plan, plan_year
from postmortems.models import ActionItem, Postmortem

__all__ = ["BIG_RUN", "YearRefused", "YearSummary", "generate_year"]

BIG_RUN = 50_000  # from this many incidents, indexes are set aside during the load
RECEIPT_DAYS = 7
BATCH_INCIDENTS = 200
MODELS = (Incident, Alert, TimelineEvent, WebhookReceipt, Postmortem, ActionItem)


@dataclass
class YearSummary:
    counts: dict[str, int] = field(default_factory=dict)  # rows written per table
    seconds: dict[str, float] = field(default_factory=dict)  # per phase
    table_bytes: dict[str, int] = field(default_factory=dict)  # pg_total_relation_size
    # CPU seconds per table's COPY: (this process, the PostgreSQL backend when local).
    cpu_seconds: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())

    def lines(self) -> list[str]:
        out = [f"{table}: {n:,} rows" for table, n in self.counts.items()]
        out += [f"{phase}: {s:,.1f} s" for phase, s in self.seconds.items()]
        out += [
            f"CPU {table}: {mine:,.1f} s generating, {server:,.1f} s in PostgreSQL"
            for table, (mine, server) in self.cpu_seconds.items()
        ]
        out.append(f"total: {self.total_seconds:,.1f} s")
        out += [f"{t}: {b / 2**20:,.1f} MiB" for t, b in self.table_bytes.items()]
        incidents = self.counts.get(Incident._meta.db_table, 0)
        if incidents:
            total = sum(self.table_bytes.values())
            out.append(f"bytes per incident (these tables): {total / incidents:,.0f}")
        return out


@dataclass
class _Run:
    plan: Plan
    fleet: Fleet
    clock: Clock
    people: list[tuple[str, str]]
    wave_ratio: float
    first_alert: int
    first_event: int
    first_receipt: int
    last_alert: array = field(default_factory=lambda: array("q"))
    receipts: list[str] = field(default_factory=list)
    shapes: dict[int, tuple[rows.Shape, int]] = field(default_factory=dict)
    keys: dict[int, str] = field(default_factory=dict)

    def gk(self, group: int) -> str:
        key = self.keys.get(group)
        if key is None:
            key = self.keys[group] = self.fleet.group_key(group)
        return key


def generate_year(
    *,
    incidents: int,
    seed: int = 1,
    days: int = 365,
    end: datetime | None = None,
    alerts_per: float = 30,
    events_per: float = 60,
    postmortems: int | None = None,
    using: str = "default",
    progress: Progress | None = None,
    vacuum: bool = True,
) -> YearSummary:
    """Write the year into the empty console database `using`. Refuses (YearRefused) on
    anything but PostgreSQL and when incidents exist. All in one transaction: a failure
    leaves nothing behind. A big run (BIG_RUN incidents or more) is vacuumed afterwards
    unless `vacuum` is False."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        raise YearRefused(
            f"the year is written with PostgreSQL's COPY; database {using!r} is "
            f"{connection.vendor}. Point DATABASE_URL at a PostgreSQL database."
        )
    if incidents < 1 or days < 1 or alerts_per < 1 or events_per < 1:
        raise YearRefused(
            "incidents, days, alerts per incident and events per incident must be >= 1"
        )
    if Incident.objects.using(using).exists():
        raise YearRefused(
            f"database {connection.settings_dict.get('NAME')!r} already holds incidents: the "
            "year is written into an empty console (ids and groups are planned from 1). Use "
            "a fresh database (createdb, migrate)."
        )
    say = progress or (lambda _line: None)
    summary = YearSummary()
    clock_started = time.monotonic()
    end_ts = int((end or timezone.now()).timestamp())
    people = documents.people_ensure(using)
    fleet = fleet_build(seed)
    plan = plan_year(
        fleet=fleet,
        incidents=incidents,
        seed=seed,
        days=days,
        end=end_ts,
        users=len(people),
        alerts_per=alerts_per,
    )
    summary.seconds["plan"] = time.monotonic() - clock_started
    say(f"planned {incidents:,} incidents over {days} days in {summary.seconds['plan']:.1f} s")
    with transaction.atomic(using=using):
        connection.ensure_connection()
        loader = Loader(connection.connection, progress)
        _load(loader, summary, plan, fleet, people, seed, alerts_per, events_per, postmortems)
        started = time.monotonic()
        sequences_reset(connection, list(MODELS))
        summary.seconds["sequences"] = time.monotonic() - started
    started = time.monotonic()
    tables = [m._meta.db_table for m in MODELS]
    # VACUUM cannot run inside a transaction (a test's, a caller's atomic block).
    vacuum = vacuum and incidents >= BIG_RUN and not connection.in_atomic_block
    analyze(connection.connection, tables, vacuum=vacuum)
    summary.seconds["vacuum_analyze" if vacuum else "analyze"] = time.monotonic() - started
    summary.counts, summary.cpu_seconds = loader.counts, loader.cpu
    summary.table_bytes = table_bytes(connection.connection, tables)
    return summary


def _load(
    loader: Loader,
    summary: YearSummary,
    plan: Plan,
    fleet: Fleet,
    people: list[tuple[str, str]],
    seed: int,
    alerts_per: float,
    events_per: float,
    postmortems: int | None,
) -> None:
    big = len(plan.incidents) >= BIG_RUN
    aside = None
    if big:
        started = time.monotonic()
        tables = [m._meta.db_table for m in (Incident, Alert, TimelineEvent)]
        aside = set_aside(loader.raw, tables)
        summary.seconds["set_aside"] = time.monotonic() - started
    run = _Run(
        plan=plan,
        fleet=fleet,
        clock=Clock(plan.start, plan.end),
        people=people,
        wave_ratio=_wave_ratio(alerts_per, events_per),
        first_alert=loader.first_id(Alert),
        first_event=loader.first_id(TimelineEvent),
        first_receipt=loader.first_id(WebhookReceipt),
    )
    run.last_alert = array("q", bytes(8 * len(plan.incidents)))
    chosen = _chosen(plan, seed, postmortems)
    for name, model, fields, batches in (
        ("alerts", Alert, rows.ALERT_FIELDS, _alert_batches(run)),
        ("events", TimelineEvent, timeline.EVENT_FIELDS, _event_batches(run, chosen)),
        ("incidents", Incident, rows.INCIDENT_FIELDS, _incident_batches(run)),
    ):
        started = time.monotonic()
        loader.copy(model, fields, batches)
        summary.seconds[name] = time.monotonic() - started
    started = time.monotonic()
    loader.copy(WebhookReceipt, documents.RECEIPT_FIELDS, [run.receipts])
    picked = [i for i in plan.incidents if i.id in chosen]
    pms, items = documents.postmortem_lines(
        picked,
        run.shapes,
        fleet,
        run.clock,
        people,
        seed,
        loader.first_id(Postmortem),
        loader.first_id(ActionItem),
        plan.end,
    )
    loader.copy(Postmortem, documents.POSTMORTEM_FIELDS, [pms])
    loader.copy(ActionItem, documents.ITEM_FIELDS, [items])
    summary.seconds["documents"] = time.monotonic() - started
    if aside is not None:
        started = time.monotonic()
        put_back(loader.raw, aside, loader.progress)
        summary.seconds["indexes"] = time.monotonic() - started


def _wave_ratio(alerts_per: float, events_per: float) -> float:
    """Alert notifications per alert, so that the timeline averages `events_per`: the rest
    of an incident's lines (opening, status, command, notes) are about 5, and fewer waves
    than asked fit an incident with few alerts; calibrated by measuring (10/20, 20/40 and
    30/60 alerts/events per incident land within 2%)."""
    rest = 5 - 0.16 * (events_per - 20)
    return max(0.0, events_per - rest) / alerts_per


def _chosen(plan: Plan, seed: int, postmortems: int | None) -> set[int]:
    wanted = len(plan.incidents) // 50 if postmortems is None else postmortems
    candidates = documents.postmortem_candidates(plan.incidents, plan.end)
    rng = random.Random(f"chosen:{seed}")  # noqa: S311 (reproducible, not a secret)
    return {i.id for i in rng.sample(candidates, min(wanted, len(candidates)))}


def _per_incident(run: _Run) -> Iterator[tuple[int, Inc, rows.Shape, rows.Alerts]]:
    for n, inc in enumerate(run.plan.incidents):
        sh = rows.shape(inc, run.fleet)
        yield n, inc, sh, rows.alerts_of(inc, sh, run.plan.end, run.wave_ratio)


def _alert_batches(run: _Run) -> Iterator[list[str]]:
    batch: list[str] = []
    next_id = run.first_alert
    for _, inc, sh, al in _per_incident(run):
        batch += rows.alert_lines(inc, sh, al, run.clock, next_id, run.gk(inc.group))
        next_id += len(al.pods)
        if len(batch) >= 5_000:
            yield batch
            batch = []
    yield batch


def _event_batches(run: _Run, chosen: set[int]) -> Iterator[list[str]]:
    batch: list[str] = []
    next_id = run.first_event
    since = run.plan.end - RECEIPT_DAYS * DAY
    for n, inc, sh, al in _per_incident(run):
        gk = run.gk(inc.group)
        events = timeline.timeline(inc, sh, al, run.clock, run.people, gk, run.plan.end)
        batch += timeline.event_lines(inc, events, run.clock, next_id)
        next_id += len(events)
        run.last_alert[n] = max(t for t, _, kind, *_ in events if kind == "alert_fired")
        if inc.trig >= since:
            rid = run.first_receipt + len(run.receipts)
            run.receipts.append(documents.receipt_line(inc, sh, al, run.clock, gk, rid))
        if inc.id in chosen:
            run.shapes[inc.id] = (sh, len(set(al.pods)))
        if len(batch) >= 5_000:
            yield batch
            batch = []
    yield batch


def _incident_batches(run: _Run) -> Iterator[list[str]]:
    batch: list[str] = []
    for n, inc in enumerate(run.plan.incidents):
        sh = rows.shape(inc, run.fleet)
        gk = run.gk(inc.group)
        batch.append(rows.incident_line(inc, sh, run.clock, run.people, gk, run.last_alert[n]))
        if len(batch) >= 5_000:
            yield batch
            batch = []
    yield batch
