"""Values at their extremes (issue 11, finding 5): ids beyond 64 bits, dates in year 1 or
9999, and alerts at the edges of what Alertmanager can send never answer 5xx. A bad
filter is refused (400 naming it) or clamped with a message; a page that shows such an
alert renders."""

import json
from datetime import UTC, date, datetime

import pytest
from django.test import Client
from django.urls import reverse

from console import roles
from incidents.models import Incident
from postmortems.reports.csv_export import TABLES
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db

HUGE = str(2**64)  # beyond PostgreSQL's bigint
BIG = str(2**63)  # one past bigint's maximum
# "²" is a digit to str.isdigit() but not to int(): a classic crash in id filters.
ODD_IDS = [HUGE, BIG, "-" + HUGE, "#" + HUGE, "²", "1e400", "١٢"]
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def admin_client(make_user):
    client = Client(raise_request_exception=False)
    client.force_login(make_user("root", roles.ADMIN))
    return client


def no_server_error(response, what: str) -> None:
    assert response.status_code < 500, f"{what} answered {response.status_code}"


# --- ids beyond 64 bits in paths ------------------------------------------------------
PAGE_ROUTES = [
    ("incidents:detail", "get"),
    ("incidents:header", "get"),
    ("incidents:alerts", "get"),
    ("incidents:timeline", "get"),
    ("incidents:acknowledge", "post"),
    ("incidents:mitigate", "post"),
    ("incidents:resolve", "post"),
    ("incidents:reopen", "post"),
    ("incidents:commander", "post"),
    ("incidents:notes", "post"),
    ("incidents:receipt-detail", "get"),
    ("incidents:receipt-replay", "post"),
    ("runbooks:incident-triage", "get"),
    ("runbooks:incident-signals", "get"),
    ("actions:incident-actions", "get"),
    ("actions:action-confirm", "get"),
    ("actions:action-request", "post"),
    ("actions:action-run", "get"),
    ("actions:action-card", "get"),
    ("actions:action-approve", "post"),
    ("actions:action-undo", "post"),
    ("postmortems:detail", "get"),
    ("postmortems:draft", "post"),
    ("postmortems:incident-panel", "get"),
    ("postmortems:history", "get"),
    ("postmortems:export", "get"),
    ("postmortems:print", "get"),
    ("postmortems:item-save", "post"),
    ("postmortems:timeline-entry", "post"),
    ("postmortems:notification-read", "post"),
    ("incidents_api:incident-detail", "get"),
    ("incidents_api:incident-timeline", "get"),
    ("incidents_api:incident-acknowledge", "post"),
    ("incidents_api:incident-notes", "post"),
    ("runbooks_api:incident-triage", "get"),
    ("actions_api:incident-actions", "get"),
    ("actions_api:action-detail", "get"),
    ("actions_api:action-approve", "post"),
    ("postmortems_api:draft", "post"),
    ("postmortems_api:detail", "get"),
    ("postmortems_api:export", "get"),
    ("postmortems_api:item", "get"),
    ("postmortems_api:item", "patch"),
    ("postmortems_api:item", "delete"),
]


@pytest.mark.parametrize(("name", "method"), PAGE_ROUTES)
@pytest.mark.parametrize("pk", [HUGE, BIG])
def test_an_id_beyond_64_bits_in_a_path_never_fails(admin_client, name, method, pk):
    url = reverse(name, args=[1]).replace("/1/", f"/{pk}/", 1)
    body = json.dumps({"text": "x", "reason": "x", "note": "x"})
    if method == "get":
        response = admin_client.get(url)
    else:
        response = getattr(admin_client, method)(url, body, content_type="application/json")
    no_server_error(response, url)
    if url.startswith("/api/"):
        assert response.status_code == 404, (url, response.status_code, response.content[:300])
        assert response.json()["detail"]


# --- ids and dates in filters ---------------------------------------------------------
FILTERS = [
    ("incidents:list", "q"),
    ("incidents:list", "page"),
    ("incidents:timeline", "after"),
    ("incidents:receipts", "page"),
    ("actions:actions", "incident"),
    ("actions:actions", "page"),
    ("postmortems:list", "page"),
    ("postmortems:items", "item"),
    ("postmortems:items", "page"),
    ("postmortems:history", "page"),
    ("actions:action-confirm", "action"),
    ("incidents_api:incident-list", "q"),
    ("incidents_api:incident-list", "page"),
    ("incidents_api:incident-timeline", "after"),
    ("actions_api:action-list", "incident"),
    ("postmortems_api:items", "incident"),
    ("postmortems_api:items", "page"),
]


@pytest.fixture
def incident():
    now = datetime.now(UTC)
    return Incident.objects.create(
        title="t", grouping_key="g", triggered_at=now, status="resolved", resolved_at=now
    )


@pytest.mark.parametrize("value", ODD_IDS)
@pytest.mark.parametrize(("name", "param"), FILTERS)
def test_an_odd_id_in_a_filter_is_refused_or_ignored(
    admin_client, incident, make_user, name, param, value
):
    from postmortems.services import postmortem_draft

    pm = postmortem_draft(incident_id=incident.pk, actor=make_user("pm", roles.COMMANDER))
    args = {
        "postmortems:history": [pm.pk],
        "incidents:timeline": [incident.pk],
        "incidents_api:incident-timeline": [incident.pk],
        "actions:action-confirm": [incident.pk],
    }.get(name, [])
    url = reverse(name, args=args)
    for headers in ({}, HTMX):
        response = admin_client.get(url, {param: value}, **headers)
        no_server_error(response, f"{url}?{param}={value}")
        if name.split(":")[0].endswith("_api") and response.status_code == 400:
            body = response.json()
            assert param in body or "detail" in body, body


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("0001-01-01", "9999-12-31"),
        ("9999-12-31", "9999-12-31"),
        ("0001-01-01", "0001-01-01"),
        ("", "0001-01-01"),
        ("9999-12-31", ""),
        ("+99999-01-01", ""),
    ],
)
def test_report_dates_at_the_calendar_edges_are_clamped_with_a_message(admin_client, start, end):
    params = {"start": start, "end": end}
    response = admin_client.get(reverse("postmortems:reports"), params)
    assert response.status_code == 200, response.content[:300]
    if start or end:
        assert any(m in response.content for m in (b"Reports cover", b"look like", b"between"))
    for table in TABLES:
        url = reverse("postmortems:reports-csv", args=[table])
        response = admin_client.get(url, params)
        assert response.status_code == 200
        b"".join(response.streaming_content)  # the rows are computed while streaming


@pytest.mark.parametrize("due", ["0001-01-01", "9999-12-31"])
def test_action_item_due_at_the_calendar_edges_shows_everywhere(admin_client, incident, due):
    response = admin_client.post(
        reverse("postmortems_api:items"),
        json.dumps({"incident": incident.pk, "title": "edge", "due_date": due}),
        content_type="application/json",
    )
    assert response.status_code in (201, 400), response.content[:300]
    if response.status_code == 400:
        assert "due_date" in response.json()
        return
    for url in (
        reverse("postmortems_api:items"),
        reverse("postmortems_api:items") + "?overdue=true",
        reverse("postmortems:items"),
        reverse("postmortems:items") + "?overdue=1",
        reverse("postmortems:reports"),
    ):
        no_server_error(admin_client.get(url), url)
    for table in TABLES:
        response = admin_client.get(reverse("postmortems:reports-csv", args=[table]))
        assert response.status_code == 200
        b"".join(response.streaming_content)


# --- alerts at the edges of what Alertmanager sends -----------------------------------
EDGE_TIMES = [
    datetime(1, 1, 1, tzinfo=UTC),  # refused by the webhook, naming the field
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),  # the edges the webhook stores
    datetime(9998, 12, 31, 23, 59, 59, tzinfo=UTC),
]


@pytest.mark.parametrize("starts_at", EDGE_TIMES, ids=lambda d: str(d.year))
def test_an_alert_at_the_edge_of_time_renders_on_every_page(admin_client, post_webhook, starts_at):
    firing = alert()
    firing["startsAt"] = starts_at.isoformat().replace("+00:00", "Z")
    response = post_webhook(notification([firing]))
    if response.status_code == 400:  # refused, naming the field: nothing stored to show
        assert response.json()["field"] == "alerts[0].startsAt", response.content
        return
    assert response.status_code == 200, response.content[:300]
    incident = Incident.objects.get(pk=response.json()["incidents"][0])
    ended = {**firing, "status": "resolved"}
    ended["endsAt"] = "9998-12-31T23:59:59.999999999Z"
    no_server_error(post_webhook(notification([ended])), "the resolved notification")
    _every_page_renders(admin_client, incident)


def _every_page_renders(client, incident) -> None:
    from postmortems.models import Postmortem

    pk = incident.pk
    draft = client.post(reverse("postmortems_api:draft", args=[pk]), {}, "application/json")
    assert draft.status_code in (200, 201), draft.content[:300]
    pm = Postmortem.objects.get(incident=incident)
    urls = [
        reverse("incidents:list"),
        reverse("incidents:detail", args=[pk]),
        reverse("incidents:header", args=[pk]),
        reverse("incidents:alerts", args=[pk]),
        reverse("incidents:timeline", args=[pk]),
        reverse("runbooks:incident-triage", args=[pk]),
        reverse("runbooks:incident-signals", args=[pk]),
        reverse("runbooks:incident-signals", args=[pk]) + "?format=json",
        reverse("actions:incident-actions", args=[pk]),
        reverse("postmortems:incident-panel", args=[pk]),
        reverse("postmortems:detail", args=[pm.pk]),
        reverse("postmortems:detail", args=[pm.pk]) + "?timeline=all",
        reverse("postmortems:print", args=[pm.pk]),
        reverse("postmortems:export", args=[pm.pk]),
        reverse("postmortems:reports") + "?start=0001-01-01&end=0001-12-31",
        reverse("postmortems:reports") + "?start=9999-01-01&end=9999-12-31",
        reverse("incidents_api:incident-list"),
        reverse("incidents_api:incident-detail", args=[pk]),
        reverse("incidents_api:incident-timeline", args=[pk]),
        reverse("runbooks_api:incident-triage", args=[pk]),
        reverse("postmortems_api:detail", args=[pm.pk]),
        reverse("postmortems_api:export", args=[pm.pk]),
    ]
    for url in urls:
        for headers in ({}, HTMX):
            no_server_error(client.get(url, **headers), url)
    refresh = client.post(reverse("postmortems:refresh", args=[pm.pk]), **HTMX)
    no_server_error(refresh, "postmortem refresh")
    for start, end in (("0001-01-01", "0001-12-31"), ("9999-01-01", "9999-12-31")):
        for table in TABLES:
            url = reverse("postmortems:reports-csv", args=[table])
            response = client.get(url, {"start": start, "end": end})
            assert response.status_code == 200
            b"".join(response.streaming_content)


def test_incident_timestamps_at_the_edge_of_time_render(admin_client):
    """Stored directly (an import, an old database): year 1 and year 9999 times."""
    low, high = datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    incident = Incident.objects.create(
        title="edge", grouping_key="edge", triggered_at=high, started_at=low,
        acknowledged_at=high, mitigated_at=high, resolved_at=high, status="resolved",
    )  # fmt: skip
    from tests.factories import AlertFactory

    AlertFactory(incident=incident, starts_at=low, ends_at=high, status="resolved")
    AlertFactory(incident=incident, starts_at=high, ends_at=None)
    _every_page_renders(admin_client, incident)
    assert date(9999, 12, 31)  # the reports above cover both ends of the calendar
