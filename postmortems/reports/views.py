"""The tracking reports page and its CSV exports. Thin: parse the filters, authorise
(console_view), call the selectors, render."""

from __future__ import annotations

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.http import AuthedRequest
from console.web import console_view
from postmortems.models import ItemCategory
from postmortems.permissions import VIEW_ITEMS
from postmortems.reports import charts, csv_export, selectors
from postmortems.reports.filters import ReportFilters


@require_GET
@console_view(VIEW_ITEMS)
def reports(request: AuthedRequest):
    filters = ReportFilters.from_params(request.GET)
    report = selectors.report(filters=filters)
    return render(
        request,
        "postmortems/reports/page.html",
        {
            "report": report,
            "filters": filters,
            "charts": charts.all_charts(report),
            "categories": ItemCategory.choices,
            "list_limit": selectors.LIST_LIMIT,
        },
    )


@require_GET
@console_view(VIEW_ITEMS)
def reports_csv(request: AuthedRequest, table: str):
    if table not in csv_export.TABLES:
        raise Http404(f"No report table {table!r}.")
    filters = ReportFilters.from_params(request.GET)
    response = StreamingHttpResponse(
        csv_export.csv_lines(table, filters), content_type="text/csv; charset=utf-8"
    )
    name = csv_export.filename(table, filters)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
