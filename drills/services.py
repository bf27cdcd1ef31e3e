"""Every write to drills made on a person's behalf: plan, start, stop. The worker's side
(inject, watch, finish and score) is drills/execution.py."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, gettext_noop, pgettext_lazy

from console.errors import DomainError
from console.permissions import require
from drills import tasks
from drills import texts as t
from drills.adapters import FaultError, adapter_for
from drills.history import drill_run_record
from drills.models import (
    ACTIVE_DRILL_STATUSES,
    DrillPlan,
    DrillRun,
    DrillRunStatus,
)
from drills.permissions import RUN_DRILL
from drills.selectors import real_sev1_open
from drills.targets import drill_target_check
from drills.titles import default_title
from runbooks.catalog import load_catalog

SECONDS_MIN, SECONDS_MAX = 10, 24 * 3600
TITLE_MAX, REASON_MAX = 200, 300


def require_drill_role(actor: User, what: str | Promise) -> None:
    require(actor, RUN_DRILL, what)


def _seconds(name: str, value: Any) -> int:
    try:
        number = int(value)  # a form's or the API's value: int, str or junk
    except (TypeError, ValueError):
        raise DomainError(
            gettext_noop("%(name)s: a whole number of seconds."),
            code="invalid",
            params={"name": name},
        ) from None
    if not SECONDS_MIN <= number <= SECONDS_MAX:
        raise DomainError(
            gettext_noop("%(name)s: between %(low)s and %(high)s seconds, got %(number)s."),
            code="invalid",
            params={"name": name, "low": SECONDS_MIN, "high": SECONDS_MAX, "number": number},
        )
    return number


def drill_plan_create(
    *,
    actor: User,
    runbook: str,
    title: str,
    namespace: str,
    lws: str,
    fault: str,
    adapter: str = "simulator",
    expected_branch: str = "",
    max_duration_seconds: int = 1800,
    detect_within_seconds: int = 300,
    acknowledge_within_seconds: int = 300,
    recover_within_seconds: int = 1200,
    stop_on_real_sev1: bool = True,
) -> DrillPlan:
    """Plan a drill of `runbook` on namespace/lws. Refuses an unknown runbook or branch, a
    fault its adapter cannot aim at the target, and a target without the drill label."""
    require_drill_role(actor, gettext_lazy("plan drills"))
    rb = load_catalog().get((runbook or "").strip())
    if rb is None:
        raise DomainError(
            gettext_noop("runbook: there is no runbook %(runbook)s in the catalogue."),
            code="invalid",
            params={"runbook": repr(runbook)},
        )
    expected_branch = (expected_branch or "").strip()
    branches = [b.id for b in rb.decision_tree]
    if expected_branch and expected_branch not in branches:
        raise DomainError(
            gettext_noop(
                "expected_branch: runbook %(runbook)s has no branch %(branch)s "
                "(it has %(branches)s)."
            ),
            code="invalid",
            params={
                "runbook": rb.slug,
                "branch": repr(expected_branch),
                "branches": ", ".join(branches),
            },
        )
    # A stored default title is in the catalogue's own language (English), as every other
    # stored text, whatever language the planner reads.
    english = load_catalog().english.get(rb.slug) or rb
    title = (title or "").strip() or default_title(english.title)
    if len(title) > TITLE_MAX:
        raise DomainError(
            gettext_noop("title: at most %(limit)s characters."),
            code="invalid",
            params={"limit": TITLE_MAX},
        )
    namespace, lws, fault = ((v or "").strip() for v in (namespace, lws, fault))
    if not namespace or not lws:
        raise DomainError(
            gettext_noop("namespace and lws: both are needed to name the target."), code="invalid"
        )
    try:
        source = adapter_for(adapter)
        source.check_target(fault=fault, namespace=namespace, lws=lws)
    except FaultError as exc:
        raise DomainError(
            gettext_noop("fault: %(error)s."), code="invalid", params={"error": exc.lazy_words()}
        ) from exc
    limits = {
        name: _seconds(name, value)
        for name, value in (
            ("max_duration_seconds", max_duration_seconds),
            ("detect_within_seconds", detect_within_seconds),
            ("acknowledge_within_seconds", acknowledge_within_seconds),
            ("recover_within_seconds", recover_within_seconds),
        )
    }
    # Kubernetes is asked before any transaction is open (a slow API server must not
    # hold the database); the plan is then one INSERT, in a transaction of its own.
    drill_target_check(namespace=namespace, lws=lws)
    with transaction.atomic():
        return DrillPlan.objects.create(
            runbook=rb.slug, title=title, namespace=namespace, lws=lws, adapter=adapter,
            fault=fault, expected_branch=expected_branch,
            stop_on_real_sev1=bool(stop_on_real_sev1),
            created_by=actor, created_at=timezone.now(), **limits,
        )  # fmt: skip


def plan_snapshot(plan: DrillPlan) -> dict[str, Any]:
    fields = (
        "id", "runbook", "title", "namespace", "lws", "adapter", "fault", "expected_branch",
        "max_duration_seconds", "stop_on_real_sev1", "detect_within_seconds",
        "acknowledge_within_seconds", "recover_within_seconds",
    )  # fmt: skip
    return {f: getattr(plan, f) for f in fields}


# A drill run's status inside a sentence, lazy: English for the API, translated on pages.
_STATUS_WORDS: dict[str, Promise] = {
    "starting": pgettext_lazy("drill run status in a sentence", "starting"),
    "running": pgettext_lazy("drill run status in a sentence", "running"),
    "stopping": pgettext_lazy("drill run status in a sentence", "stopping"),
    "finished": pgettext_lazy("drill run status in a sentence", "finished"),
    "failed": pgettext_lazy("drill run status in a sentence", "could not run"),
}


def _status_word(status: str) -> str | Promise:
    return _STATUS_WORDS.get(status, status)


def _busy(run: DrillRun) -> DomainError:
    return DomainError(
        gettext_noop("drill run #%(id)s (%(runbook)s) is already %(status)s on %(target)s."),
        code="busy",
        params={
            "id": run.pk,
            "runbook": run.runbook,
            "status": run.status,  # the value, as before: the API's clients may read it
            "target": f"{run.namespace}/{run.lws}",
        },
    )


def drill_start(*, plan_id: int, actor: User) -> DrillRun:
    """Start a drill: check the target's label again, refuse while a real SEV1 is open
    (when the plan stops on one), then record the run; the worker injects the fault once
    this commits."""
    require_drill_role(actor, gettext_lazy("run drills"))
    plan = DrillPlan.objects.filter(pk=plan_id).first()
    if plan is None:
        raise DomainError(
            gettext_noop("Drill plan #%(id)s does not exist."),
            code="not_found",
            params={"id": plan_id},
        )
    drill_target_check(namespace=plan.namespace, lws=plan.lws)
    if plan.stop_on_real_sev1:
        sev1 = real_sev1_open()
        if sev1 is not None:
            raise DomainError(
                gettext_noop(
                    "Incident #%(id)s (SEV1) is open; a drill would stop at once. "
                    "Drill when no real SEV1 is open."
                ),
                code="busy",
                params={"id": sev1.pk},
            )
    try:
        with transaction.atomic():
            run = DrillRun.objects.create(
                plan=plan, runbook=plan.runbook, namespace=plan.namespace, lws=plan.lws,
                plan_snapshot=plan_snapshot(plan), status=DrillRunStatus.STARTING,
                started_by=actor, started_at=timezone.now(),
            )  # fmt: skip
            started = t.event_started(
                user=actor.get_username(), runbook=plan.runbook, fault=plan.fault,
                adapter=plan.adapter, target=plan.target,
            )  # fmt: skip
            drill_run_record(
                run, "started", started, actor=actor, payload={"plan": run.plan_snapshot}
            )
            _enqueue_on_commit("inject", run.pk)
    except IntegrityError:
        busy = DrillRun.objects.filter(
            namespace=plan.namespace, lws=plan.lws, status__in=ACTIVE_DRILL_STATUSES
        ).first()
        if busy is None:
            raise
        raise _busy(busy) from None
    return run


@transaction.atomic
def drill_stop(*, run_id: int, actor: User, reason: str = "") -> DrillRun:
    """Ask for the drill to stop now: the worker clears the fault (taking back only what
    it changed) and the run ends aborted, with this reason."""
    require_drill_role(actor, gettext_lazy("stop drills"))
    run = DrillRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise DomainError(
            gettext_noop("Drill run #%(id)s does not exist."),
            code="not_found",
            params={"id": run_id},
        )
    if not run.is_active:
        raise DomainError(
            gettext_noop("Drill run #%(id)s is already %(status)s."),
            params={"id": run.pk, "status": _status_word(run.status)},
        )
    if run.status == DrillRunStatus.STOPPING:
        return run
    reason = (reason or "").strip()[:200]
    run.status = DrillRunStatus.STOPPING
    run.stop_requested_by = actor
    why = t.stop_by(user=actor.get_username(), reason=reason)
    t.row_text_set(run, "stop_reason", why, limit=300)
    run.save(update_fields=["status", "stop_requested_by", "stop_reason", "texts"])
    drill_run_record(run, "stop_requested", why, actor=actor, incident_too=True)
    _enqueue_on_commit("finish", run.pk)
    return run


def _enqueue_on_commit(what: str, run_id: int) -> None:
    task = tasks.drill_run_inject if what == "inject" else tasks.drill_run_finish
    transaction.on_commit(lambda: task.delay(run_id))
