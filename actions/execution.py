"""The worker's side of an action run: claim it, read, plan, write once, read back.

Never applying twice rests on three things: the claim (a row lock, then a lease naming the
worker process), the stored plan and "before" snapshot (written before the write), and
writes guarded by resourceVersion or a pod's uid, so a write that already landed cannot
land again. A task redelivered after its worker died checks which of those it finds.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import partial
from typing import TypeVar

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from actions.audit import run_record
from actions.dispatch import ACTION_RUN_EXECUTE, task_send
from actions.guard.services import guard_watch_start
from actions.k8s import KubeApi, kube_api
from actions.kinds import (
    ActionError,
    ActionKind,
    Conflict,
    Plan,
    Snapshot,
    Transient,
    kind_for,
)
from actions.models import ActionRun, ActionRunStatus
from actions.preview import run_context as _context
from actions.revisions import CONFIGMAP_KINDS, config_seen

log = logging.getLogger(__name__)
T = TypeVar("T")


def worker_identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_gone(claimed_by: str) -> bool:
    """True when the claiming process is known dead: same host, pid no longer running."""
    host, _, pid = claimed_by.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _lease() -> timedelta:
    return timedelta(seconds=settings.ACTIONS_LEASE_SECONDS)


@transaction.atomic
def _claim(run_id: int, worker: str) -> tuple[ActionRun, bool] | None:
    """Lock the row and take the run: (run, resuming) or None when there is nothing to do
    (already final, cancelled before it started, or another live worker holds it)."""
    run = ActionRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        log.warning("action run %s does not exist", run_id)
        return None
    now = timezone.now()
    if run.status == ActionRunStatus.QUEUED:
        run.started_at, run.claimed_by, run.lease_expires_at = now, worker, now + _lease()
        run.attempts += 1
        run_record(
            run,
            to=ActionRunStatus.RUNNING,
            message="Started by the worker",
            fields=("started_at", "claimed_by", "lease_expires_at", "attempts"),
        )
        return run, False
    if run.status != ActionRunStatus.RUNNING:
        return None
    expired = run.lease_expires_at is None or run.lease_expires_at <= now
    if not expired and not _owner_gone(run.claimed_by):
        return None  # a duplicate delivery while the first is still working
    previous = run.claimed_by
    run.claimed_by, run.lease_expires_at = worker, now + _lease()
    run.attempts += 1
    if run.attempts > settings.ACTIONS_MAX_ATTEMPTS:
        _fail(run, "lost", f"The worker running it was lost {run.attempts - 1} times; gave up.")
        return None
    run_record(
        run,
        message=f"Resumed after the worker {previous or '(unknown)'} was lost",
        fields=("claimed_by", "lease_expires_at", "attempts"),
    )
    return run, True


def _retrying(what: str, run: ActionRun, call: Callable[[], T]) -> T:
    """Run a Kubernetes call, retrying timeouts and 5xx with exponential backoff."""
    tries = settings.ACTIONS_TRANSIENT_RETRIES
    delay = settings.ACTIONS_RETRY_BACKOFF_SECONDS
    for attempt in range(1, tries + 1):
        try:
            return call()
        except Transient as exc:
            if attempt == tries:
                raise Transient(
                    f"Kubernetes API unavailable while trying to {what}, after {tries} "
                    f"attempts: {exc.message}"
                ) from exc
            with transaction.atomic():
                run_record(
                    run,
                    message=f"Retrying {what} in {delay:g}s (attempt {attempt}/{tries}): "
                    f"{exc.message}",
                    timeline=False,
                )
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")


@contextmanager
def _atomic(run: ActionRun) -> Iterator[None]:
    """A transaction for a status move. If it rolls back, the run in memory gets its status
    back too, so the failure handler moves the run from the status the row still has (the
    transition table refuses "succeeded to failed")."""
    status = run.status
    try:
        with transaction.atomic():
            yield
    except BaseException:
        run.status = status
        raise


def _save(
    run: ActionRun,
    message: str,
    *,
    fields: tuple[str, ...],
    timeline: bool = True,
    to: str | None = None,
) -> None:
    with transaction.atomic():
        run_record(run, message=message, fields=fields, timeline=timeline, to=to)


def _fail(run: ActionRun, code: str, reason: str) -> None:
    run.error, run.error_code, run.finished_at = reason, code, timezone.now()
    run.lease_expires_at = None
    run_record(
        run,
        to=ActionRunStatus.FAILED,
        message=f"Failed: {reason}",
        payload={"error_code": code},
        fields=("error", "error_code", "finished_at", "lease_expires_at"),
    )


def _succeed(run: ActionRun, after: Snapshot | None, detail: str, note: str = "") -> None:
    run.after = after.as_dict() if after else run.after
    run.verification, run.finished_at, run.lease_expires_at = detail[:500], timezone.now(), None
    summary = (run.plan or {}).get("summary", "")
    run_record(
        run,
        to=ActionRunStatus.SUCCEEDED,
        # The before/after states are on the run's page; the timeline gets the words.
        message=f"Succeeded{note}: {summary}; read back: {detail}" if summary else detail,
        fields=("after", "verification", "finished_at", "lease_expires_at"),
    )
    # In the same transaction: a succeeded change is never left unwatched.
    guard_watch_start(run=run)


def _verify(run: ActionRun, action: ActionKind, api: KubeApi, plan: Plan) -> tuple[bool, str]:
    """Read back until the desired state holds or ACTIONS_VERIFY_SECONDS pass (a recreated
    pod or a rolled group takes the controller a moment)."""
    deadline = time.monotonic() + settings.ACTIONS_VERIFY_SECONDS
    while True:
        ok, detail = _retrying("read back", run, lambda: action.verify(api, run.params, plan))
        if ok or time.monotonic() >= deadline:
            return ok, detail
        time.sleep(settings.ACTIONS_VERIFY_INTERVAL_SECONDS)


def _apply(run: ActionRun, action: ActionKind, api: KubeApi) -> None:
    """Read, plan (guardrails), store before+plan, write; on 409 start over a bounded
    number of times, but first check whether the previous write landed after all."""
    ctx = _context(run.incident)
    conflicts = settings.ACTIONS_CONFLICT_RETRIES
    previous: tuple[Snapshot, Plan] | None = None
    for attempt in range(conflicts + 1):
        current = _retrying("read the target", run, lambda: action.read(api, run.params))
        if previous is not None and action.already_applied(current, *previous):
            _finish(run, action, api, previous[1], current, note=" (the earlier write landed)")
            return
        if action.name in CONFIGMAP_KINDS:
            config_seen(api, run.params, reason=f"before run #{run.pk}", run=run, snap=current)
        plan = action.plan(current, run.params, ctx)
        run.before, run.plan, run.phase = current.as_dict(), plan.as_dict(), "applying"
        _save(run, f"Applying: {plan.summary}", fields=("before", "plan", "phase"))
        if plan.desired == current.state:
            _succeed_locked(run, current, "already in the desired state; nothing was written")
            return
        try:
            after = _retrying("write", run, partial(action.apply, api, run.params, current, plan))
        except Conflict as exc:
            previous = (current, plan)
            if attempt < conflicts:
                _save(
                    run,
                    f"Conflict: {run.target} changed underneath ({exc.message}); re-reading "
                    f"and re-checking guardrails (retry {attempt + 1}/{conflicts})",
                    fields=(),
                )
                continue
            raise Conflict(
                f"{run.target} kept changing underneath; gave up after {conflicts} retries."
            ) from exc
        _finish(run, action, api, plan, after)
        return


def _succeed_locked(run: ActionRun, after: Snapshot | None, detail: str, note: str = "") -> None:
    with _atomic(run):
        _succeed(run, after, detail, note)


def _finish(
    run: ActionRun, action: ActionKind, api: KubeApi, plan: Plan, after: Snapshot, note: str = ""
) -> None:
    run.after, run.phase = after.as_dict(), "verifying"
    _save(run, "Written; reading back", fields=("after", "phase"), timeline=False)
    ok, detail = _verify(run, action, api, plan)
    if not ok:
        with _atomic(run):
            _fail(run, "verify", f"read-back check failed: {detail}")
        return
    if action.name in CONFIGMAP_KINDS:
        config_seen(api, run.params, reason=f"after run #{run.pk}", run=run, snap=after)
    _succeed_locked(run, after, detail, note)


def _resume(run: ActionRun, action: ActionKind, api: KubeApi) -> None:
    """A previous worker died holding this run. Finish it without writing twice."""
    if run.phase not in ("applying", "verifying") or not run.plan or not run.before:
        _apply(run, action, api)  # it died before writing anything
        return
    before, plan = Snapshot.from_dict(run.before), Plan.from_dict(run.plan)
    current = _retrying("read the target", run, lambda: action.read(api, run.params))
    if action.already_applied(current, before, plan):
        _finish(run, action, api, plan, current, note=" (the write had landed before the loss)")
    elif current.resource_version == before.resource_version:
        _apply(run, action, api)  # nothing changed: the write never happened
    else:
        with _atomic(run):
            _fail(
                run,
                "interrupted",
                f"the worker was lost mid-run and {run.target} changed since (resourceVersion "
                f"{before.resource_version} -> {current.resource_version}) without reaching "
                "the planned state, so it was not applied again. Check the current state and "
                "request a new run.",
            )


def action_run_execute(*, run_id: int, worker: str | None = None) -> None:
    claim = _claim(run_id, worker or worker_identity())
    if claim is None:
        return
    run, resuming = claim
    try:
        action = kind_for(run.kind)
        api = kube_api()
        (_resume if resuming else _apply)(run, action, api)
    except ActionError as exc:
        with _atomic(run):
            code = type(exc).__name__.lower()
            _fail(run, code, exc.message)
    except SoftTimeLimitExceeded:
        with _atomic(run):
            _fail(run, "timeout", "the run exceeded its time limit")
        raise
    except Exception as exc:  # the run must not stay "running" on a bug
        log.exception("action run %s crashed", run_id)
        with _atomic(run):
            _fail(run, "internal", f"internal error: {type(exc).__name__}: {exc}"[:1000])


def action_runs_recover() -> int:
    """Beat: re-enqueue queued runs whose message went missing and running runs whose
    worker is gone; the task's claim decides what to do with each."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.ACTIONS_REQUEUE_AFTER_SECONDS)
    ids = list(
        ActionRun.objects.filter(status=ActionRunStatus.QUEUED, queued_at__lt=stale).values_list(
            "pk", flat=True
        )
    )
    ids += list(
        ActionRun.objects.filter(
            status=ActionRunStatus.RUNNING, lease_expires_at__lt=now
        ).values_list("pk", flat=True)
    )
    for run_id in ids:
        task_send(ACTION_RUN_EXECUTE, run_id)
    return len(ids)
