"""The pager reports page and its CSV downloads: who may see them, the empty state, the
numbers as the selectors give them, cells that cannot run as formulas, and a page whose
query count does not grow with the pages."""

from __future__ import annotations

import csv
import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from console import roles
from pager.models import Team
from tests.unit.pager import test_reports as data

pytestmark = pytest.mark.django_db

RANGE = data.RANGE
dataset = data.dataset  # the hand-built pages, shared with the numbers tests
_hours = data._hours


def url() -> str:
    return reverse("pager:reports")


def csv_url(table: str) -> str:
    return reverse("pager:reports-csv", args=[table])


def read_csv(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


@pytest.fixture
def viewer(client, make_user):
    user = make_user("vera", roles.VIEWER)
    client.force_login(user)
    return user


def test_the_urls():
    assert url() == "/pager/reports/"
    assert csv_url("people") == "/pager/reports/people.csv"


def test_anonymous_is_sent_to_login_and_no_role_is_refused(client, make_user):
    for target in (url(), csv_url("people")):
        r = client.get(target)
        assert r.status_code == 302
        assert r["Location"].startswith("/login/")
    client.force_login(make_user("nobody", role=None))
    assert client.get(url()).status_code == 403
    assert client.get(csv_url("teams")).status_code == 403


def test_empty_console_shows_the_empty_states(client, viewer):
    r = client.get(url())
    assert r.status_code == 200
    page = r.content.decode()
    for empty in ("people-empty", "teams-empty", "exhausted-empty"):
        assert f'data-testid="{empty}"' in page
    assert "09:00-18:00" in page  # the business hours the page counts with


def test_the_page_shows_the_figures(client, viewer, dataset):
    r = client.get(url(), RANGE)
    assert r.status_code == 200
    page = r.content.decode()
    assert 'data-testid="tile-pages">9<' in page
    assert 'data-testid="tile-out-of-hours">5<' in page
    assert 'data-testid="tile-exhausted">2<' in page
    assert "alice" in page
    assert "Inference" in page
    assert reverse("incidents:detail", args=[dataset["e2"].incident_id]) in page
    # The form keeps the range; the CSV links carry it.
    assert 'value="2026-10-19"' in page
    assert f"{csv_url('people')}?start=2026-10-19&amp;end=2026-10-31" in page


def test_a_bad_date_falls_back_with_a_message(client, viewer):
    r = client.get(url(), {"start": "yesterday", "end": "2026-10-31"})
    assert r.status_code == 200
    assert 'data-testid="filter-errors"' in r.content.decode()


def test_csv_downloads_have_the_figures(client, viewer, dataset):
    r = client.get(csv_url("people"), RANGE)
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/csv")
    assert r["Content-Disposition"] == (
        'attachment; filename="pager-people_2026-10-19_2026-10-31.csv"'
    )
    assert read_csv(r) == [
        ["username", "pages", "out_of_hours", "acknowledged", "median_ack_seconds",
         "p90_ack_seconds"],
        ["alice", "5", "3", "5", "180", "456"],
        ["bob", "2", "1", "1", "300", "300"],
        ["carol", "1", "1", "0", "", ""],
    ]  # fmt: skip
    assert read_csv(client.get(csv_url("teams"), RANGE)) == [
        ["team", "name", "pages", "out_of_hours", "escalations", "reached_last_step",
         "median_ack_seconds"],
        ["infer", "Inference", "6", "3", "3", "1", "180"],
        ["train", "Training", "2", "1", "1", "0", "300"],
        ["", "", "1", "1", "1", "1", ""],
    ]  # fmt: skip
    rows = read_csv(client.get(csv_url("exhausted"), RANGE))
    assert rows[0][:3] == ["escalation", "incident", "title"]
    assert [int(row[1]) for row in rows[1:]] == [
        dataset["e5"].incident_id,
        dataset["e2"].incident_id,
    ]


def test_csv_cells_cannot_run_as_formulas(client, viewer, dataset):
    Team.objects.filter(pk=dataset["infer"].pk).update(name="@SUM(A1)", slug="-infer")
    teams = read_csv(client.get(csv_url("teams"), RANGE))
    assert teams[1][:2] == ["'-infer", "'@SUM(A1)"]
    exhausted = read_csv(client.get(csv_url("exhausted"), RANGE))
    titles = {row[2] for row in exhausted[1:]}
    assert "'=cmd|' /C calc'!A0" in titles  # the incident title of E2
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in exhausted for cell in row)


def test_unknown_csv_table_is_404(client, viewer):
    assert client.get(csv_url("passwords")).status_code == 404


def test_the_page_costs_the_same_queries_with_ten_times_the_pages(client, viewer, make_user):
    users = [make_user(f"u{k}") for k in range(5)]
    teams = [Team.objects.create(slug=f"t{k}", name=f"T{k}") for k in range(2)] + [None]
    data._bulk(10, users, teams, 1000)

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url(), RANGE).status_code == 200
        return len(ctx.captured_queries)

    small = count()
    data._bulk(100, users, teams, 2000)
    assert count() == small
