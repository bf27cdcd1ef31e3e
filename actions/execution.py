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

from actions.audit import run_record, run_text_set
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
from console.texts import Msg, msg

log = logging.getLogger(__name__)
T = TypeVar("T")


def _read_target() -> Msg:
    return msg("actions.step.read_target")


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
            message=msg("actions.run.started"),
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
        _fail(run, "lost", msg("actions.error.lost", count=run.attempts - 1))
        return None
    run_record(
        run,
        message=msg("actions.run.resumed", worker=previous)
        if previous
        else msg("actions.run.resumed_unknown"),
        fields=("claimed_by", "lease_expires_at", "attempts"),
    )
    return run, True


def _retrying(what: Msg, run: ActionRun, call: Callable[[], T]) -> T:
    """Run a Kubernetes call, retrying timeouts and 5xx with exponential backoff. `what`
    names the step ("read the target")."""
    tries = settings.ACTIONS_TRANSIENT_RETRIES
    delay = settings.ACTIONS_RETRY_BACKOFF_SECONDS
    for attempt in range(1, tries + 1):
        try:
            return call()
        except Transient as exc:
            if attempt == tries:
                raise Transient(
                    msg("actions.error.unavailable", what=what, tries=tries, detail=exc.said)
                ) from exc
            with transaction.atomic():
                retrying = msg(
                    "actions.run.retrying",
                    what=what,
                    delay=f"{delay:g}",
                    attempt=attempt,
                    tries=tries,
                    detail=exc.said,
                )
                run_record(run, message=retrying, timeline=False)
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
    message: Msg,
    *,
    fields: tuple[str, ...],
    timeline: bool = True,
    to: str | None = None,
) -> None:
    with transaction.atomic():
        run_record(run, message=message, fields=fields, timeline=timeline, to=to)


def _fail(run: ActionRun, code: str, reason: Msg) -> None:
    run_text_set(run, "error", reason)
    run.error_code, run.finished_at = code, timezone.now()
    run.lease_expires_at = None
    run_record(
        run,
        to=ActionRunStatus.FAILED,
        message=msg("actions.run.failed", reason=reason),
        payload={"error_code": code},
        fields=("error", "error_code", "finished_at", "lease_expires_at", "texts"),
    )


# How a success came about: the id of its audit and timeline line.
SUCCEEDED = "actions.run.succeeded"
LANDED = "actions.run.succeeded_landed"  # a conflict's retry found the earlier write
RESUMED = "actions.run.succeeded_resumed"  # a resumed run found the lost worker's write


def _succeed(run: ActionRun, after: Snapshot | None, detail: Msg, how: str = SUCCEEDED) -> None:
    run.after = after.as_dict() if after else run.after
    run_text_set(run, "verification", detail, limit=500)
    run.finished_at, run.lease_expires_at = timezone.now(), None
    plan = Plan.from_dict(run.plan or {})
    run_record(
        run,
        to=ActionRunStatus.SUCCEEDED,
        # The before/after states are on the run's page; the timeline gets the words.
        message=msg(how, summary=plan.summary_said, detail=detail) if plan.summary else detail,
        fields=("after", "verification", "finished_at", "lease_expires_at", "texts"),
    )
    # In the same transaction: a succeeded change is never left unwatched.
    guard_watch_start(run=run)


def _verify(run: ActionRun, action: ActionKind, api: KubeApi, plan: Plan) -> tuple[bool, Msg]:
    """Read back until the desired state holds or ACTIONS_VERIFY_SECONDS pass (a recreated
    pod or a rolled group takes the controller a moment)."""
    deadline = time.monotonic() + settings.ACTIONS_VERIFY_SECONDS
    while True:
        ok, detail = _retrying(
            msg("actions.step.read_back"), run, lambda: action.verify(api, run.params, plan)
        )
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
        current = _retrying(_read_target(), run, lambda: action.read(api, run.params))
        if previous is not None and action.already_applied(current, *previous):
            _finish(run, action, api, previous[1], current, how=LANDED)
            return
        if action.name in CONFIGMAP_KINDS:
            config_seen(api, run.params, reason=f"before run #{run.pk}", run=run, snap=current)
        plan = action.plan(current, run.params, ctx)
        run.before, run.plan, run.phase = current.as_dict(), plan.as_dict(), "applying"
        applying = msg("actions.run.applying", summary=plan.summary_said)
        _save(run, applying, fields=("before", "plan", "phase"))
        if plan.desired == current.state:
            _succeed_locked(run, current, msg("actions.run.nothing_written"))
            return
        write = partial(action.apply, api, run.params, current, plan)
        try:
            after = _retrying(msg("actions.step.write"), run, write)
        except Conflict as exc:
            previous = (current, plan)
            if attempt < conflicts:
                said = msg(
                    "actions.run.conflict",
                    target=run.target,
                    detail=exc.said,
                    retry=attempt + 1,
                    retries=conflicts,
                )
                _save(run, said, fields=())
                continue
            raise Conflict(
                msg("actions.error.kept_changing", target=run.target, retries=conflicts)
            ) from exc
        _finish(run, action, api, plan, after)
        return


def _succeed_locked(
    run: ActionRun, after: Snapshot | None, detail: Msg, how: str = SUCCEEDED
) -> None:
    with _atomic(run):
        _succeed(run, after, detail, how)


def _finish(
    run: ActionRun,
    action: ActionKind,
    api: KubeApi,
    plan: Plan,
    after: Snapshot,
    how: str = SUCCEEDED,
) -> None:
    run.after, run.phase = after.as_dict(), "verifying"
    _save(run, msg("actions.run.written"), fields=("after", "phase"), timeline=False)
    ok, detail = _verify(run, action, api, plan)
    if not ok:
        with _atomic(run):
            _fail(run, "verify", msg("actions.error.verify", detail=detail))
        return
    if action.name in CONFIGMAP_KINDS:
        config_seen(api, run.params, reason=f"after run #{run.pk}", run=run, snap=after)
    _succeed_locked(run, after, detail, how)


def _resume(run: ActionRun, action: ActionKind, api: KubeApi) -> None:
    """A previous worker died holding this run. Finish it without writing twice."""
    if run.phase not in ("applying", "verifying") or not run.plan or not run.before:
        _apply(run, action, api)  # it died before writing anything
        return
    before, plan = Snapshot.from_dict(run.before), Plan.from_dict(run.plan)
    current = _retrying(_read_target(), run, lambda: action.read(api, run.params))
    if action.already_applied(current, before, plan):
        _finish(run, action, api, plan, current, how=RESUMED)
    elif current.resource_version == before.resource_version:
        _apply(run, action, api)  # nothing changed: the write never happened
    else:
        with _atomic(run):
            said = msg(
                "actions.error.interrupted",
                target=run.target,
                before=before.resource_version,
                now=current.resource_version,
            )
            _fail(run, "interrupted", said)


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
            _fail(run, code, exc.said)
    except SoftTimeLimitExceeded:
        with _atomic(run):
            _fail(run, "timeout", msg("actions.error.timeout"))
        raise
    except Exception as exc:  # the run must not stay "running" on a bug
        log.exception("action run %s crashed", run_id)
        with _atomic(run):
            detail = f"{type(exc).__name__}: {exc}"[:1000]
            _fail(run, "internal", msg("actions.error.internal", detail=detail))


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
