"""The pages tests/bench/fleet_pages.py times, for one database: every list filter, the
incident page and its parts, the API, similar incidents, every report and CSV export,
the receipts page."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

SEARCH_HIT = "VLLMHighTTFT"  # in about one title in nine
SEARCH_MISS = "no-such-incident-text"  # in none: the search reads every candidate


def _incident_id() -> int:
    """Among the newest 2,000 resolved incidents with a runbook, the one whose alerts and
    timeline entries are nearest 10 and 20 (the generator's averages), newest first on a
    tie: the same kind of incident at both sizes, whatever the generator drew for each."""
    from django.db.models import Count, Q

    from incidents.models import Incident, IncidentStatus

    recent = (
        Incident.objects.filter(status=IncidentStatus.RESOLVED)
        .exclude(runbook="")
        .order_by("-id")
        .values_list("pk", flat=True)[:2000]
    )
    rows = Incident.objects.filter(pk__in=list(recent)).annotate(
        n_alerts=Count("alerts", distinct=True), n_events=Count("events", distinct=True)
    )
    rows = rows.filter(~Q(n_alerts=0)).values_list("pk", "n_alerts", "n_events")
    best = min(rows, key=lambda r: (abs(r[1] - 10) + abs(r[2] - 20) / 2, -r[0]))
    print(f"incident shown: #{best[0]} with {best[1]} alerts and {best[2]} timeline entries")
    return best[0]


def _runbook() -> str:
    from incidents.selectors import incident_runbooks

    runbooks = incident_runbooks()
    return "ttft-spike" if "ttft-spike" in runbooks else runbooks[0]


def list_pages() -> dict[str, str]:
    from incidents.models import IncidentStatus, Severity

    pages = {"list: all": "/", "list: open": "/?status=open", "list: page 2": "/?page=2"}
    for status in IncidentStatus.values:
        pages[f"list: status={status}"] = f"/?status={status}"
    for severity in Severity.values:
        pages[f"list: severity={severity}"] = f"/?severity={severity}"
    pages["list: runbook"] = f"/?runbook={_runbook()}"
    pages["list: search (common word)"] = f"/?{urlencode({'q': SEARCH_HIT})}"
    pages["list: search (no match)"] = f"/?{urlencode({'q': SEARCH_MISS})}"
    pages["list: open + SEV1"] = "/?status=open&severity=SEV1"
    return pages


def api_list_pages() -> dict[str, str]:
    base = "/api/v1/incidents/"
    return {
        "API list": base,
        "API list: open": f"{base}?status=open",
        "API list: severity=SEV2": f"{base}?severity=SEV2",
        "API list: runbook": f"{base}?runbook=ttft-spike",
        "API list: search (common word)": f"{base}?{urlencode({'q': SEARCH_HIT})}",
        "API list: search (no match)": f"{base}?{urlencode({'q': SEARCH_MISS})}",
        "API list: page 2": f"{base}?page=2",
    }


def report_pages() -> dict[str, str]:
    from pager.reports import csv as pager_csv
    from postmortems.reports import csv_export

    pages = {
        "postmortem reports": "/postmortems/reports/",
        "postmortem reports: 365 days": "/postmortems/reports/?" + _last_year(),
    }
    for table in csv_export.TABLES:
        pages[f"postmortem CSV {table}"] = f"/postmortems/reports/csv/{table}/"
    pages["pager reports"] = "/pager/reports/"
    pages["pager reports API"] = "/api/v1/pager/reports/"
    for table in pager_csv.TABLES:
        pages[f"pager CSV {table}"] = f"/pager/reports/{table}.csv"
    return pages


def _last_year() -> str:
    from datetime import timedelta

    from django.utils import timezone

    today = timezone.localdate()
    return urlencode({"start": (today - timedelta(days=364)).isoformat(), "end": today})


def pages(dbname: str, use: Callable[[str], None]) -> dict[str, str]:
    use(dbname)
    pk = _incident_id()
    out = list_pages()
    out.update(
        {
            "incident page": f"/incidents/{pk}/",
            "incident header (poll)": f"/incidents/{pk}/header/",
            "incident alerts": f"/incidents/{pk}/alerts/",
            "incident timeline": f"/incidents/{pk}/timeline/",
            "similar incidents (panel)": f"/postmortems/incidents/{pk}/similar/",
            "similar incidents (API)": f"/api/v1/incidents/{pk}/similar/",
            "API detail": f"/api/v1/incidents/{pk}/",
            "API timeline": f"/api/v1/incidents/{pk}/timeline/",
        }
    )
    out.update(api_list_pages())
    out.update(report_pages())
    out["receipts"] = "/receipts/"
    out["receipts: dead letters"] = "/receipts/?outcome=dead"
    return out
