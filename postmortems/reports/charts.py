"""Plotly figures (plain `{"data": [...], "layout": {...}}` dicts) for the reports page.

The page embeds each with `json_script` and static/js/reports.js hands it to the vendored
plotly.min.js unchanged, so what a chart shows is decided (and tested) here, in Python.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from postmortems.models import ItemCategory
from postmortems.reports.selectors import UNCATEGORISED
from postmortems.reports.shapes import Report, minutes


def _month_axis() -> dict:
    # d3 time formats in the viewer's language: plotly names months in English only.
    fmt = pgettext("chart month axis (d3 time format)", "%b %Y")
    return {"type": "date", "tickformat": fmt, "hoverformat": fmt, "dtick": "M1"}


def _day_axis() -> dict:
    fmt = pgettext("chart date axis (d3 time format)", "%b %-d")
    return {"type": "date", "tickformat": fmt, "hoverformat": fmt}


SEVERITY_COLOURS = {"SEV1": "#b71c1c", "SEV2": "#e65100", "SEV3": "#f9a825", "SEV4": "#607d8b"}


def _layout(y_title: str, **extra) -> dict:
    layout = {
        "height": 260,
        "margin": {"l": 52, "r": 12, "t": 8, "b": 40},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "legend": {"orientation": "h", "y": -0.22, "font": {"size": 11}},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "tickfont": {"size": 11}},
        "xaxis": {"tickfont": {"size": 11}, "automargin": True},
    }
    layout.update(extra)
    return layout


def burndown(report: Report) -> dict:
    points = report.burndown
    weeks = [p.week_end.isoformat() for p in points]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _("Open at week end"),
                "x": weeks,
                "y": [p.open for p in points],
                "line": {"width": 2, "color": "#1565c0"},
            },
            {
                "type": "bar",
                "name": _("Created"),
                "x": weeks,
                "y": [p.created for p in points],
                "marker": {"color": "rgba(198,40,40,0.45)"},
            },
            {
                "type": "bar",
                "name": _("Closed"),
                "x": weeks,
                "y": [p.closed for p in points],
                "marker": {"color": "rgba(46,125,50,0.55)"},
            },
        ],
        "layout": _layout(_("Action items"), xaxis=_day_axis(), barmode="group"),
    }


def response_times(report: Report) -> dict:
    """Mean minutes per month; None (JSON null) leaves a gap for a month without data."""
    months = [m.month.isoformat() for m in report.months]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _("MTTA (min)"),
                "x": months,
                "y": [minutes(m.mtta) for m in report.months],
                "connectgaps": False,
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _("MTTR (min)"),
                "x": months,
                "y": [minutes(m.mttr) for m in report.months],
                "connectgaps": False,
            },
        ],
        "layout": _layout(_("Minutes"), xaxis=_month_axis()),
    }


def incidents_by_severity(report: Report) -> dict:
    rows = report.incidents["by_severity"]
    return {
        "data": [
            {
                "type": "bar",
                "x": [s for s, _ in rows],
                "y": [n for _, n in rows],
                "marker": {"color": [SEVERITY_COLOURS.get(s, "#888") for s, _ in rows]},
                "name": _("Incidents"),
            }
        ],
        "layout": _layout(_("Incidents"), showlegend=False),
    }


def _category_title(row: dict) -> str:
    if row["category"] == UNCATEGORISED:
        return _("No runbook / unknown runbook")
    return row["title"] or row["category"]


def incidents_by_category(report: Report) -> dict:
    rows = report.incidents["by_category"]
    return {
        "data": [
            {
                "type": "bar",
                # The catalogue's title in the viewer's language, not the id.
                "x": [_category_title(r) for r in rows],
                "y": [r["n"] for r in rows],
                "hovertext": [r["category"] for r in rows],
                "name": _("Incidents"),
                "marker": {"color": "#5c6bc0"},
            }
        ],
        "layout": _layout(_("Incidents"), showlegend=False),
    }


def open_items_by_category(report: Report) -> dict:
    """Open items per action-item category, stacked by owner would be unreadable with many
    owners, so one bar per category, every category shown (a zero is information)."""
    totals = dict.fromkeys(ItemCategory.values, 0)
    for owner in report.owners:
        for category, n in owner.by_category.items():
            totals[category] = totals.get(category, 0) + n
    return {
        "data": [
            {
                "type": "bar",
                "x": [str(ItemCategory(c).label) for c in totals],
                "y": list(totals.values()),
                "name": _("Open items"),
                "marker": {"color": "#00897b"},
            }
        ],
        "layout": _layout(_("Open items"), showlegend=False),
    }


def all_charts(report: Report) -> dict[str, dict]:
    """Figures by the DOM id the template gives them."""
    return {
        "chart-burndown": burndown(report),
        "chart-open-by-category": open_items_by_category(report),
        "chart-response-times": response_times(report),
        "chart-by-severity": incidents_by_severity(report),
        "chart-by-category": incidents_by_category(report),
    }
