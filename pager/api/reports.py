"""The pager reports as JSON: the page's figures for a date range."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import E400, READ_ERRORS
from console.http import AuthedApiRequest
from pager.api.base import TAG, PagerApi
from pager.api.serializers.reports import ReportQuerySerializer, ReportSerializer
from pager.reports import selectors
from pager.reports.filters import ReportRange


@extend_schema(tags=[TAG])
class ReportApi(PagerApi):
    """Pages per person and per team, pages out of hours, time to acknowledge, and the
    escalations that reached the last step, for the days `start` to `end` (in the
    console's TIME_ZONE; the last 30 days by default, at most 366). Durations in
    seconds. Out of hours: outside PAGER_BUSINESS_HOURS, Monday to Friday, in the time
    zone of the team's first schedule (UTC without one)."""

    noun = "report"

    @extend_schema(
        operation_id="pager_reports",
        summary="Pager reports",
        parameters=[ReportQuerySerializer],
        responses={200: ReportSerializer, 400: E400, **READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = ReportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = ReportRange.of(query.validated_data.get("start"), query.validated_data.get("end"))
        report = selectors.report(report_range=found)
        return Response(ReportSerializer(report, context={"request": request}).data)
