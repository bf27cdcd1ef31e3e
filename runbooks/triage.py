"""Live triage: run an incident's runbook checks against Prometheus right now and say
which branch of the decision tree the fleet is in.

A read: nothing is written. It never raises because Prometheus is down or a label is
missing; those become check states ("error", "needs_label") the page and API show.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from incidents.models import Alert, AlertStatus, Incident
from runbooks import prometheus
from runbooks.catalog import load_catalog, runbook_for_labels
from runbooks.decisions import evaluate
from runbooks.placeholders import fill_promql, missing
from runbooks.schema import Check, Runbook

TRIAGE_STATES = ("firing", "ok", "no_data", "error", "needs_label")
NO_DATA = "the query returned no data"  # English for the API; the page translates it


@dataclass(frozen=True)
class CheckResult:
    id: str
    question: str
    promql: str  # filled when every label was there, else the template
    value: float | None
    state: str  # one of TRIAGE_STATES
    comparator: str
    threshold: float
    unit: str
    message: str
    needs: tuple[str, ...] = ()  # the labels a "needs_label" check lacks (the page says so)


@dataclass(frozen=True)
class TriageResult:
    incident_id: int
    runbook_slug: str  # "" when no runbook matches
    runbook_title: str
    checks: tuple[CheckResult, ...]
    branch_id: str
    diagnosis: str
    recommended_actions: tuple[str, ...]
    because: tuple[tuple[str, str], ...]  # (check id, state)
    prometheus_url: str
    prometheus_error: str
    evaluated_at: datetime
    message: str = ""


def incident_alerts_firing_first(incident: Incident) -> list:
    # Newest firing first, then anything else newest first: one query.
    return _firing_first(list(incident.alerts.order_by("-starts_at", "-id")))


def _firing_first(alerts: list[Alert]) -> list[Alert]:
    return sorted(alerts, key=lambda a: a.status != AlertStatus.FIRING)


def alerts_firing_first_many(incident_ids: Sequence[int]) -> dict[int, list[Alert]]:
    """incident_alerts_firing_first for many incidents in one query (auto-triage's batch),
    with only the columns triage reads."""
    by_incident: dict[int, list[Alert]] = {pk: [] for pk in incident_ids}
    if not incident_ids:
        return by_incident
    qs = Alert.objects.filter(incident_id__in=incident_ids).order_by("-starts_at", "-id")
    for alert in qs.only("id", "incident_id", "labels", "status", "starts_at"):
        if alert.incident_id is not None:  # always, given the filter; for the type checker
            by_incident[alert.incident_id].append(alert)
    return {pk: _firing_first(alerts) for pk, alerts in by_incident.items()}


def incident_runbook(incident: Incident, alerts: list) -> Runbook | None:
    catalog = load_catalog()
    if incident.runbook and catalog.get(incident.runbook):
        return catalog.get(incident.runbook)
    for alert in alerts:
        found = runbook_for_labels(alert.labels or {}, catalog)
        if found:
            return found
    return None


def incident_labels(incident: Incident, alerts: list) -> dict[str, Any]:
    labels: dict[str, Any] = {}
    if alerts:
        labels.update(alerts[0].labels or {})
    if not labels.get("namespace") and incident.namespace:
        labels["namespace"] = incident.namespace
    return labels


def _run_check(check: Check, labels: Mapping[str, Any], down: list[str]) -> CheckResult:
    def result(
        state: str,
        value: float | None = None,
        message: str = "",
        promql: str = "",
        needs: tuple[str, ...] = (),
    ):
        return CheckResult(
            id=check.id, question=check.question, promql=promql or check.promql,
            value=value, state=state, comparator=check.comparator,
            threshold=check.threshold, unit=check.unit, message=message, needs=needs,
        )  # fmt: skip

    needs = missing(check.promql, labels)
    if needs:
        return result("needs_label", message="needs label " + ", ".join(needs), needs=tuple(needs))
    promql = fill_promql(check.promql, labels)
    if down:
        return result("error", message=down[0], promql=promql)
    try:
        data = prometheus.query(promql)
    except prometheus.PrometheusUnavailable as exc:
        if " answered 4" not in exc.message:  # Prometheus itself is down: stop asking
            down.append(exc.message)
        return result("error", message=exc.message, promql=promql)
    value, note = prometheus.single_value(data or {})
    if value is not None and math.isnan(value):
        value = None
    state = check.state_for(value)
    if state == "no_data" and not note:
        note = NO_DATA
    return result(state, value=value, message=note, promql=promql)


def incident_triage(
    *, incident: Incident, alerts: list | None = None, down: list[str] | None = None
) -> TriageResult:
    """`alerts`: incident_alerts_firing_first(incident), when the caller already has it.
    `down`: shared by a caller evaluating many incidents, so a Prometheus found down for
    one is not asked again for the next (it collects why it was down)."""
    if alerts is None:
        alerts = incident_alerts_firing_first(incident)
    runbook = incident_runbook(incident, alerts)
    now = timezone.now()
    url = prometheus.base_url()
    if runbook is None:
        return TriageResult(
            incident_id=incident.pk, runbook_slug="", runbook_title="", checks=(),
            branch_id="", diagnosis="", recommended_actions=(), because=(),
            prometheus_url=url, prometheus_error="", evaluated_at=now,
            message="No runbook in the catalogue matches this incident's alerts.",
        )  # fmt: skip
    labels = incident_labels(incident, alerts)
    down = [] if down is None else down
    checks = tuple(_run_check(c, labels, down) for c in runbook.triage)
    # The decision tree knows firing/ok/no_data/error; a check that could not be asked
    # for lack of a label is as unknown as one without data.
    states = {c.id: ("no_data" if c.state == "needs_label" else c.state) for c in checks}
    decision = evaluate(runbook, states)
    # This incident's own checks that met a Prometheus found down (by it or the batch).
    error = next((c.message for c in checks if c.state == "error" and c.message in down), "")
    return TriageResult(
        incident_id=incident.pk,
        runbook_slug=runbook.slug,
        runbook_title=runbook.title,
        checks=checks,
        branch_id=decision.branch.id,
        diagnosis=decision.branch.diagnosis,
        recommended_actions=tuple(decision.branch.recommended_actions),
        because=tuple(decision.because),
        prometheus_url=url,
        prometheus_error=error,
        evaluated_at=now,
    )
