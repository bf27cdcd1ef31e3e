"""Auto-triage: the runbook's checks, evaluated by a worker when an incident opens (or
reopens, or its runbook changes) and every minute while it is open, posted to the
timeline when they say something new. Which incidents are due, and the task that
evaluates them in batches, are runbooks/auto_triage/queue.py.

"New" is decided against the last auto-triage event of the incident (its payload is the
stored result, so no table of its own): another branch, another runbook, or Prometheus
going down or coming back. Prometheus down is one entry, not one per evaluation.

A batch costs a constant number of queries (the incidents, their alerts, their row locks,
their last entries, one INSERT), not a few per incident: a storm opens hundreds a minute.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from django.db import connection, transaction

from console.texts import Msg, msg
from incidents.models import OPEN_STATUSES, Incident, TimelineEvent
from incidents.selectors import incidents_lock
from incidents.services import incident_events_record
from runbooks.prometheus_texts import prometheus_said
from runbooks.recommendations import RecommendedAction, recommended_actions
from runbooks.timeline_kinds import AUTO_TRIAGE
from runbooks.timeline_text import first_sentence
from runbooks.triage import TriageResult, alerts_firing_first_many, incident_triage

log = logging.getLogger(__name__)

SOURCE = "auto-triage"

Evaluated = tuple[int, TriageResult, list[RecommendedAction]]


def _key(runbook: str, branch: str, prometheus_error: str) -> tuple[str, ...]:
    return ("down",) if prometheus_error else ("branch", runbook, branch)


def _result_key(result: TriageResult) -> tuple[str, ...]:
    return _key(result.runbook_slug, result.branch_id, result.prometheus_error)


def _event_key(event: TimelineEvent | None) -> tuple[str, ...] | None:
    if event is None:
        return None
    p = event.payload or {}
    return _key(
        str(p.get("runbook", "")), str(p.get("branch", "")), str(p.get("prometheus_error", ""))
    )


def auto_triage_last(*, incident_id: int) -> TimelineEvent | None:
    """The incident's last auto-triage entry (what the page shows as the stored result)."""
    return _last_by_incident([incident_id]).get(incident_id)


def _last_by_incident(incident_ids: Sequence[int]) -> dict[int, TimelineEvent]:
    """auto_triage_last for many incidents in one query."""
    qs = TimelineEvent.objects.filter(incident_id__in=incident_ids, kind=AUTO_TRIAGE)
    qs = qs.order_by("incident_id", "-occurred_at", "-id")
    if connection.features.can_distinct_on_fields:  # PostgreSQL: only the newest of each
        qs = qs.distinct("incident_id")
    last: dict[int, TimelineEvent] = {}
    for event in qs:
        last.setdefault(event.incident_id, event)
    return last


def is_news(result: TriageResult, last: TimelineEvent | None) -> bool:
    """Whether `result` says something the timeline's last auto-triage entry does not."""
    return bool(result.runbook_slug) and _result_key(result) != _event_key(last)


def _number(value: float | None, unit: str) -> str:
    return "no value" if value is None else f"{value:.4g}{' ' + unit if unit else ''}"


def _entry(
    result: TriageResult, actions: list[RecommendedAction]
) -> tuple[str | Msg, dict[str, Any]]:
    """The timeline message and payload for one evaluation."""
    if result.prometheus_error:
        # The client's error in words of the reader's language (its raw part stays a
        # parameter); the payload keeps the English, which decides what is news.
        error = prometheus_said(result.prometheus_error) or result.prometheus_error
        message = msg(
            "runbooks.auto_triage.prometheus_error", runbook=result.runbook_slug, error=error
        )
        return message, {"runbook": result.runbook_slug, "branch": "",
                         "prometheus_error": result.prometheus_error}  # fmt: skip
    checks = {c.id: c for c in result.checks}
    because = [(cid, state, checks.get(cid)) for cid, state in result.because]
    lines = [f"Auto-triage ({result.runbook_slug}): {result.branch_id} — "
             f"{first_sentence(result.diagnosis)}"]  # fmt: skip
    if because:
        lines.append(
            "Because: "
            + "; ".join(
                f"{cid} {state} ({_number(c.value, c.unit)})" if c else f"{cid} {state}"
                for cid, state, c in because
            )
        )
    if actions:
        lines.append(
            "Recommended: "
            + "; ".join(
                f"{a.title} [{a.kind} " + ", ".join(f"{k}={v}" for k, v in a.params.items()) + "]"
                for a in actions
            )
        )
    else:
        lines.append("No action recommended for this branch.")
    payload = {
        "runbook": result.runbook_slug,
        "branch": result.branch_id,
        "diagnosis": result.diagnosis,
        "because": [
            {"check": cid, "state": state, "value": c.value if c else None}
            for cid, state, c in because
        ],
        "checks": [{"id": c.id, "state": c.state, "value": c.value} for c in result.checks],
        "recommended": [
            {"index": a.index, "kind": a.kind, "title": a.title, "params": a.params}
            for a in actions
        ],
        "prometheus_error": "",
    }
    return "\n".join(lines), payload


@transaction.atomic
def auto_triage_record(*, evaluated: Sequence[Evaluated]) -> list[TimelineEvent]:
    """Post each (incident id, result, actions) that is news, in one INSERT. The incidents'
    row locks make two workers evaluating one incident post once."""
    locked = incidents_lock(incident_ids=[pk for pk, _, _ in evaluated])
    last = _last_by_incident(sorted(locked))
    news = [
        (pk, AUTO_TRIAGE, *_entry(result, actions))
        for pk, result, actions in evaluated
        if pk in locked and is_news(result, last.get(pk))
    ]
    return incident_events_record(events=news, source=SOURCE) if news else []


def auto_triage_run_many(
    *, incident_ids: Sequence[int], deadline: float | None = None
) -> tuple[list[TimelineEvent], list[int]]:
    """Evaluate these incidents' triage now and post what is news: (the entries posted,
    the ids left unevaluated because the `deadline` (time.monotonic()) passed). Resolved
    incidents and those no runbook matches are skipped.

    Not one transaction around the whole: the checks ask Prometheus over the network (with
    a timeout), and no row lock should wait on that; the write is one atomic call. One
    Prometheus found down is down for the rest of the batch (it is not asked again).
    """
    incidents = list(
        Incident.objects.filter(pk__in=incident_ids, status__in=OPEN_STATUSES).order_by("pk")
    )
    alerts = alerts_firing_first_many([i.pk for i in incidents])
    down: list[str] = []
    evaluated: list[Evaluated] = []
    for n, incident in enumerate(incidents):
        if deadline is not None and time.monotonic() > deadline:
            return auto_triage_record(evaluated=evaluated), [i.pk for i in incidents[n:]]
        mine = alerts.get(incident.pk, [])
        result = incident_triage(incident=incident, alerts=mine, down=down)
        if result.runbook_slug:
            actions = recommended_actions(
                incident=incident, result=result, alerts=mine, approval=False
            )
            evaluated.append((incident.pk, result, actions))
    return (auto_triage_record(evaluated=evaluated) if evaluated else []), []


def auto_triage_run(*, incident_id: int) -> TimelineEvent | None:
    """auto_triage_run_many for one incident: its entry, or None when nothing was news."""
    posted, _ = auto_triage_run_many(incident_ids=[incident_id])
    return posted[0] if posted else None
