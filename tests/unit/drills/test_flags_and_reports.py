"""A drill incident is flagged everywhere a person or a script meets it, and left out of
the reports and MTTA/MTTR unless asked for."""

from datetime import timedelta

import pytest
from django.utils import timezone

from console import roles
from postmortems.reports import selectors
from postmortems.reports.filters import ReportFilters
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair():
    now = timezone.now()
    real = IncidentFactory(
        title="real outage", triggered_at=now, acknowledged_at=now + timedelta(seconds=60)
    )
    drill = IncidentFactory(
        title="rehearsal", is_drill=True, triggered_at=now,
        acknowledged_at=now + timedelta(seconds=600),
    )  # fmt: skip
    return real, drill


def test_reports_and_mtta_leave_drills_out_unless_asked(pair):
    default = ReportFilters.from_params({})
    included = ReportFilters.from_params({"drills": "include"})
    assert selectors.incident_counts(filters=default)["total"] == 1
    assert selectors.incident_counts(filters=included)["total"] == 2
    month = next(m for m in selectors.response_times(filters=default) if m.incidents)
    assert month.mtta == timedelta(seconds=60)
    both = next(m for m in selectors.response_times(filters=included) if m.incidents)
    assert both.mtta == timedelta(seconds=330)
    assert included.params()["drills"] == "include"


def test_the_report_page_has_the_toggle(client, make_user, pair):
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get("/postmortems/reports/").content.decode()
    assert 'name="drills"' in page
    assert "checked" not in page.split('name="drills"')[1].split(">")[0]
    page = client.get("/postmortems/reports/?drills=include").content.decode()
    assert "checked" in page.split('name="drills"')[1].split(">")[0]


def test_drill_incidents_are_flagged_in_the_list_the_page_and_the_api(client, make_user, pair):
    real, drill = pair
    client.force_login(make_user("vera", roles.VIEWER))
    listing = client.get("/").content.decode()
    row = listing.split(f'href="/incidents/{drill.pk}/">#')[1].split("</tr>")[0]
    assert "DRILL" in row
    real_row = listing.split(f'href="/incidents/{real.pk}/">#')[1].split("</tr>")[0]
    assert "DRILL" not in real_row
    assert 'data-testid="drill-banner"' in client.get(f"/incidents/{drill.pk}/").content.decode()
    assert 'data-testid="drill-banner"' not in client.get(f"/incidents/{real.pk}/").content.decode()
    api = client.get(f"/api/v1/incidents/{drill.pk}/").json()
    assert api["is_drill"] is True
    assert client.get(f"/api/v1/incidents/{real.pk}/").json()["is_drill"] is False
