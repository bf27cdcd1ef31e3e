"""The tracking reports page and its CSV export: who may see them, what an empty console
shows, the exported cells, and a query count that does not grow with the data."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from console import roles
from incidents.models import Incident
from postmortems.models import ActionItem, Postmortem
from tests.unit.postmortems import test_reports as data

RANGE = data.RANGE
dataset = data.dataset  # the hand-computed fixture dataset, shared with the numbers tests

pytestmark = pytest.mark.django_db

URL = "/postmortems/reports/"


def csv_url(table: str) -> str:
    return reverse("postmortems:reports-csv", args=[table])


def read_csv(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


@pytest.fixture
def viewer(client, make_user):
    user = make_user("vera", roles.VIEWER)
    client.force_login(user)
    return user


# --- access ---------------------------------------------------------------------------
def test_anonymous_is_sent_to_login(client):
    for url in (URL, csv_url("overdue")):
        r = client.get(url)
        assert r.status_code == 302
        assert r["Location"].startswith("/login/")


def test_user_without_a_role_gets_403(client, make_user):
    client.force_login(make_user("nobody", role=None))
    assert client.get(URL).status_code == 403
    assert client.get(csv_url("overdue")).status_code == 403


def test_every_role_sees_the_reports_and_the_nav_link(client, make_user):
    for role in roles.ROLES:
        client.force_login(make_user(f"u-{role}", role))
        r = client.get(reverse("incidents:list"))
        assert f'href="{URL}"' in r.content.decode()
        assert client.get(URL).status_code == 200


# --- the page -------------------------------------------------------------------------
def test_empty_console_says_what_to_do(client, viewer):
    page = client.get(URL).content.decode()
    assert "No action items yet" in page
    assert "accept the follow-ups it suggests" in page
    assert "No incidents in this range" in page
    assert "Widen the date range" in page
    assert "No repeat incidents" in page


def test_page_shows_the_numbers_tables_and_chart_data(client, viewer, dataset):
    r = client.get(URL, {**RANGE, "tz": "UTC"})
    page = r.content.decode()
    assert r.status_code == 200
    tiles = {
        key: page.split(f'data-testid="tile-{key}">', 1)[1].split("<", 1)[0]
        for key in ("open", "overdue", "completion", "median", "incidents", "missing", "repeats")
    }
    # The open/overdue numbers are as of the real today, so just check they render.
    assert tiles["completion"] == "50%"
    assert tiles["median"] == "10 d 0 h"
    assert (tiles["incidents"], tiles["missing"], tiles["repeats"]) == ("5", "2", "2")
    for chart in ("chart-burndown", "chart-response-times", "chart-by-severity"):
        assert f'data-report-chart="{chart}"' in page
        assert f'<script id="{chart}" type="application/json">' in page
    assert "vendor/plotly.min.js" in page
    assert "js/reports.js" in page
    # Nothing from another host (a CSRF token may well contain the letters "cdn").
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)
    assert 'data-testid="repeats"' in page
    assert "I5 ttft-spike" in page
    assert "February 2026" in page  # the empty month is a row, not missing (YEAR_MONTH_FORMAT)


def test_bad_filters_render_with_a_message(client, viewer):
    r = client.get(URL, {"tz": "Nowhere/Land", "start": "yesterday"})
    assert r.status_code == 200
    page = r.content.decode()
    assert "Unknown time zone" in page
    assert "must look like 2026-01-31" in page


def test_hostile_titles_are_escaped_on_the_page(client, viewer, make_user):
    inc = Incident.objects.create(
        title="<script>alert(1)</script>", severity="SEV2", grouping_key="x",
        runbook="ttft-spike", namespace="ns", triggered_at=timezone.now(),
    )  # fmt: skip
    ActionItem.objects.create(
        title="<img src=x onerror=alert(2)>", due_date=date(2020, 1, 1), category="config",
        incident=inc, created_by=viewer, created_at=timezone.now(),
    )  # fmt: skip
    page = client.get(URL).content.decode()
    assert "<script>alert(1)" not in page
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page


# --- CSV ------------------------------------------------------------------------------
def test_csv_export_has_a_download_name_and_the_same_numbers(client, viewer, dataset):
    r = client.get(csv_url("response-times"), RANGE)
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/csv")
    assert r["Content-Disposition"] == (
        'attachment; filename="response-times_2026-01-01_2026-04-30.csv"'
    )
    assert read_csv(r) == [
        ["month", "incidents", "acknowledged", "resolved", "mtta_seconds", "mttr_seconds"],
        ["2026-01", "2", "2", "2", "450", "5400"],
        ["2026-02", "0", "0", "0", "", ""],
        ["2026-03", "1", "1", "1", "1200", "14400"],
        ["2026-04", "2", "1", "0", "240", ""],
    ]
    rows = read_csv(client.get(csv_url("repeats"), RANGE))
    i1, i3 = dataset["incidents"]["I1"].pk, dataset["incidents"]["I3"].pk
    assert [(r[1], r[5], r[6], r[7]) for r in rows[1:]] == [
        ("I5 ttft-spike", "2", "3", f"#{i3} #{i1}"),
        ("I3 ttft-spike", "1", "2", f"#{i1}"),
    ]
    every = {"open-by-owner", "overdue", "aging", "burndown", "by-severity", "by-category",
             "by-runbook", "missing-postmortems"}  # fmt: skip
    for table in every:
        r = client.get(csv_url(table), RANGE)
        assert r.status_code == 200, table
        assert len(read_csv(r)) >= 2, table


def test_csv_cells_cannot_run_as_formulas(client, viewer):
    inc = Incident.objects.create(
        title="@SUM(A1)", severity="SEV2", grouping_key="f", runbook="ttft-spike",
        namespace="-ns", triggered_at=timezone.now(), status="resolved",
        resolved_at=timezone.now(),
    )  # fmt: skip
    for n, title in enumerate(['=HYPERLINK("http://evil","x")', "+1+2", "-3", "plain"]):
        ActionItem.objects.create(
            title=title, due_date=date(2020, 1, 1 + n), category="config", incident=inc,
            namespace=inc.namespace, created_by=viewer, created_at=timezone.now(),
        )  # fmt: skip
    rows = read_csv(client.get(csv_url("overdue")))
    titles = [r[1] for r in rows[1:]]
    assert titles == ['\'=HYPERLINK("http://evil","x")', "'+1+2", "'-3", "plain"]
    assert {r[9] for r in rows[1:]} == {"'-ns"}
    missing = read_csv(client.get(csv_url("missing-postmortems")))
    assert missing[1][1] == "'@SUM(A1)"


def test_unknown_csv_table_is_404(client, viewer):
    assert client.get(csv_url("passwords")).status_code == 404


# --- cost -----------------------------------------------------------------------------
def _bulk(n: int, owner) -> None:
    """n action items over n // 5 incidents of two runbooks, in every status, some overdue,
    some postmortems published: every list on the page has rows."""
    now = timezone.now()
    incidents, count = [], max(4, n // 5)
    for i in range(count):
        t = now - timedelta(days=(count - i) * 3)  # oldest first: its open items make repeats
        inc = Incident.objects.create(
            title=f"inc {i}", severity=f"SEV{1 + i % 4}", grouping_key=f"g{i}",
            runbook=("ttft-spike", "nccl-hang")[i % 2], namespace=f"ns-{i % 3}",
            status="resolved", triggered_at=t, acknowledged_at=t + timedelta(minutes=3),
            resolved_at=t + timedelta(hours=1),
        )  # fmt: skip
        if i % 2:
            Postmortem.objects.create(
                incident=inc, title="pm", status="published", created_by=owner
            )
        incidents.append(inc)
    statuses = ("open", "in_progress", "done", "wont_do")
    ActionItem.objects.bulk_create(
        ActionItem(
            title=f"item {k}", owner=owner if k % 3 else None,
            due_date=(now - timedelta(days=k % 7 - 3)).date(),
            category=("monitoring", "config", "drill")[k % 3], status=statuses[k % 4],
            incident=incidents[k % len(incidents)], created_by=owner,
            created_at=now - timedelta(days=k % 60), namespace="ns",
            closed_at=now if statuses[k % 4] in ("done", "wont_do") else None,
        )
        for k in range(n)
    )  # fmt: skip


def test_page_query_count_does_not_grow_with_items(client, viewer):
    counts = []
    for n in (5, 50):
        ActionItem.objects.all().delete()
        Postmortem.objects.all().delete()
        Incident.objects.all().delete()
        _bulk(n, viewer)
        with CaptureQueriesContext(connection) as ctx:
            r = client.get(URL)
        assert r.status_code == 200
        assert 'data-testid="repeats"' in r.content.decode()
        assert 'data-testid="overdue"' in r.content.decode()
        counts.append(len(ctx))
    assert counts[0] == counts[1], counts
    assert counts[1] <= 30, counts
