"""The worker's side of a drill: inject the fault, watch the run (link the incident the
real alert opened, stop on the plan's stop condition, notice recovery), and finish it
(clear the fault, which takes back only what the fault changed, then score or abort).
Each step calls the fault source and Kubernetes with no transaction open, then records
under the run's row lock, so the beat watcher and a stop request never finish a run
twice. A real SEV1 elsewhere stops a drill at once (the timeline's announcement, wired in
drills/apps.py) and on the watcher's next look (the backstop). Every text it writes is
built in drills/texts.py and stored as parts, in English beside them."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from console.errors import DomainError
from console.texts import Msg, msg
from drills import texts as t
from drills.adapters import FaultError, adapter_for
from drills.history import drill_run_record
from drills.models import DrillRun, DrillRunStatus
from drills.restore import drill_run_record_restore, injected_text
from drills.scoring import drill_scorecard
from drills.selectors import real_sev1_since
from drills.targets import drill_target_check
from drills.timeline_kinds import DRILL
from incidents.models import Incident, IncidentStatus, Severity
from incidents.services import incident_drill_mark

log = logging.getLogger(__name__)
RECOVERED = (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED)


def _locked(run_id: int) -> DrillRun | None:
    return DrillRun.objects.select_for_update().select_related("plan").filter(pk=run_id).first()


def _adapter_kw(run: DrillRun) -> dict[str, Any]:
    return {"namespace": run.namespace, "lws": run.lws}


# The refusals of drills/targets.py, as parts (the same wording, so one translation).
_TARGET_REFUSALS = {
    "not_a_drill_target": "drills.error.not_a_target",
    "unavailable": "drills.error.target_unchecked",
}


def _failure_text(exc: DomainError | FaultError) -> Msg:
    if isinstance(exc, FaultError):
        return exc.text
    key = _TARGET_REFUSALS.get(exc.code)
    if key is not None:
        try:
            return msg(key, **{name: str(value) for name, value in exc.params.items()})
        except TypeError:
            pass
    return t.as_written(str(exc))


def drill_run_inject(*, run_id: int) -> DrillRun | None:
    """Inject the plan's fault, once. Kubernetes and the fault source are called with no
    transaction open (a slow API server must not hold the database, issue 23); the
    outcome is then recorded under the run's lock, by one copy only. A redelivered task
    finds the run past STARTING and does nothing; two copies at the same moment set the
    same fault twice, which is still one fault."""
    run = DrillRun.objects.filter(pk=run_id).first()
    if run is None or run.status != DrillRunStatus.STARTING:
        return run
    plan = run.plan_snapshot
    failure: DomainError | FaultError | None = None
    labels: dict[str, str] = {}
    answer: dict[str, Any] = {}
    try:
        labels = drill_target_check(namespace=run.namespace, lws=run.lws)
        answer = adapter_for(plan["adapter"]).inject(fault=plan["fault"], **_adapter_kw(run))
    except (DomainError, FaultError) as exc:
        failure = exc
    with transaction.atomic():
        run = _locked(run_id)
        if run is None or run.status != DrillRunStatus.STARTING:
            late = failure is None
        else:
            late = False
            if failure is not None:
                why = _failure_text(failure)
                run.status = DrillRunStatus.FAILED
                t.row_text_set(run, "error", why)
                run.ended_at, run.passed = timezone.now(), False
                run.save(update_fields=["status", "error", "texts", "ended_at", "passed"])
                drill_run_record(run, "failed", t.event_start_failed(why))
                return run
            run.status, run.injected_at = DrillRunStatus.RUNNING, timezone.now()
            changes = [c for c in answer.get("changes") or [] if isinstance(c, dict)]
            run.fault_changes = changes  # what the end may take back, and nothing else
            run.save(update_fields=["status", "injected_at", "fault_changes"])
            injected = t.event_injected(
                fault=plan["fault"], adapter=plan["adapter"], target=f"{run.namespace}/{run.lws}",
                changes=injected_text(changes),
            )  # fmt: skip
            drill_run_record(
                run, "injected", injected, payload={"answer": answer, "target_labels": labels}
            )
    if late and run is not None:
        # Stopped (and perhaps already cleared) while this copy was injecting: take the
        # fault back out rather than leave it behind a finished drill.
        try:
            adapter_for(plan["adapter"]).clear(fault=plan["fault"], **_adapter_kw(run))
        except FaultError as exc:
            log.warning("drill run #%s: could not clear a late injection: %s", run_id, exc)
    return run


def _about_target(run: DrillRun) -> Q:
    return Q(namespace=run.namespace, group_labels__lws=run.lws) | Q(
        alerts__labels__namespace=run.namespace, alerts__labels__lws=run.lws
    )


def _matching_incident(run: DrillRun) -> Incident | None:
    """The first incident opened since the injection whose alerts are about the drill's
    target and that no drill run has linked yet. Ingest may already have opened it as a
    drill (drills/claims.py), so `is_drill` is not a test here."""
    return (
        Incident.objects.filter(
            _about_target(run), triggered_at__gte=run.injected_at, drill_runs__isnull=True
        )
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
        message=t.timeline_linked(
            run_id=run.pk, fault=run.plan_snapshot["fault"], target=f"{run.namespace}/{run.lws}"
        ),
        payload={"drill_run": run.pk, "step": "linked",
                 "url": reverse("drills:drill-run", args=[run.pk])},
    )  # fmt: skip
    drill_run_record(
        run,
        "incident_linked",
        t.event_incident_linked(incident_id=incident.pk, title=incident.title),
    )


def _stop_reason(run: DrillRun) -> Msg | None:
    plan = run.plan_snapshot
    assert run.injected_at is not None  # a running drill's fault was injected
    if timezone.now() - run.injected_at >= timedelta(seconds=plan["max_duration_seconds"]):
        return t.stop_max_duration(plan["max_duration_seconds"])
    if plan.get("stop_on_real_sev1", True):
        # A SEV1 about the drill's own target is taken as the fault's effect (one fault
        # can open several incidents there); any other one is real and stops the drill.
        sev1, how = real_sev1_since(since=run.started_at, exclude=_about_target(run))
        if sev1 is not None:
            return t.stop_real_sev1(incident_id=sev1.pk, how=how, title=sev1.title[:120])
    return None


def drill_runs_stop_for_real_sev1(*, incident_ids: list[int]) -> list[int]:
    """The timeline's announcement that incidents opened or fired again: stop at once each
    running drill that stops on a real SEV1, if one of them is (the beat watcher is the
    backstop). Database only; the fault is cleared by the finish task, queued on commit.
    Returns the runs stopped."""
    if not Incident.objects.filter(
        pk__in=incident_ids, is_drill=False, severity=Severity.SEV1
    ).exists():
        return []
    stopped = []
    ids = DrillRun.objects.filter(status=DrillRunStatus.RUNNING).values_list("pk", flat=True)
    for run_id in list(ids):
        with transaction.atomic():
            run = _locked(run_id)
            if run is None or run.status != DrillRunStatus.RUNNING:
                continue
            if run.incident_id is None:
                _link(run)  # the drill's own incident is not a reason to stop
            reason = _stop_reason(run)
            if reason is None or not t.is_real_sev1_stop(reason):
                continue
            _request_stop(run, reason)
            transaction.on_commit(partial(_enqueue_finish, run_id))
            stopped.append(run_id)
    return stopped


def _enqueue_finish(run_id: int) -> None:
    # cycle: drills.tasks imports this module
    from drills import tasks

    tasks.drill_run_finish.delay(run_id)


def _request_stop(run: DrillRun, reason: Msg) -> None:
    run.status = DrillRunStatus.STOPPING
    t.row_text_set(run, "stop_reason", reason, limit=300)
    run.save(update_fields=["status", "stop_reason", "texts"])
    drill_run_record(run, "stop_requested", reason, incident_too=True)


def drill_run_check(*, run_id: int) -> DrillRun | None:
    """One look at a running drill: link its incident, then stop or finish if it is time."""
    with transaction.atomic():
        run = _locked(run_id)
        if run is None:
            return None
        aborted = True
        reason: Msg | None
        if run.status == DrillRunStatus.STOPPING:
            reason = _stored_reason(run)
        elif run.status != DrillRunStatus.RUNNING:
            return run
        else:
            if run.incident_id is None:
                _link(run)
            reason = _stop_reason(run)
            if reason is not None:
                _request_stop(run, reason)
            elif run.incident is not None and run.incident.status in RECOVERED:
                # Ran its course: the only ending judged against the criteria.
                reason = t.end_recovered(incident_id=run.incident.pk, status=run.incident.status)
                aborted = False
            else:
                return run
    return _finish(run_id, reason, aborted=aborted)  # after the commit: the source is called


def _stored_reason(run: DrillRun) -> Msg:
    """Why the run was asked to stop, as recorded (its parts, or the English of a run
    asked before texts had ids)."""
    if not run.stop_reason:
        return t.stop_stopped()
    return t.row_text(run, "stop_reason")


def drill_run_finish(*, run_id: int) -> DrillRun | None:
    """Finish a run someone (or the real-SEV1 watch) asked to stop: aborted."""
    return _finish(run_id, None, aborted=True)


FINISHABLE = (DrillRunStatus.STOPPING, DrillRunStatus.RUNNING)


def _finish(run_id: int, reason: Msg | None, *, aborted: bool) -> DrillRun | None:
    """Clear the fault, with no transaction open (the fault source may be slow): the
    source takes back only what the fault changed, where it still holds the fault's value,
    and reports it; the fleet is never reset. Then record that report and score (a drill
    that ran its course) or abort (every other ending) under the run's lock. Clearing
    twice (the watcher and the stop button at once) is harmless; only one copy scores. If
    the fault source does not answer, the run stays `stopping` and the watcher retries."""
    run = DrillRun.objects.filter(pk=run_id).first()
    if run is None or run.status not in FINISHABLE:
        return run
    plan = run.plan_snapshot
    failure: FaultError | None = None
    answer: dict[str, Any] = {}
    try:
        answer = adapter_for(plan["adapter"]).clear(fault=plan["fault"], **_adapter_kw(run))
    except FaultError as exc:
        failure = exc
    with transaction.atomic():
        run = _locked(run_id)
        if run is None:
            return run
        if run.status not in FINISHABLE:
            # Scored by another copy meanwhile. If this copy's clear was the one that
            # took something back, its report still belongs on the record.
            if answer.get("report") and not run.restored:
                drill_run_record_restore(run, answer)
            return run
        reason = reason or _stored_reason(run)
        if failure is not None:
            if run.status != DrillRunStatus.STOPPING:
                run.status = DrillRunStatus.STOPPING
                t.row_text_set(run, "stop_reason", reason, limit=300)
                run.save(update_fields=["status", "stop_reason", "texts"])
            drill_run_record(run, "clear_failed", t.event_clear_failed(failure.text))
            return run
        drill_run_record(
            run, "cleared", t.event_cleared(fault=plan["fault"], reason=reason),
            payload={"cleared": answer}, incident_too=True,
        )  # fmt: skip
        drill_run_record_restore(run, answer)
        return _score(run, reason, aborted=aborted)


def _score(run: DrillRun, reason: Msg, *, aborted: bool) -> DrillRun:
    if run.incident is not None:
        run.incident.refresh_from_db()
    scorecard = drill_scorecard(run=run, ended_reason=reason, aborted=aborted)
    run.status, run.ended_at = DrillRunStatus.FINISHED, timezone.now()
    run.scorecard, run.passed = scorecard, scorecard["passed"]
    run.outcome = scorecard["outcome"]
    if aborted and (run.texts or {}).get("stop_reason") != reason.stored:
        t.row_text_set(run, "stop_reason", reason, limit=300)
    run.save(
        update_fields=["status", "ended_at", "scorecard", "passed", "outcome", "stop_reason",
                       "texts"]
    )  # fmt: skip
    failed = [c["title"] for c in scorecard["criteria"] if not c["passed"]]
    verdict = t.event_scored(
        outcome=run.outcome, reason=reason, failed=len(failed), total=len(scorecard["criteria"])
    )
    drill_run_record(
        run, "scored", verdict,
        payload={"outcome": run.outcome, "passed": run.passed,
                 "failed": [] if aborted else failed},
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
