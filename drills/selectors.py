"""Reads of drills shared by the pages, the API and other features (the pre-launch
checklist asks `drill_last_passed`). Each runs a fixed number of queries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from drills.models import DrillPlan, DrillRun, DrillRunStatus
from incidents.models import (
    OPEN_STATUSES,
    Incident,
    IncidentStatus,
    Severity,
    TimelineEventType,
)


def _runs() -> QuerySet[DrillRun]:
    return DrillRun.objects.select_related("plan", "incident", "started_by", "stop_requested_by")


def drill_last_passed(*, namespace: str, lws: str, runbook: str | None = None) -> DrillRun | None:
    """The latest passed drill run on this target (and runbook, when given), or None. One
    query. Seeded demo runs are no evidence (the pre-launch checklist asks this)."""
    qs = _runs().filter(
        namespace=namespace, lws=lws, status=DrillRunStatus.FINISHED, passed=True, is_demo=False
    )
    if runbook is not None:
        qs = qs.filter(runbook=runbook)
    return qs.order_by("-ended_at", "-id").first()


def runbook_drill_summary(*, runbook: str) -> dict[str, Any]:
    """For the runbook page: its last passed run, its last run and its plans. Three
    queries."""
    runs = _runs().filter(runbook=runbook)
    return {
        "last_passed": runs.filter(status=DrillRunStatus.FINISHED, passed=True)
        .order_by("-ended_at", "-id")
        .first(),
        "last_run": runs.order_by("-started_at", "-id").first(),
        "plans": list(DrillPlan.objects.filter(runbook=runbook).order_by("title", "id")),
    }


def drill_plans(*, runbook: str = "") -> list[DrillPlan]:
    qs = DrillPlan.objects.select_related("created_by").order_by("runbook", "title", "id")
    return list(qs.filter(runbook=runbook) if runbook else qs)


def drill_plan_get(*, plan_id: int) -> DrillPlan | None:
    return DrillPlan.objects.select_related("created_by").filter(pk=plan_id).first()


def drill_runs(
    *, plan_id: int | None = None, runbook: str = "", namespace: str = "", lws: str = "",
    limit: int = 50,
) -> list[DrillRun]:  # fmt: skip
    qs = _runs()
    if plan_id is not None:
        qs = qs.filter(plan_id=plan_id)
    for field, value in (("runbook", runbook), ("namespace", namespace), ("lws", lws)):
        if value:
            qs = qs.filter(**{field: value})
    return list(qs.order_by("-started_at", "-id")[:limit])


def drill_run_get(*, run_id: int) -> DrillRun | None:
    """A run with its history (two queries)."""
    return _runs().prefetch_related("events__actor").filter(pk=run_id).first()


def real_sev1_since(*, since: datetime, exclude: Q | None = None) -> tuple[Incident | None, str]:
    """The first open real (not drill) SEV1 incident that opened, was reopened or fired
    again (mitigated, then firing) since `since`, leaving out those matching `exclude`;
    with how ("opened", "reopened", "fired again"). A running drill stops on it. One
    query."""
    fired_again = Q(
        events__kind=TimelineEventType.STATUS_CHANGED,
        events__occurred_at__gte=since,
        events__payload__from__in=[IncidentStatus.MITIGATED, IncidentStatus.RESOLVED],
        events__payload__to__in=[IncidentStatus.TRIGGERED, IncidentStatus.ACKNOWLEDGED],
    )
    qs = Incident.objects.filter(
        Q(triggered_at__gte=since) | Q(reopened_at__gte=since) | fired_again,
        is_drill=False,
        severity=Severity.SEV1,
        status__in=OPEN_STATUSES,
    )
    if exclude is not None:
        qs = qs.exclude(pk__in=Incident.objects.filter(exclude).values("pk"))
    incident = qs.order_by("triggered_at", "id").distinct().first()
    if incident is None:
        return None, ""
    if incident.triggered_at >= since:
        return incident, "opened"
    if incident.reopened_at is not None and incident.reopened_at >= since:
        return incident, "reopened"
    return incident, "fired again"


def real_sev1_open(
    *, since: datetime | None = None, exclude_id: int | None = None
) -> Incident | None:
    """The oldest open real (not drill, not seeded demo) SEV1 incident, triggered since
    `since` and other than `exclude_id`: a drill is not started, and a running one stops,
    while there is one. One query."""
    qs = Incident.objects.filter(
        is_drill=False, is_demo=False, severity=Severity.SEV1, status__in=OPEN_STATUSES
    )
    if since is not None:
        qs = qs.filter(triggered_at__gte=since)
    if exclude_id is not None:
        qs = qs.exclude(pk=exclude_id)
    return qs.order_by("triggered_at", "id").first()
