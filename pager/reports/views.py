"""The pager reports page and its CSV downloads. Thin: parse the range, authorise
(console_view), call the selectors, render."""

from __future__ import annotations

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.http import AuthedRequest
from console.web import console_view
from pager.permissions import VIEW
from pager.reports import csv, selectors
from pager.reports.filters import ReportRange


@require_GET
@console_view(VIEW)
def reports(request: AuthedRequest):
    report_range = ReportRange.from_params(request.GET)
    report = selectors.report(report_range=report_range)
    return render(
        request,
        "pager/reports.html",
        {"report": report, "range": report_range, "list_limit": selectors.LIST_LIMIT},
    )


@require_GET
@console_view(VIEW)
def reports_csv(request: AuthedRequest, table: str):
    if table not in csv.TABLES:
        raise Http404(f"No report table {table!r}.")
    report_range = ReportRange.from_params(request.GET)
    response = StreamingHttpResponse(
        csv.csv_lines(table, report_range), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{csv.filename(table, report_range)}"'
    return response
