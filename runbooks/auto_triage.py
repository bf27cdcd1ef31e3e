"""Auto-triage: the runbook's checks, evaluated by a worker when an incident opens (or
reopens, or its runbook changes) and every minute while it is open, posted to the
timeline when they say something new.

"New" is decided against the last auto-triage event of the incident (its payload is the
stored result, so no table of its own): another branch, another runbook, or Prometheus
going down or coming back. Prometheus down is one entry, not one per evaluation.

Incidents never imports this app: it hears of new incidents through incidents'
`timeline_appended` signal (connected in RunbooksConfig.ready()).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache
from django.db import transaction

from incidents.models import OPEN_STATUSES, Incident, TimelineEvent, TimelineEventType
from incidents.selectors import incident_for_update
from incidents.services import incident_event_record
from runbooks.timeline_kinds import AUTO_TRIAGE
from runbooks.timeline_text import first_sentence
from runbooks.triage import TriageResult, incident_alerts_firing_first, incident_triage
from runbooks.triage_actions import RecommendedAction, recommended_actions

log = logging.getLogger(__name__)

SOURCE = "auto-triage"
SWEEP_MAX = 50  # open incidents re-evaluated per beat run, newest first
REQUEUE_SECONDS = 30  # a poll that sees a new branch enqueues once in this long
# What opening an incident looks like on the timeline (kind, and status_changed's verb).
_OPENING_VERBS = ("reopened",)


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
    return (
        TimelineEvent.objects.filter(incident_id=incident_id, kind=AUTO_TRIAGE)
        .order_by("-occurred_at", "-id")
        .first()
    )


def is_news(result: TriageResult, last: TimelineEvent | None) -> bool:
    """Whether `result` says something the timeline's last auto-triage entry does not."""
    return bool(result.runbook_slug) and _result_key(result) != _event_key(last)


def _number(value: float | None, unit: str) -> str:
    return "no value" if value is None else f"{value:.4g}{' ' + unit if unit else ''}"


def _entry(result: TriageResult, actions: list[RecommendedAction]) -> tuple[str, dict[str, Any]]:
    """The timeline message and payload for one evaluation."""
    if result.prometheus_error:
        message = (
            f"Auto-triage ({result.runbook_slug}) could not ask Prometheus: "
            f"{result.prometheus_error}. It tries again every minute and posts when it "
            "answers; the runbook's steps still apply."
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
def auto_triage_record(
    *, incident_id: int, result: TriageResult, actions: list[RecommendedAction]
) -> TimelineEvent | None:
    """Post `result` on the timeline if it is news; None if it is not. The incident's row
    lock makes two workers evaluating one incident post once."""
    incident_for_update(incident_id=incident_id)
    if not is_news(result, auto_triage_last(incident_id=incident_id)):
        return None
    message, payload = _entry(result, actions)
    return incident_event_record(
        incident_id=incident_id, kind=AUTO_TRIAGE, message=message, payload=payload,
        source=SOURCE,
    )  # fmt: skip


def auto_triage_run(*, incident_id: int) -> TimelineEvent | None:
    """Evaluate the incident's triage now and post it if it is news. Nothing for a resolved
    incident or one no runbook matches.

    Not one transaction around the whole: the checks ask Prometheus over the network (with
    a timeout), and no row lock should wait on that; the write is one atomic call.
    """
    incident = Incident.objects.filter(pk=incident_id, status__in=OPEN_STATUSES).first()
    if incident is None:
        return None
    alerts = incident_alerts_firing_first(incident)
    result = incident_triage(incident=incident, alerts=alerts)
    if not result.runbook_slug:
        return None
    actions = recommended_actions(incident=incident, result=result, alerts=alerts, approval=False)
    return auto_triage_record(incident_id=incident_id, result=result, actions=actions)


def auto_triage_request(*, incident_id: int) -> None:
    """Ask a worker to evaluate the incident (when the current transaction commits)."""
    from runbooks.tasks import auto_triage_evaluate

    # No publish retries: with the broker down the caller (a webhook, a page poll) should
    # not wait; the next sweep evaluates the incident anyway.
    transaction.on_commit(
        lambda: auto_triage_evaluate.apply_async((incident_id,), retry=False), robust=True
    )


def auto_triage_seen(*, incident: Incident, result: TriageResult) -> TimelineEvent | None:
    """For the triage page's poll and the triage API, which just evaluated `result`: the
    last auto-triage entry (shown as the stored result), and a re-evaluation enqueued when
    `result` is news to the timeline (once per REQUEUE_SECONDS, however many poll)."""
    last = auto_triage_last(incident_id=incident.pk)
    if (
        incident.is_open
        and is_news(result, last)
        and cache.add(f"auto-triage-requested:{incident.pk}", 1, REQUEUE_SECONDS)
    ):
        auto_triage_request(incident_id=incident.pk)
    return last


def auto_triage_sweep() -> int:
    """Enqueue an evaluation of the SWEEP_MAX most recent open incidents (beat)."""
    ids = list(
        Incident.objects.filter(status__in=OPEN_STATUSES)
        .order_by("-triggered_at", "-id")
        .values_list("pk", flat=True)[:SWEEP_MAX]
    )
    for incident_id in ids:
        auto_triage_request(incident_id=incident_id)
    return len(ids)


def _opens(event: TimelineEvent) -> bool:
    if event.kind in (TimelineEventType.INCIDENT_OPENED, TimelineEventType.RUNBOOK_CHANGED):
        return True
    payload = event.payload or {}
    return event.kind == TimelineEventType.STATUS_CHANGED and payload.get("verb") in _OPENING_VERBS


def on_timeline_appended(sender: object, events: list[TimelineEvent], **kwargs: object) -> None:
    """`timeline_appended` receiver (after the commit): an incident opened, reopened or got
    another runbook, so its triage is evaluated now rather than at the next sweep."""
    for incident_id in sorted({e.incident_id for e in events if _opens(e)}):
        auto_triage_request(incident_id=incident_id)
