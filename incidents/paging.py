"""Pagination that costs the same at a million incidents as at ten thousand: the count
is exact up to COUNT_CAP and stops there (a year of a large fleet is a million rows, and
an exact COUNT(*) reads every one of them on each render). Past the cap the pages say
"more than 10,000" and page through the newest COUNT_CAP matches; filters and the search
reach the older ones. Used by the incident list, its API and the receipt log."""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property, partial
from typing import Any

from django.core.paginator import Paginator
from django.db.models import QuerySet
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

COUNT_CAP = 10_000
# A search has no index that returns its matches in order: counting reads rows until the
# cap's worth match, so its cap is lower (a common word in one title of ten reads two
# thousand rows, what the whole list costs at a thousand incidents).
SEARCH_COUNT_CAP = 200


class CappedPaginator(Paginator):
    """A Django Paginator whose `count` is exact up to `cap`; `count_capped` says there
    are more. One `SELECT count(*) FROM (... LIMIT cap + 1)`: at most cap + 1 rows read."""

    def __init__(self, *args: Any, cap: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cap = COUNT_CAP if cap is None else cap

    @cached_property
    def _counted(self) -> int:
        rows = self.object_list
        if isinstance(rows, QuerySet):
            # How many, not which: no order and no annotations, so PostgreSQL counts off
            # whichever index is cheapest and stops after cap + 1.
            return rows.order_by().values("pk")[: self.cap + 1].count()
        return len(rows)

    @cached_property
    def count(self) -> int:
        return min(self._counted, self.cap)

    @cached_property
    def count_capped(self) -> bool:
        return self._counted > self.cap


class CappedPageNumberPagination(PageNumberPagination):
    """DRF's page-number pagination over a CappedPaginator: `count` is exact up to the
    cap; `count_capped` is true when there are more (then `count` is the cap)."""

    django_paginator_class: Any = CappedPaginator

    def paginate_queryset(self, queryset, request, view=None):
        cap = SEARCH_COUNT_CAP if request.query_params.get("q", "").strip() else COUNT_CAP
        self.django_paginator_class = partial(CappedPaginator, cap=cap)
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data: Any) -> Response:
        assert self.page is not None  # paginate_queryset ran
        paginator = self.page.paginator
        assert isinstance(paginator, CappedPaginator)
        return Response(
            OrderedDict(
                [
                    ("count", paginator.count),
                    ("count_capped", paginator.count_capped),
                    ("next", self.get_next_link()),
                    ("previous", self.get_previous_link()),
                    ("results", data),
                ]
            )
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        described = super().get_paginated_response_schema(schema)
        properties = described["properties"]
        properties["count"] = {
            "type": "integer",
            "example": 123,
            "description": (
                f"How many match, exact up to {COUNT_CAP:,} ({SEARCH_COUNT_CAP:,} with "
                "`q`); when `count_capped` is true there are more and this is the cap "
                "(counting a year of incidents exactly would read every row on each "
                "request)."
            ),
        }
        properties["count_capped"] = {
            "type": "boolean",
            "example": False,
            "description": (
                f"True when more than the cap ({COUNT_CAP:,}, or {SEARCH_COUNT_CAP:,} with "
                "`q`) match: `count` is then the cap, not the total, and the pages reach "
                "the newest that many; narrow the filters to reach older ones."
            ),
        }
        described["required"] = ["count", "count_capped", "results"]
        return described
