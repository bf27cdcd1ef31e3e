"""Reads of action runs that the pages and the API share (constant query counts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from actions.guard.models import GuardWatch
from actions.models import ActionRun, ActionRunEvent, ActionRunStatus, ConfigRevision
from console.bounds import parse_id


@dataclass(frozen=True)
class RunFilters:
    incident: int | None = None
    status: str = ""
    kind: str = ""
    target: str = ""
    requested_by: str = ""

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> RunFilters:
        return cls(
            incident=parse_id(params.get("incident")),
            status=(params.get("status") or "").strip(),
            kind=(params.get("kind") or "").strip(),
            target=(params.get("target") or "").strip()[:200],
            requested_by=(params.get("requested_by") or "").strip()[:150],
        )


def action_run_list(*, filters: RunFilters = RunFilters()) -> QuerySet[ActionRun]:
    runs = ActionRun.objects.select_related("incident", "requested_by", "decided_by", "guard")
    if filters.incident is not None:
        runs = runs.filter(incident_id=filters.incident)
    if filters.status == "active":
        runs = runs.filter(
            status__in=(
                ActionRunStatus.AWAITING_APPROVAL,
                ActionRunStatus.QUEUED,
                ActionRunStatus.RUNNING,
            )
        )
    elif filters.status:
        runs = runs.filter(status=filters.status)
    if filters.kind:
        runs = runs.filter(kind=filters.kind)
    if filters.target:
        runs = runs.filter(target__icontains=filters.target)
    if filters.requested_by:
        runs = runs.filter(requested_by__username=filters.requested_by)
    return runs.order_by("-requested_at", "-id")


def action_run_get(*, run_id: int) -> ActionRun | None:
    events = ActionRunEvent.objects.select_related("actor").order_by("occurred_at", "id")
    return (
        ActionRun.objects.select_related(
            "incident", "requested_by", "decided_by", "undo_of", "guard"
        )
        .prefetch_related(Prefetch("events", queryset=events), "undos")
        .filter(pk=run_id)
        .first()
    )


def incident_action_runs(*, incident_id: int) -> list[ActionRun]:
    return list(
        ActionRun.objects.select_related("requested_by", "decided_by", "guard")
        .prefetch_related("undos")
        .filter(incident_id=incident_id)
        .order_by("-requested_at", "-id")
    )


def config_revisions(*, namespace: str, name: str, limit: int = 10) -> list[ConfigRevision]:
    """The newest revisions of one ConfigMap (for choosing a rollback target)."""
    return list(ConfigRevision.objects.filter(namespace=namespace, name=name)[:limit])


def run_guard(run: ActionRun) -> GuardWatch | None:
    """The run's guard, read from the select_related above (no query); None if unguarded."""
    try:
        return run.guard
    except GuardWatch.DoesNotExist:
        return None


def action_runs_waiting_count() -> int:
    """Runs queued for a worker: the "no worker" banner says how many wait. One query."""
    return ActionRun.objects.filter(status=ActionRunStatus.QUEUED).count()
