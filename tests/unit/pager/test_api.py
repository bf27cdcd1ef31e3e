"""The pager API as a script with a token uses it: teams and who is on call, an
incident's owner and escalation, pages and acknowledging them, the reports, who may do
what, and the OpenAPI schema.

The schedule "primary" of team "inference" hands off weekly, Mondays 09:00 UTC, from
Monday 2026-01-05: alice (weeks 0, 2, 4, ...) and bob in turn. So on Wednesday
2026-03-04 (week 8) alice is on call until Monday 2026-03-09 09:00, then bob.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident
from pager.models import (
    Escalation,
    EscalationPolicy,
    EscalationStep,
    Ownership,
    Page,
    Rotation,
    RotationMember,
    Schedule,
    Team,
)
from pager.schedules.rotation import wall_clock_stored
from tests.pager_receivers import contact, page_for
from tests.unit.pager import test_reports as report_data

pytestmark = pytest.mark.django_db

API = "/api/v1/pager/"
dataset = report_data.dataset  # the reports' hand-built pages (test_reports.py)


@pytest.fixture
def api_as(make_user):
    """An API client with `Authorization: Token <key>` for a new user with `role`."""

    def _as(role: str | None, username: str | None = None) -> APIClient:
        user = make_user(username or role or "norole", role)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
        client.user = user
        return client

    return _as


@pytest.fixture
def people(make_user):
    return {name: make_user(name, roles.RESPONDER) for name in ("alice", "bob", "carol")}


def make_team(slug: str, people: dict, *, schedules: int = 1) -> Team:
    team = Team.objects.create(slug=slug, name=slug.title())
    team.members.set(people.values())
    Ownership.objects.create(team=team, namespace=f"{slug}-*")
    policy = EscalationPolicy.objects.create(name=f"{slug} policy", team=team, repeat_times=1)
    team.escalation_policy = policy
    team.save()
    for n in range(schedules):
        schedule = Schedule.objects.create(
            team=team, slug=f"{slug}-{n}" if n else "primary" if slug == "inference" else slug,
            name=f"{slug} {n}", time_zone="UTC",
        )  # fmt: skip
        EscalationStep.objects.create(
            policy=policy, position=n, action="page_schedule", schedule=schedule, wait_minutes=5
        )
        rotation = Rotation.objects.create(
            schedule=schedule, name="weekly", frequency="weekly",
            starts_at=wall_clock_stored(datetime(2026, 1, 5, 9)),  # noqa: DTZ001 (wall clock)
        )  # fmt: skip
        for position, name in enumerate(("alice", "bob")):
            RotationMember.objects.create(rotation=rotation, user=people[name], position=position)
    return team


@pytest.fixture
def team(people):
    return make_team("inference", people)


def incident_for(team_slug: str = "inference", **kw) -> Incident:
    now = timezone.now()
    return Incident.objects.create(
        title=kw.pop("title", "vLLM TTFT p99 above 2s"), severity="SEV2", status="triggered",
        grouping_key=kw.pop("grouping_key", f"g-{team_slug}-{Incident.objects.count()}"),
        runbook="ttft-spike", namespace="llm-serving", group_labels={"team": team_slug},
        triggered_at=now, started_at=now, **kw,
    )  # fmt: skip


# --- who may do what --------------------------------------------------------------------------
READS = ["teams/", "teams/inference/", "teams/inference/oncall/", "schedules/primary/shifts/",
         "pages/", "heartbeats/", "maintenance-windows/", "reports/"]  # fmt: skip


def test_every_role_reads_and_no_role_is_refused(api_as, team):
    viewer, nobody = api_as(roles.VIEWER), api_as(None)
    for path in READS:
        assert viewer.get(API + path).status_code == 200, path
        r = nobody.get(API + path)
        assert r.status_code == 403, path
        assert "console role" in r.json()["detail"]
    assert APIClient().get(API + "teams/").status_code == 401


def test_writes_need_their_role(api_as, team):
    viewer, responder = api_as(roles.VIEWER), api_as(roles.RESPONDER)
    later = (timezone.now() + timedelta(days=1)).isoformat()
    window = {"starts_at": later, "ends_at": later}
    refused = [
        (viewer, "post", "me/contact-methods/", {"kind": "ntfy", "address": "ntfy://x/y"}),
        (viewer, "post", "schedules/primary/take/", window),
        (viewer, "post", "schedules/primary/swaps/", window),
        (responder, "post", "schedules/primary/overrides/", {**window, "user": "alice"}),
        (responder, "post", "schedules/primary/ical/", {"ical": "BEGIN:VCALENDAR"}),
        (responder, "post", "schedules/primary/ical/refresh/", None),
        (responder, "post", "heartbeats/", {"name": "nightly", "interval_seconds": 3600}),
        (responder, "post", "maintenance-windows/", {"name": "m", **window}),
        (responder, "post", "maintenance-windows/1/cancel/", None),
        (responder, "delete", "heartbeats/nightly/", None),
        (viewer, "post", "pages/1/acknowledge/", None),
    ]
    for client, method, path, body in refused:
        r = getattr(client, method)(API + path, body, format="json")
        assert r.status_code == 403, (path, r.content)
        assert "role does not allow" in r.json()["detail"]


# --- teams and who is on call -------------------------------------------------------------------
def test_teams_list_shows_ownerships_policy_and_who_is_on_call(api_as, team):
    r = api_as(roles.VIEWER).get(API + "teams/")
    assert r.status_code == 200
    assert r.json()["count"] == 1
    shown = r.json()["results"][0]
    assert shown["slug"] == "inference"
    assert shown["members"] == ["alice", "bob", "carol"]
    assert shown["ownerships"] == [
        {"namespace": "inference-*", "lws": "", "model": "", "node_pool": "", "runbook": ""}
    ]
    policy = shown["escalation_policy"]
    assert policy["name"] == "inference policy"
    assert policy["repeat_times"] == 1
    assert policy["steps"][0]["action"] == "page_schedule"
    assert policy["steps"][0]["schedule"] == "primary"
    [schedule] = shown["schedules"]
    assert schedule["slug"] == "primary"
    oncall = schedule["oncall"]
    assert [s["user"] for s in oncall["now"]] in (["alice"], ["bob"])  # whoever's week it is
    assert oncall["next"]["user"] != oncall["now"][0]["user"]


def test_team_oncall_at_a_moment(api_as, team):
    client = api_as(roles.VIEWER)
    r = client.get(API + "teams/inference/oncall/", {"at": "2026-03-04T12:00:00Z"})
    assert r.status_code == 200, r.content
    [schedule] = r.json()["schedules"]
    [now] = schedule["oncall"]["now"]
    assert (now["user"], now["source"], now["layer"]) == ("alice", "rotation", "weekly")
    assert now["starts_at"] == "2026-03-02T09:00:00Z"
    assert now["ends_at"] == "2026-03-09T09:00:00Z"
    assert schedule["oncall"]["next"]["user"] == "bob"
    assert schedule["oncall"]["next"]["starts_at"] == "2026-03-09T09:00:00Z"
    r = client.get(API + "teams/inference/oncall/", {"at": "yesterday"})
    assert r.status_code == 400
    assert "at" in r.json()
    r = client.get(API + "teams/inference/oncall/", {"at": "0001-01-01T00:00:00Z"})
    assert r.status_code == 400
    assert "at" in r.json()
    r = client.get(API + "teams/nobody/oncall/")
    assert r.status_code == 404
    assert "nobody" in r.json()["detail"]


def test_team_list_query_count_does_not_grow(api_as, people, django_assert_max_num_queries):
    client = api_as(roles.VIEWER)
    make_team("one", people, schedules=2)

    with django_assert_max_num_queries(30) as captured:
        assert client.get(API + "teams/").status_code == 200
    few = len(captured.captured_queries)
    for slug in ("two", "three", "four", "five"):
        make_team(slug, people, schedules=2)
    with django_assert_max_num_queries(few):
        r = client.get(API + "teams/")
    assert r.json()["count"] == 5
    assert all(len(t["schedules"]) == 2 for t in r.json()["results"])


def test_incident_oncall_names_the_owner_why_and_the_escalation(api_as, team, people):
    incident = incident_for()
    contact(people["alice"], "ntfy", "ntfy://ntfy.example.com/alice-topic-1")
    page = page_for(people["alice"], incident)
    r = api_as(roles.VIEWER).get(f"{API}incidents/{incident.pk}/oncall/")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["incident"] == incident.pk
    assert body["team"]["slug"] == "inference"
    assert body["policy"]["name"] == "inference policy"
    assert "team=inference" in body["why"]
    assert [s["slug"] for s in body["schedules"]] == ["primary"]
    assert body["schedules"][0]["oncall"]["now"]
    assert body["escalation"]["state"] == "active"
    [shown] = body["pages"]
    assert shown["id"] == page.pk
    assert shown["user"] == "alice"
    assert [(d["position"], d["kind"], d["state"]) for d in shown["deliveries"]] == [
        (1, "ntfy", "pending")
    ]
    assert "alice-topic" not in r.content.decode()  # no address anywhere
    for bad in (999_999, 2**63, 2**70):
        assert (
            api_as(roles.VIEWER, f"v{bad}").get(f"{API}incidents/{bad}/oncall/").status_code == 404
        )


def test_incident_oncall_without_an_owner(api_as):
    incident = incident_for("unknown-team")
    body = api_as(roles.VIEWER).get(f"{API}incidents/{incident.pk}/oncall/").json()
    assert (body["team"], body["schedules"], body["escalation"], body["pages"]) == (
        None,
        [],
        None,
        [],
    )


# --- pages ------------------------------------------------------------------------------------
def test_pages_list_filters_and_shows_deliveries(api_as, team, people):
    first, second = incident_for(), incident_for()
    contact(people["alice"], "ntfy", "ntfy://ntfy.example.com/a-secret-topic")
    contact(people["alice"], "email", "alice@example.com")
    p1 = page_for(people["alice"], first)
    p2 = page_for(people["bob"], second)
    Escalation.objects.filter(pk=p2.escalation_id).update(team=team)
    client = api_as(roles.VIEWER)
    r = client.get(API + "pages/")
    assert [p["id"] for p in r.json()["results"]] == [p2.pk, p1.pk]  # newest first
    assert [d["kind"] for d in r.json()["results"][1]["deliveries"]] == ["ntfy", "email"]
    assert "a-secret-topic" not in r.content.decode()
    assert [p["id"] for p in client.get(API + "pages/", {"user": "alice"}).json()["results"]] == [
        p1.pk
    ]
    assert [
        p["id"] for p in client.get(API + "pages/", {"team": "inference"}).json()["results"]
    ] == [p2.pk]
    assert client.get(API + "pages/", {"incident": first.pk}).json()["count"] == 1
    assert client.get(API + "pages/", {"status": "acknowledged"}).json()["count"] == 0
    assert client.get(API + "pages/", {"status": "shouting"}).status_code == 400
    assert client.get(API + "pages/", {"incident": "-1"}).status_code == 400
    assert client.get(API + "pages/", {"incident": str(2**64)}).status_code == 400
    r = client.get(f"{API}pages/{p1.pk}/")
    assert r.status_code == 200
    assert r.json()["incident_url"].endswith(f"/incidents/{first.pk}/")
    assert client.get(f"{API}pages/{2**63}/").status_code == 404


def test_pages_list_query_count_does_not_grow(api_as, people, django_assert_max_num_queries):
    client = api_as(roles.VIEWER)
    for name in ("alice", "bob"):
        contact(people[name], "ntfy", f"ntfy://ntfy.example.com/{name}")
        contact(people[name], "email", f"{name}@example.com")
    page_for(people["alice"], incident_for())
    with django_assert_max_num_queries(12) as captured:
        client.get(API + "pages/")
    few = len(captured.captured_queries)
    for n in range(10):
        page_for(people[("alice", "bob")[n % 2]], incident_for())
    with django_assert_max_num_queries(few):
        r = client.get(API + "pages/")
    assert r.json()["count"] == 11


def test_acknowledging_a_page_acknowledges_the_incident_as_the_caller(api_as, team, people):
    incident = incident_for()
    page = page_for(people["alice"], incident)
    other = page_for(people["bob"], incident, key="other")
    responder = api_as(roles.RESPONDER, "rita")
    r = responder.post(f"{API}pages/{page.pk}/acknowledge/")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "acknowledged"
    incident.refresh_from_db()
    assert incident.status == "acknowledged"
    assert incident.commander.username == "rita"  # the first acknowledger takes command
    assert Page.objects.get(pk=other.pk).status == "acknowledged"  # paging stopped
    assert Escalation.objects.get(pk=page.escalation_id).state == "acknowledged"
    r = responder.post(f"{API}pages/{page.pk}/acknowledge/")
    assert r.status_code == 409
    assert r.json()["code"]
    assert responder.post(f"{API}pages/{2**63}/acknowledge/").status_code == 404


# --- reports ----------------------------------------------------------------------------------
def test_reports_json_has_the_figures(api_as, settings, dataset):
    settings.PAGER_BUSINESS_HOURS, settings.TIME_ZONE = "09:00-18:00", "UTC"
    client = api_as(roles.VIEWER)
    r = client.get(API + "reports/", report_data.RANGE)
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["start"], body["end"], body["business_hours"]) == (
        "2026-10-19",
        "2026-10-31",
        "09:00-18:00",
    )
    assert (
        body["pages"],
        body["out_of_hours"],
        body["escalations"],
        body["reached_last_step"],
    ) == (9, 5, 5, 2)
    alice = body["people"][0]
    assert alice == {"username": "alice", "pages": 5, "out_of_hours": 3, "acknowledged": 5,
                     "median_ack_seconds": 180.0, "p90_ack_seconds": 456.0}  # fmt: skip
    assert [t["team"] for t in body["teams"]] == ["infer", "train", None]
    assert body["teams"][0]["reached_last_step"] == 1
    assert body["teams"][0]["median_ack_seconds"] == 180.0
    assert [e["incident_url"].rsplit("/", 2)[-2] for e in body["exhausted"]] == [
        str(e["incident"]) for e in body["exhausted"]
    ]


def test_reports_refuse_bad_ranges(api_as):
    client = api_as(roles.VIEWER)
    for params, field in [
        ({"start": "nope"}, "start"),
        ({"start": "2026-10-31", "end": "2026-10-01"}, "end"),
        ({"start": "2020-01-01", "end": "2026-10-31"}, "end"),
        ({"end": "0001-01-01"}, "end"),
    ]:
        r = client.get(API + "reports/", params)
        assert r.status_code == 400, params
        assert field in r.json(), r.json()
    assert "366" in str(
        client.get(API + "reports/", {"start": "2020-01-01", "end": "2026-10-31"}).json()
    )
    body = client.get(API + "reports/").json()  # the last 30 days
    assert (datetime.fromisoformat(body["end"]) - datetime.fromisoformat(body["start"])).days == 29


# --- the schema --------------------------------------------------------------------------------
PATHS = [
    "teams/", "teams/{slug}/", "teams/{slug}/oncall/", "incidents/{id}/oncall/",
    "schedules/{slug}/shifts/", "schedules/{slug}/overrides/", "overrides/{id}/",
    "schedules/{slug}/take/", "schedules/{slug}/swaps/", "swaps/{id}/accept/",
    "swaps/{id}/cancel/", "schedules/{slug}/ical/", "schedules/{slug}/ical/refresh/",
    "me/contact-methods/", "me/contact-methods/{id}/", "me/contact-methods/{id}/test/",
    "me/contact-methods/{id}/move/", "pages/", "pages/{id}/", "pages/{id}/acknowledge/",
    "heartbeats/", "heartbeats/{slug}/", "maintenance-windows/",
    "maintenance-windows/{id}/cancel/", "reports/",
]  # fmt: skip


def test_schema_documents_the_pager_api(api_as):
    r = api_as(roles.VIEWER).get("/api/schema/", {"format": "json"})
    assert r.status_code == 200
    schema = r.json()
    paths = schema["paths"]
    for path in PATHS:
        assert "/api/v1/pager/" + path in paths, path
    components = schema["components"]["schemas"]
    # The address goes in, never out.
    assert components["ContactMethodInput"]["properties"]["address"]["writeOnly"] is True
    assert "address" not in components["ContactMethod"]["properties"]
    assert "address_shown" in components["ContactMethod"]["properties"]
    ical = paths["/api/v1/pager/schedules/{slug}/ical/"]["post"]["requestBody"]["content"]
    assert {"application/json", "text/calendar"} <= set(ical)
    created = paths["/api/v1/pager/heartbeats/"]["post"]["responses"]["201"]
    assert created["content"]["application/json"]["schema"]["$ref"].endswith("/HeartbeatCreated")
    assert "token" in components["HeartbeatCreated"]["properties"]
    assert "token" not in components["Heartbeat"]["properties"]
    shifts = paths["/api/v1/pager/schedules/{slug}/shifts/"]["get"]
    assert "400" in shifts["responses"]
    assert {p["name"] for p in shifts["parameters"]} >= {"slug", "start", "end"}
