"""Reads behind the tracking reports, shared by the page, the CSV export and the tests.

Every number is a SQL aggregate (counts, conditional counts, averages of timestamp
differences, percentile_cont on PostgreSQL); Python only fills calendar gaps, pivots small
grouped results, adds up weekly counts and bisects one row per incident with open items
(repeats), so a page costs a fixed number of queries whatever the number of items.
Bucketing by week and month happens in the report's time zone (Trunc* with tzinfo), so a
month means the same on the page and in the CSV.

Which rows each report reads:
- the "now" reports (open by owner/category, overdue, aging) show the state today, all
  creation dates included: an item opened a year ago and still open is exactly what they
  are for. The date range applies to completion rate (items created in range), median
  time to close (items closed in range) and the burn-down (weeks in range).
- incident reports read incidents triggered in range.
- `namespace` narrows everything (items carry their incident's namespace); `category`
  (an action-item category) narrows every count of action items, including the open items
  that make an incident a repeat.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, timedelta
from functools import reduce
from itertools import accumulate
from operator import or_
from typing import Any

from django.db import connection
from django.db.models import (
    Avg,
    Count,
    DurationField,
    F,
    Q,
    QuerySet,
)
from django.db.models.functions import TruncMonth, TruncWeek

from incidents.models import Incident, IncidentStatus, Severity
from postmortems.models import (
    OPEN_ITEM_STATUSES,
    ActionItem,
    ItemStatus,
    PostmortemStatus,
)
from postmortems.reports import sql
from postmortems.reports.filters import ReportFilters
from postmortems.reports.shapes import (
    AGE_BUCKETS,
    BurnPoint,
    EarlierIncident,
    ItemSummary,
    MonthTimes,
    OwnerRow,
    Report,
)
from runbooks.catalog import load_catalog

LIST_LIMIT = 50  # rows of a list on the page; the CSV has them all
EARLIER_SHOWN = 3  # earlier incidents named per repeat incident
UNCATEGORISED = "uncategorised"


# --- base querysets -------------------------------------------------------------------
def _items(f: ReportFilters) -> QuerySet[ActionItem]:
    qs = ActionItem.objects.all()
    if f.namespace:
        qs = qs.filter(namespace=f.namespace)
    if f.category:
        qs = qs.filter(category=f.category)
    return qs.order_by()


def _incidents(f: ReportFilters) -> QuerySet[Incident]:
    qs = Incident.objects.filter(triggered_at__gte=f.start_at, triggered_at__lt=f.end_at)
    if not f.include_drills:
        qs = qs.filter(is_drill=False)
    if f.namespace:
        qs = qs.filter(namespace=f.namespace)
    return qs.order_by()


OPEN = Q(status__in=OPEN_ITEM_STATUSES)


# --- action items ---------------------------------------------------------------------
def item_summary(*, filters: ReportFilters) -> ItemSummary:
    """Open/overdue/aging (state now) and completion (items created in range): one query,
    plus one for the median time to close."""
    f = filters
    created = Q(created_at__gte=f.start_at, created_at__lt=f.end_at)
    # Age in calendar days in the report's zone: created on `today - 7` or later is 0-7.
    edges = [f.day_start(f.today - timedelta(days=d)) for d in (7, 30, 90)]
    ages = {
        "age_0": Count("id", filter=OPEN & Q(created_at__gte=edges[0])),
        "age_1": Count("id", filter=OPEN & Q(created_at__gte=edges[1], created_at__lt=edges[0])),
        "age_2": Count("id", filter=OPEN & Q(created_at__gte=edges[2], created_at__lt=edges[1])),
        "age_3": Count("id", filter=OPEN & Q(created_at__lt=edges[2])),
    }
    row = _items(f).aggregate(
        open=Count("id", filter=Q(status=ItemStatus.OPEN)),
        in_progress=Count("id", filter=Q(status=ItemStatus.IN_PROGRESS)),
        overdue=Count("id", filter=OPEN & Q(due_date__lt=f.today)),
        created=Count("id", filter=created),
        done=Count("id", filter=created & Q(status=ItemStatus.DONE)),
        wont_do=Count("id", filter=created & Q(status=ItemStatus.WONT_DO)),
        **ages,
    )
    closed_in_range = _items(f).filter(
        status=ItemStatus.DONE, closed_at__gte=f.start_at, closed_at__lt=f.end_at
    )
    return ItemSummary(
        open=row["open"],
        in_progress=row["in_progress"],
        overdue=row["overdue"],
        aging=[(label, row[f"age_{i}"]) for i, label in enumerate(AGE_BUCKETS)],
        created=row["created"],
        done=row["done"],
        wont_do=row["wont_do"],
        median_close=sql.median_duration(closed_in_range, "created_at", "closed_at"),
    )


def open_by_owner(*, filters: ReportFilters) -> list[OwnerRow]:
    """Open and in-progress items per owner, split by category: one GROUP BY, pivoted."""
    rows = (
        _items(filters)
        .filter(OPEN)
        .values("owner__username", "category")
        .annotate(
            n=Count("id"),
            in_progress=Count("id", filter=Q(status=ItemStatus.IN_PROGRESS)),
            overdue=Count("id", filter=Q(due_date__lt=filters.today)),
        )
    )
    owners: dict[str, OwnerRow] = {}
    for r in rows:  # owners x categories groups, not items
        owner = owners.setdefault(r["owner__username"] or "", OwnerRow(r["owner__username"] or ""))
        owner.by_category[r["category"]] = owner.by_category.get(r["category"], 0) + r["n"]
        owner.total += r["n"]
        owner.in_progress += r["in_progress"]
        owner.overdue += r["overdue"]
    # Unassigned last: it is nobody's list, and the rest read best biggest first.
    return sorted(owners.values(), key=lambda o: (o.owner == "", -o.total, o.owner))


def overdue_items(
    *, filters: ReportFilters, limit: int | None = LIST_LIMIT
) -> list[ActionItem] | Iterator[ActionItem]:
    """Open or in-progress items past their due date, the longest overdue first."""
    qs = (
        _items(filters)
        .filter(OPEN, due_date__lt=filters.today)
        .select_related("owner", "incident", "postmortem")
        .order_by("due_date", "id")
    )

    def with_days(items: Iterable[ActionItem]) -> Iterator[ActionItem]:
        for item in items:
            # A per-row extra the page and the CSV read (not a column of ActionItem).
            item.days_overdue = (filters.today - item.due_date).days  # type: ignore[attr-defined]
            yield item

    # The page gets a list; the CSV export (no limit) streams every overdue item.
    return list(with_days(qs[:limit])) if limit else with_days(qs.iterator(chunk_size=2000))


def burndown(*, filters: ReportFilters) -> list[BurnPoint]:
    """Items still open at the end of each week: created before the week's end minus
    closed (done or won't do) before it. Three grouped counts; the running sums run over
    weeks in Python, never over items."""
    f = filters
    items = _items(f)
    before = items.aggregate(
        created=Count("id", filter=Q(created_at__lt=f.start_at)),
        closed=Count("id", filter=Q(closed_at__lt=f.start_at)),
    )

    def weekly(column: str) -> dict[date, int]:
        rows = (
            items.filter(**{f"{column}__gte": f.start_at, f"{column}__lt": f.end_at})
            .annotate(week=TruncWeek(column, tzinfo=f.zone))
            .values("week")
            .annotate(n=Count("id"))
        )
        return {key: r["n"] for r in rows if (key := sql.bucket_key(r["week"], f.zone))}

    created, closed = weekly("created_at"), weekly("closed_at")
    open_now = before["created"] - before["closed"]
    points = []
    for monday in sql.week_starts(f.start, f.end):
        opened, shut = created.get(monday, 0), closed.get(monday, 0)
        open_now += opened - shut
        week_end = min(monday + timedelta(days=6), f.end)
        points.append(BurnPoint(monday, week_end, opened, shut, open_now))
    return points


# --- incidents ------------------------------------------------------------------------
def incident_counts(*, filters: ReportFilters) -> dict[str, Any]:
    """Incidents triggered in range by severity, runbook and failure category. The
    category lives in the runbook catalogue, so SQL groups by runbook and the handful of
    runbook rows are mapped to categories here."""
    qs = _incidents(filters)
    # The same query counts the seeded demo history (`seed_demo`), which the page names.
    sev_rows = qs.values_list("severity").annotate(n=Count("id"), demo=Count("id", Q(is_demo=True)))
    by_sev = {sev: n for sev, n, _demo in sev_rows}
    demo = sum(d for _sev, _n, d in sev_rows)
    catalog = load_catalog()
    by_runbook: list[dict[str, Any]] = []
    by_category: dict[str, int] = {}
    for slug, n in qs.values_list("runbook").annotate(n=Count("id")).order_by("-n", "runbook"):
        rb = catalog.get(slug) if slug else None
        cat = rb.category if rb else UNCATEGORISED
        by_runbook.append(
            {"runbook": slug, "title": rb.title if rb else "", "category": cat, "n": n}
        )
        by_category[cat] = by_category.get(cat, 0) + n
    titles = {name: c.title for name, c in catalog.categories.items()}
    categories = [
        {"category": c, "title": titles.get(c, "No runbook / unknown runbook"), "n": n}
        for c, n in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return {
        "total": sum(by_sev.values()),
        "demo": demo,
        "by_severity": [(s, by_sev.get(s, 0)) for s in Severity.values],
        "by_runbook": by_runbook,
        "by_category": categories,
    }


def response_times(*, filters: ReportFilters) -> list[MonthTimes]:
    """MTTA (acknowledged - triggered) and MTTR (resolved - triggered) per month of
    triggering, as SQL averages; AVG skips incidents not yet acknowledged/resolved. Every
    month of the range is listed, months without incidents with None (a gap, not 0)."""
    f = filters
    duration = DurationField()
    rows = (
        _incidents(f)
        .annotate(month=TruncMonth("triggered_at", tzinfo=f.zone))
        .values("month")
        .annotate(
            n=Count("id"),
            acknowledged=Count("acknowledged_at"),
            resolved=Count("resolved_at"),
            mtta=Avg(F("acknowledged_at") - F("triggered_at"), output_field=duration),
            mttr=Avg(F("resolved_at") - F("triggered_at"), output_field=duration),
        )
    )
    found = {sql.bucket_key(r["month"], f.zone): r for r in rows}
    out = []
    for month in sql.month_starts(f.start, f.end):
        r: Mapping[str, Any] = found.get(month) or {}
        out.append(
            MonthTimes(
                month,
                r.get("n", 0),
                r.get("acknowledged", 0),
                r.get("resolved", 0),
                r.get("mtta"),
                r.get("mttr"),
            )
        )
    return out


def postmortem_gaps(*, filters: ReportFilters, limit: int | None = LIST_LIMIT) -> dict[str, Any]:
    """Resolved incidents (triggered in range) and those without a published postmortem."""
    resolved = _incidents(filters).filter(status=IncidentStatus.RESOLVED)
    published = Q(postmortem__status=PostmortemStatus.PUBLISHED)
    missing = (
        resolved.exclude(published).select_related("postmortem").order_by("-resolved_at", "-id")
    )
    if not limit:
        # The CSV: every row, streamed (a year of a large fleet is hundreds of thousands),
        # without the totals it does not show.
        return {"rows": missing.iterator(chunk_size=2000)}
    totals = resolved.aggregate(resolved=Count("id"), published=Count("id", filter=published))
    rows = list(missing[:limit])
    return {
        "resolved": totals["resolved"],
        "published": totals["published"],
        "missing": totals["resolved"] - totals["published"],
        "rows": rows,
    }


def _open_items_q(f: ReportFilters) -> QuerySet[ActionItem]:
    qs = ActionItem.objects.filter(OPEN)
    return qs.filter(category=f.category) if f.category else qs


def repeat_incidents(*, filters: ReportFilters, limit: int | None = LIST_LIMIT) -> dict[str, Any]:
    """Incidents (triggered in range) whose runbook already had an EARLIER incident that
    still has open action items: "we saw this before and didn't finish the fix".

    One GROUP BY gives every incident with open items (one row per incident, not per
    item) and its open count. An incident repeats iff it came after the first of those
    for its runbook, so SQL selects and counts the repeats with one condition per runbook;
    the earlier incidents of each row shown are then found by bisecting that per-runbook
    list (correlated subqueries per row cost 50x more on 100k items: see the bench).
    """
    f = filters
    open_items = _open_items_q(f).filter(incident__triggered_at__lt=f.end_at)
    open_items = open_items.exclude(incident__runbook="")
    if not f.include_drills:
        open_items = open_items.filter(incident__is_drill=False)
    if f.namespace:
        open_items = open_items.filter(incident__namespace=f.namespace)
    grouped = open_items.values(
        "incident_id", "incident__runbook", "incident__triggered_at", "incident__title"
    ).annotate(n=Count("id"))
    by_runbook: dict[str, list[EarlierIncident]] = {}
    for g in grouped.order_by("incident__triggered_at", "incident_id"):
        by_runbook.setdefault(g["incident__runbook"], []).append(
            EarlierIncident(
                g["incident_id"], g["incident__title"], g["incident__triggered_at"], g["n"]
            )
        )
    if not by_runbook:
        return {"count": 0, "rows": []}
    first = {slug: seen[0].triggered_at for slug, seen in by_runbook.items()}
    repeats = _incidents(f).filter(
        reduce(or_, (Q(runbook=slug, triggered_at__gt=t) for slug, t in first.items()))
    )
    shown = repeats.order_by("-triggered_at", "-id")
    times = {slug: [e.triggered_at for e in seen] for slug, seen in by_runbook.items()}
    running = {slug: list(accumulate((e.open_items for e in seen), initial=0))
               for slug, seen in by_runbook.items()}  # fmt: skip

    def with_earlier(incidents: Iterable[Incident]) -> Iterator[Incident]:
        for r in incidents:
            k = bisect_left(times[r.runbook], r.triggered_at)  # how many came strictly before
            # Per-row extras the page reads (not columns of Incident).
            r.earlier_count = k  # type: ignore[attr-defined]
            r.earlier_open_items = running[r.runbook][k]  # type: ignore[attr-defined]
            r.earlier = by_runbook[r.runbook][max(0, k - EARLIER_SHOWN) : k][::-1]  # type: ignore[attr-defined]
            yield r

    if not limit:  # the CSV: every repeat, streamed, and no count it does not show
        return {"count": None, "rows": with_earlier(shown.iterator(chunk_size=2000))}
    return {"count": repeats.count(), "rows": list(with_earlier(shown[:limit]))}


# One probe per distinct namespace on the incident_namespace index (a "loose index
# scan"), where DISTINCT reads every incident: a year of a large fleet is a million.
_NAMESPACES = """
WITH RECURSIVE names(namespace) AS (
    SELECT min(namespace) FROM incidents_incident WHERE namespace > ''
    UNION ALL
    SELECT (SELECT min(i.namespace) FROM incidents_incident i WHERE i.namespace > names.namespace)
    FROM names WHERE names.namespace IS NOT NULL
)
SELECT namespace FROM names WHERE namespace IS NOT NULL ORDER BY namespace
"""


def namespaces() -> list[str]:
    """Namespaces that appear on incidents, for the filter menu."""
    with connection.cursor() as cursor:
        cursor.execute(_NAMESPACES)
        return [name for (name,) in cursor.fetchall()]


def report(*, filters: ReportFilters) -> Report:
    """Everything the page shows, in a fixed number of queries."""
    return Report(
        filters=filters,
        items=item_summary(filters=filters),
        owners=open_by_owner(filters=filters),
        overdue=list(overdue_items(filters=filters)),
        burndown=burndown(filters=filters),
        incidents=incident_counts(filters=filters),
        months=response_times(filters=filters),
        postmortems=postmortem_gaps(filters=filters),
        repeats=repeat_incidents(filters=filters),
        namespaces=namespaces(),
    )
