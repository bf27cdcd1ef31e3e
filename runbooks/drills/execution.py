"""The worker's side of a drill: inject the fault, watch the run (link the incident the
real alert opened, stop on the plan's stop condition, notice recovery), and finish it
(clear the fault, restore the baseline, score). Each step locks the run's row, so the
beat watcher and a stop request never finish a run twice."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from console.errors import DomainError
from incidents.models import Incident, IncidentStatus
from incidents.services import incident_drill_mark
from runbooks.drills.adapters import FaultError, adapter_for
from runbooks.drills.history import drill_run_record
from runbooks.drills.models import DrillRun, DrillRunStatus
from runbooks.drills.scoring import drill_scorecard
from runbooks.drills.services import drill_target_check, real_sev1_open
from runbooks.timeline_kinds import DRILL

log = logging.getLogger(__name__)
RECOVERED = (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED)


def _locked(run_id: int) -> DrillRun | None:
    return DrillRun.objects.select_for_update().select_related("plan").filter(pk=run_id).first()


def _adapter_kw(run: DrillRun) -> dict:
    return {"namespace": run.namespace, "lws": run.lws}


@transaction.atomic
def drill_run_inject(*, run_id: int) -> DrillRun | None:
    """Inject the plan's fault, once. A redelivered task finds the run past STARTING and
    does nothing."""
    run = _locked(run_id)
    if run is None or run.status != DrillRunStatus.STARTING:
        return run
    plan = run.plan_snapshot
    try:
        labels = drill_target_check(namespace=run.namespace, lws=run.lws)
        answer = adapter_for(plan["adapter"]).inject(fault=plan["fault"], **_adapter_kw(run))
    except (DomainError, FaultError) as exc:
        run.status, run.error, run.ended_at = DrillRunStatus.FAILED, str(exc), timezone.now()
        run.passed = False
        run.save(update_fields=["status", "error", "ended_at", "passed"])
        drill_run_record(run, "failed", f"The drill did not start: {exc}")
        return run
    run.status, run.injected_at = DrillRunStatus.RUNNING, timezone.now()
    run.save(update_fields=["status", "injected_at"])
    where = f"{run.namespace}/{run.lws}"
    drill_run_record(
        run, "injected", f"Injected {plan['fault']} via {plan['adapter']} on {where}",
        payload={"answer": answer, "target_labels": labels},
    )  # fmt: skip
    return run


def _matching_incident(run: DrillRun) -> Incident | None:
    """The first non-drill incident opened since the injection whose alerts are about the
    drill's target."""
    about = Q(namespace=run.namespace, group_labels__lws=run.lws) | Q(
        alerts__labels__namespace=run.namespace, alerts__labels__lws=run.lws
    )
    return (
        Incident.objects.filter(about, is_drill=False, triggered_at__gte=run.injected_at)
        .order_by("triggered_at", "id")
        .distinct()
        .first()
    )


def _link(run: DrillRun) -> None:
    incident = _matching_incident(run)
    if incident is None:
        return
    run.incident = incident
    run.save(update_fields=["incident"])
    incident_drill_mark(
        incident_id=incident.pk,
        kind=DRILL,
        message=f"This incident is drill run #{run.pk} ({run.plan_snapshot['fault']} on "
        f"{run.namespace}/{run.lws}): left out of reports and MTTx by default.",
        payload={"drill_run": run.pk, "step": "linked",
                 "url": reverse("runbooks:drill-run", args=[run.pk])},
    )  # fmt: skip
    drill_run_record(run, "incident_linked", f"Incident #{incident.pk} opened: {incident.title}")


def _stop_reason(run: DrillRun) -> str:
    plan = run.plan_snapshot
    assert run.injected_at is not None  # a running drill's fault was injected
    if timezone.now() - run.injected_at >= timedelta(seconds=plan["max_duration_seconds"]):
        return f"automatic stop: the drill reached its maximum of {plan['max_duration_seconds']} s"
    if plan.get("stop_on_real_sev1", True):
        sev1 = real_sev1_open(since=run.started_at, exclude_id=run.incident_id)
        if sev1 is not None:
            return f"automatic stop: a real SEV1 incident #{sev1.pk} opened ({sev1.title[:120]})"
    return ""


@transaction.atomic
def drill_run_check(*, run_id: int) -> DrillRun | None:
    """One look at a running drill: link its incident, then stop or finish if it is time."""
    run = _locked(run_id)
    if run is None:
        return None
    if run.status == DrillRunStatus.STOPPING:
        return _finish(run, run.stop_reason or "stopped")
    if run.status != DrillRunStatus.RUNNING:
        return run
    if run.incident_id is None:
        _link(run)
    reason = _stop_reason(run)
    if reason:
        run.status, run.stop_reason = DrillRunStatus.STOPPING, reason[:300]
        run.save(update_fields=["status", "stop_reason"])
        drill_run_record(run, "stop_requested", reason, incident_too=True)
        return _finish(run, reason)
    if run.incident is not None and run.incident.status in RECOVERED:
        return _finish(run, f"recovered: incident #{run.incident_id} is {run.incident.status}")
    return run


@transaction.atomic
def drill_run_finish(*, run_id: int) -> DrillRun | None:
    """Finish a run someone asked to stop (the stop button's task)."""
    run = _locked(run_id)
    if run is None or run.status not in (DrillRunStatus.STOPPING, DrillRunStatus.RUNNING):
        return run
    return _finish(run, run.stop_reason or "stopped")


def _finish(run: DrillRun, reason: str) -> DrillRun:
    """Clear the fault and restore the baseline, then score. If the fault source does not
    answer, the run stays `stopping` and the watcher tries again."""
    plan = run.plan_snapshot
    try:
        adapter = adapter_for(plan["adapter"])
        cleared = adapter.clear(fault=plan["fault"], **_adapter_kw(run))
        restored = adapter.restore_baseline(**_adapter_kw(run))
    except FaultError as exc:
        if run.status != DrillRunStatus.STOPPING:
            run.status, run.stop_reason = DrillRunStatus.STOPPING, reason[:300]
            run.save(update_fields=["status", "stop_reason"])
        drill_run_record(run, "clear_failed", f"Could not clear the fault yet: {exc}")
        return run
    message = f"Cleared {plan['fault']} and restored the baseline ({reason})"
    if restored.get("note"):
        message += f"; note: {restored['note']}"
    drill_run_record(
        run, "cleared", message, payload={"cleared": cleared, "restored": restored},
        incident_too=True,
    )  # fmt: skip
    if run.incident is not None:
        run.incident.refresh_from_db()
    scorecard = drill_scorecard(run=run, ended_reason=reason)
    run.status, run.ended_at = DrillRunStatus.FINISHED, timezone.now()
    run.scorecard, run.passed = scorecard, scorecard["passed"]
    run.save(update_fields=["status", "ended_at", "scorecard", "passed"])
    failed = [c["title"] for c in scorecard["criteria"] if not c["passed"]]
    verdict = (
        "PASSED"
        if run.passed
        else f"FAILED ({len(failed)} of {len(scorecard['criteria'])} criteria)"
    )
    drill_run_record(
        run, "scored", f"Scorecard: {verdict}", payload={"passed": run.passed, "failed": failed},
        incident_too=True,
    )  # fmt: skip
    return run


def drill_runs_watch() -> int:
    """Beat: look at every active run once. Returns how many were looked at."""
    ids = list(
        DrillRun.objects.filter(
            status__in=[DrillRunStatus.RUNNING, DrillRunStatus.STOPPING]
        ).values_list("pk", flat=True)
    )
    for run_id in ids:
        try:
            drill_run_check(run_id=run_id)
        except Exception:  # one broken run must not stop the others being watched
            log.exception("drill run #%s: check failed", run_id)
    return len(ids)
