"""Golden-signal charts for an incident: one Prometheus range query per signal the
incident's runbook names, over the incident window, shaped for plotly in the browser.

A read: nothing is written. It never raises because Prometheus is down or a label is
missing; the result says so (`prometheus_error`, a chart's `message`) and the page shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from incidents.models import Incident
from runbooks import prometheus
from runbooks.placeholders import fill_promql, missing
from runbooks.schema import Runbook, Signal
from runbooks.triage import incident_alerts_firing_first, incident_labels, incident_runbook

LEAD_IN = timedelta(minutes=15)  # the window starts this long before impact
# An alert may say it started in year 1 or 9999 (Alertmanager passes on what it is given):
# the window stays within a year before its end, after the Unix epoch and before now.
MAX_WINDOW = timedelta(days=366)
FLOOR = datetime(1970, 1, 1, tzinfo=UTC) + MAX_WINDOW + LEAD_IN
TARGET_POINTS = 120
MIN_STEP_SECONDS = 5
MAX_SERIES = 10  # per chart; more lines are unreadable anyway


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    unit: str
    promql: str  # filled, or the template when a label is missing
    series: tuple[dict[str, Any], ...] = ()  # {"name", "x": [UTC times], "y": [numbers]}
    message: str = ""  # why there is no line ("needs label pod", "no data", a 4xx)

    def data(self, marks: dict[str, str]) -> dict[str, Any]:
        """What the browser needs to draw it (embedded with json_script)."""
        return {
            "title": self.title,
            "unit": self.unit,
            "series": list(self.series),
            "marks": marks,
            "message": self.message,
        }


@dataclass(frozen=True)
class IncidentCharts:
    runbook: Runbook | None
    labels: dict[str, Any]
    start: datetime
    end: datetime
    step: int
    charts: tuple[Chart, ...] = ()
    marks: dict[str, str] = field(default_factory=dict)  # label -> UTC time, vertical lines
    prometheus_url: str = ""
    prometheus_error: str = ""


def _utc(moment: datetime) -> str:
    """Plotly reads "YYYY-MM-DD HH:MM:SS" as a date; the axis says UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def incident_window(
    incident: Incident, *, tail: timedelta = timedelta(0)
) -> tuple[datetime, datetime, int]:
    """From impact (or detection, whichever is earlier) minus the lead-in, to resolution
    (plus `tail`, never past now) or now; a step that gives about TARGET_POINTS points."""
    now = timezone.now()

    def clamp(moment: datetime) -> datetime:
        return min(max(moment, FLOOR), now)

    begin = clamp(min(t for t in (incident.started_at, incident.triggered_at) if t is not None))
    end = min(clamp(incident.resolved_at) + tail, now) if incident.resolved_at else now
    start = max(begin, end - MAX_WINDOW) - LEAD_IN
    if end <= start:
        end = start + LEAD_IN
    step = max(MIN_STEP_SECONDS, math.ceil((end - start).total_seconds() / TARGET_POINTS))
    return start, end, step


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) or math.isinf(value) else value


def _series(data: dict[str, Any], title: str) -> tuple[dict[str, Any], ...]:
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, list):
        return ()
    out = []
    for item in result[:MAX_SERIES]:
        metric = {k: v for k, v in (item.get("metric") or {}).items() if k != "__name__"}
        name = ", ".join(f"{k}={v}" for k, v in sorted(metric.items())) or title
        points = item.get("values") or []
        out.append(
            {
                "name": name,
                "x": [_utc(datetime.fromtimestamp(float(t), UTC)) for t, _ in points],
                "y": [_number(v) for _, v in points],
            }
        )
    return tuple(out)


def _chart(signal: Signal, labels: dict[str, Any], window, down: list[str]) -> Chart:
    start, end, step = window
    needs = missing(signal.promql, labels)
    base = partial(Chart, signal.id, signal.title, signal.unit)
    if needs:
        return base(
            promql=signal.promql, message=_("needs label %(labels)s") % {"labels": ", ".join(needs)}
        )
    promql = fill_promql(signal.promql, labels)
    if down:
        return base(promql=promql, message=down[0])
    try:
        data = prometheus.query_range(
            promql, start=start.timestamp(), end=end.timestamp(), step=step
        )
    except prometheus.PrometheusUnavailable as exc:
        if " answered 4" not in exc.message:  # Prometheus itself is down: stop asking
            down.append(exc.message)
        return base(promql=promql, message=exc.message)
    series = _series(data or {}, signal.title)
    message = "" if any(s["x"] for s in series) else _("the query returned no data")
    return base(promql=promql, series=series, message=message)


def incident_charts(*, incident: Incident, tail: timedelta = timedelta(0)) -> IncidentCharts:
    alerts = incident_alerts_firing_first(incident)
    runbook = incident_runbook(incident, alerts)
    labels = incident_labels(incident, alerts)
    start, end, step = incident_window(incident, tail=tail)
    # The marks' names are drawn on the charts as they are: in the viewer's language.
    marks = {_("triggered"): _utc(incident.triggered_at)}
    if incident.started_at:
        marks[_("impact start")] = _utc(incident.started_at)
    if incident.resolved_at:
        marks[_("resolved")] = _utc(incident.resolved_at)
    result = IncidentCharts(
        runbook=runbook, labels=labels, start=start, end=end, step=step, marks=marks,
        prometheus_url=prometheus.base_url(),
    )  # fmt: skip
    if runbook is None:
        return result
    down: list[str] = []
    charts = tuple(_chart(s, labels, (start, end, step), down) for s in runbook.golden_signals)
    return IncidentCharts(
        runbook=runbook, labels=labels, start=start, end=end, step=step, marks=marks,
        charts=charts, prometheus_url=result.prometheus_url,
        prometheus_error=down[0] if down else "",
    )  # fmt: skip
