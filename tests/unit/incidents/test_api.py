"""The incidents REST API, as a script or an SRE with a token uses it."""

import pytest
from rest_framework.pagination import PageNumberPagination
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident
from incidents.services import incident_acknowledge, incident_resolve
from tests.payloads import alert, notification, resolved

pytestmark = pytest.mark.django_db

LIST = "/api/v1/incidents/"
LIST_FIELDS = {
    "id",
    "is_drill",
    "title",
    "status",
    "severity",
    "runbook",
    "namespace",
    "commander",
    "started_at",
    "triggered_at",
    "acknowledged_at",
    "mitigated_at",
    "resolved_at",
    "reopened_at",
    "reopen_count",
    "alert_count",
    "firing_count",
    "silenced_count",
    "inhibited_count",
    "grouping_key",
    "url",
}
ALERT_FIELDS = {
    "fingerprint",
    "alertname",
    "status",
    "severity",
    "labels",
    "annotations",
    "starts_at",
    "ends_at",
    "generator_url",
    "first_received_at",
    "last_received_at",
    "am_state",
    "am_silenced_by",
    "am_checked_at",
}
EVENT_FIELDS = {
    "id",
    "kind",
    "occurred_at",
    "actor",
    "source",
    "message",
    "message_i18n",
    "payload",
}


def detail_url(incident_id: int, action: str = "") -> str:
    return f"/api/v1/incidents/{incident_id}/" + (f"{action}/" if action else "")


@pytest.fixture
def api_as(make_user):
    """An API client authenticated with `Authorization: Token <key>` as a new user."""

    def _as(role: str | None, username: str | None = None) -> APIClient:
        user = make_user(username or role or "norole", role)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
        client.user = user
        return client

    return _as


@pytest.fixture
def ingest(post_webhook):
    """Deliver one Alertmanager notification for a group; return its incident id."""

    def _ingest(group: str = "g1", *, pods: int = 1, **alert_kw) -> int:
        # A label per group: the same alert sent under two groups belongs to the first.
        labels = {"route": group, **alert_kw.pop("extra_labels", {})}
        alerts = [alert(pod=f"vllm-chat-{i}", extra_labels=labels, **alert_kw) for i in range(pods)]
        kw = {"alertname": alert_kw["alertname"]} if "alertname" in alert_kw else {}
        r = post_webhook(notification(alerts, group_key=group, **kw))
        assert r.status_code == 200, r.content
        return r.json()["incidents"][0]

    return _ingest


# --- authentication and roles -----------------------------------------------------------
def test_token_auth_lists_incidents(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.VIEWER).get(LIST)
    assert r.status_code == 200
    assert r.json()["count"] == 1
    assert r.json()["results"][0]["id"] == incident_id


def test_session_auth_lists_incidents(client, make_user, ingest):
    ingest()
    client.force_login(make_user("vera", roles.VIEWER))  # axes needs a request to log in
    r = client.get(LIST)
    assert r.status_code == 200
    assert r.json()["count"] == 1


def test_session_posts_need_the_csrf_token_but_token_posts_do_not(make_user, api_as, ingest):
    incident_id = ingest()
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(make_user("rita", roles.RESPONDER))
    r = browser.post(detail_url(incident_id, "acknowledge"), format="json")
    assert r.status_code == 403
    assert "CSRF" in r.json()["detail"]
    r = api_as(roles.RESPONDER).post(detail_url(incident_id, "acknowledge"), format="json")
    assert r.status_code == 200


def test_user_without_a_console_role_is_refused(api_as, ingest):
    incident_id = ingest()
    client = api_as(None)
    for url in (LIST, detail_url(incident_id), detail_url(incident_id, "timeline")):
        r = client.get(url)
        assert r.status_code == 403
        assert "console role" in r.json()["detail"]


def test_anonymous_and_bad_token_are_refused(ingest):
    incident_id = ingest()
    r = APIClient().get(detail_url(incident_id))
    assert r.status_code in (401, 403)
    assert r.json() == {"detail": "Authentication credentials were not provided."}
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    r = bad.get(LIST)
    assert r.status_code in (401, 403)
    assert r.json() == {"detail": "Invalid token."}


# --- list and filters -------------------------------------------------------------------
@pytest.fixture
def three_incidents(ingest, make_user):
    """ttft (SEV1, acknowledged), nccl (SEV3, triggered), ecc (SEV2, resolved)."""
    boss = make_user("boss", roles.COMMANDER)
    ttft = ingest("g-ttft")
    nccl = ingest("g-nccl", alertname="VLLMEngineStalled", runbook="nccl-hang", severity="warning")
    ecc = ingest("g-ecc", alertname="GPUECCErrors", runbook="ecc-errors", severity="error")
    incident_acknowledge(incident_id=ttft, actor=boss)
    incident_resolve(
        confirm_no_commander=True, incident_id=ecc, actor=boss, confirm=True, reason="ECC cleared"
    )
    return {"ttft": ttft, "nccl": nccl, "ecc": ecc}


def _ids(client, query: str) -> set[int]:
    r = client.get(LIST + query)
    assert r.status_code == 200, r.content
    return {row["id"] for row in r.json()["results"]}


def test_list_filters(api_as, three_incidents):
    client = api_as(roles.VIEWER)
    ids = three_incidents
    assert _ids(client, "") == set(ids.values())
    assert _ids(client, "?status=acknowledged") == {ids["ttft"]}
    assert _ids(client, "?status=open") == {ids["ttft"], ids["nccl"]}
    assert _ids(client, "?status=resolved") == {ids["ecc"]}
    assert _ids(client, "?severity=SEV1") == {ids["ttft"]}
    assert _ids(client, "?severity=sev3") == {ids["nccl"]}
    assert _ids(client, "?runbook=ecc-errors") == {ids["ecc"]}
    assert _ids(client, "?q=EngineStalled") == {ids["nccl"]}
    assert _ids(client, f"?q=%23{ids['ecc']}") == {ids["ecc"]}
    assert _ids(client, f"?q={ids['nccl']}") == {ids["nccl"]}
    assert _ids(client, "?status=open&runbook=nccl-hang&q=vllm") == {ids["nccl"]}
    assert _ids(client, "?status=&severity=&runbook=&q=") == set(ids.values())


def test_list_rejects_unknown_filter_values(api_as):
    client = api_as(roles.VIEWER)
    r = client.get(LIST + "?status=resolvd&severity=SEV9")
    assert r.status_code == 400
    assert set(r.json()) == {"status", "severity"}
    assert "resolvd" in r.json()["status"][0]


def test_list_fields_newest_first(api_as, three_incidents):
    r = api_as(roles.VIEWER).get(LIST)
    rows = r.json()["results"]
    assert [row["id"] for row in rows] == sorted(three_incidents.values(), reverse=True)
    row = next(row for row in rows if row["id"] == three_incidents["ttft"])
    assert set(row) == LIST_FIELDS
    assert row["status"] == "acknowledged"
    assert row["severity"] == "SEV1"
    assert row["runbook"] == "ttft-spike"
    assert row["namespace"] == "llm-serving"
    assert row["commander"] == "boss"  # acknowledging took the free seat
    assert row["acknowledged_at"] is not None
    assert row["resolved_at"] is None
    assert (row["alert_count"], row["firing_count"]) == (1, 1)
    assert row["url"] == f"http://testserver/incidents/{row['id']}/"


def test_list_is_paginated(api_as, ingest, monkeypatch):
    for i in range(3):
        ingest(f"g{i}")
    monkeypatch.setattr(PageNumberPagination, "page_size", 2)
    client = api_as(roles.VIEWER)
    first = client.get(LIST).json()
    assert first["count"] == 3
    assert len(first["results"]) == 2
    second = client.get(first["next"]).json()
    assert len(second["results"]) == 1
    assert second["next"] is None


# --- detail and timeline after ingestion ------------------------------------------------
def test_detail_shows_alerts_after_ingestion(api_as, post_webhook):
    a, b = alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")
    incident_id = post_webhook(notification([a, b])).json()["incidents"][0]
    post_webhook(notification([resolved(a), b]))

    r = api_as(roles.VIEWER).get(detail_url(incident_id))
    assert r.status_code == 200
    body = r.json()
    detail = {"group_labels", "alerts", "part_of", "related", "archived_at"}
    assert set(body) == LIST_FIELDS | detail
    assert body["group_labels"] == {"alertname": "VLLMHighTTFT", "lws": "vllm-chat"}
    assert (body["alert_count"], body["firing_count"]) == (2, 1)
    alerts = {x["labels"]["pod"]: x for x in body["alerts"]}
    assert all(set(x) == ALERT_FIELDS for x in alerts.values())
    firing, gone = alerts["vllm-chat-1"], alerts["vllm-chat-0"]
    assert (firing["status"], gone["status"]) == ("firing", "resolved")
    assert firing["alertname"] == "VLLMHighTTFT"
    assert firing["severity"] == "critical"
    assert firing["ends_at"] is None
    assert gone["ends_at"] is not None
    assert firing["annotations"]["summary"] == "TTFT p99 above 2s on vllm-chat"
    assert firing["generator_url"].startswith("http://prometheus:9090/")


def test_detail_lists_firing_alerts_first(api_as, post_webhook):
    a, b = alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")
    incident_id = post_webhook(notification([a, b])).json()["incidents"][0]
    post_webhook(notification([resolved(a), b]))
    alerts = api_as(roles.VIEWER).get(detail_url(incident_id)).json()["alerts"]
    assert [x["status"] for x in alerts] == ["firing", "resolved"]


def test_timeline_after_ingestion(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.VIEWER).get(detail_url(incident_id, "timeline"))
    assert r.status_code == 200
    events = r.json()["results"]
    assert events, "ingestion writes timeline events"
    assert all(set(e) == EVENT_FIELDS for e in events)
    assert events[0]["kind"] == "incident_opened"
    assert all(e["actor"] is None for e in events)
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)


def test_timeline_after_returns_only_newer_events(api_as, ingest):
    incident_id = ingest()
    client = api_as(roles.RESPONDER)
    events = client.get(detail_url(incident_id, "timeline")).json()["results"]
    last = events[-1]["id"]
    client.post(detail_url(incident_id, "notes"), {"text": "Scaling up."}, format="json")
    client.post(detail_url(incident_id, "acknowledge"), format="json")

    r = client.get(detail_url(incident_id, "timeline") + f"?after={last}")
    assert r.status_code == 200
    newer = r.json()["results"]
    assert [(e["kind"], e["actor"]) for e in newer] == [
        ("note", "responder"),
        ("status_changed", "responder"),
        ("commander_changed", "responder"),  # the first acknowledgement takes command
    ]
    assert newer[0]["message"] == "Scaling up."
    assert newer[1]["payload"]["to"] == "acknowledged"
    r = client.get(detail_url(incident_id, "timeline") + f"?after={newer[-1]['id']}")
    assert r.json()["results"] == []


def test_timeline_after_must_be_a_number(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.VIEWER).get(detail_url(incident_id, "timeline") + "?after=yesterday")
    assert r.status_code == 400
    assert "after" in r.json()


@pytest.mark.parametrize("suffix", ["", "timeline/"])
def test_unknown_incident_reads_are_404(api_as, suffix):
    r = api_as(roles.VIEWER).get(f"/api/v1/incidents/987654/{suffix}")
    assert r.status_code == 404
    assert r.json() == {"detail": "Incident #987654 does not exist."}


# --- lifecycle actions by role ----------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "body", "role", "expected"),
    [
        ("acknowledge", None, roles.VIEWER, 403),
        ("acknowledge", None, roles.RESPONDER, 200),
        ("mitigate", {"reason": "Scaled to 6."}, roles.VIEWER, 403),
        ("mitigate", {"reason": "Scaled to 6.", "confirm": True}, roles.RESPONDER, 200),
        ("resolve", {}, roles.VIEWER, 403),
        ("resolve", {}, roles.RESPONDER, 403),
        (
            "resolve",
            {"reason": "TTFT back under 1s.", "confirm": True, "confirm_no_commander": True},
            roles.COMMANDER,
            200,
        ),
        ("notes", {"text": "Looking at the router."}, roles.VIEWER, 403),
        ("notes", {"text": "Looking at the router."}, roles.RESPONDER, 201),
        ("commander", {"commander": None}, roles.VIEWER, 403),
    ],
)
def test_action_permissions_by_role(api_as, ingest, action, body, role, expected):
    incident_id = ingest()
    client = api_as(role)
    if action == "commander" and body == {"commander": None}:
        # Clearing needs someone to clear: a commander holds it first.
        Incident.objects.filter(pk=incident_id).update(commander=api_as(roles.COMMANDER).user)
    r = client.post(detail_url(incident_id, action), body, format="json")
    assert r.status_code == expected, r.content
    if expected == 403:
        assert "not allow" in r.json()["detail"]
        assert Incident.objects.get(pk=incident_id).status == "triggered"


@pytest.mark.parametrize("role", [roles.VIEWER, roles.RESPONDER])
def test_only_commanders_reopen(api_as, ingest, role):
    incident_id = ingest()
    boss = api_as(roles.COMMANDER, "boss").user
    incident_resolve(
        confirm_no_commander=True, incident_id=incident_id, actor=boss, confirm=True, reason="over"
    )
    r = api_as(role).post(detail_url(incident_id, "reopen"), {"reason": "x"}, format="json")
    assert r.status_code == 403
    assert Incident.objects.get(pk=incident_id).status == "resolved"


def test_full_lifecycle_answers_the_incident(api_as, ingest):
    incident_id = ingest()
    responder = api_as(roles.RESPONDER, "rita")
    commander = api_as(roles.COMMANDER, "carl")

    r = responder.post(detail_url(incident_id, "acknowledge"), format="json")
    assert r.status_code == 200
    assert r.json()["status"] == "acknowledged"
    assert r.json()["acknowledged_at"] is not None
    assert r.json()["alerts"][0]["labels"]["pod"] == "vllm-chat-0"

    r = responder.post(
        detail_url(incident_id, "mitigate"),
        {"reason": "Scaled vllm-chat to 6.", "confirm": True},  # its alert still fires
        format="json",
    )
    assert (r.status_code, r.json()["status"]) == (200, "mitigated")

    r = commander.post(
        detail_url(incident_id, "resolve"), {"reason": "Over.", "confirm": True}, format="json"
    )
    assert (r.status_code, r.json()["status"]) == (200, "resolved")
    assert r.json()["resolved_at"] is not None

    r = commander.post(
        detail_url(incident_id, "reopen"), {"reason": "TTFT is back up."}, format="json"
    )
    assert r.status_code == 200
    assert (r.json()["status"], r.json()["reopen_count"]) == ("triggered", 1)

    events = commander.get(detail_url(incident_id, "timeline")).json()["results"]
    changes = [
        (e["actor"], e["payload"]["to"], e["message"])
        for e in events
        if e["actor"] and e["kind"] == "status_changed"
    ]
    still_firing = "1 alert still firing: VLLMHighTTFT (pod=vllm-chat-0)"
    assert changes == [
        ("rita", "acknowledged", "Incident acknowledged."),
        (
            "rita",
            "mitigated",
            f"Incident mitigated: Scaled vllm-chat to 6. (confirmed with {still_firing})",
        ),
        ("carl", "resolved", f"Incident resolved: Over. (confirmed with {still_firing})"),
        ("carl", "triggered", "Incident reopened: TTFT is back up."),
    ]


def test_invalid_transition_is_409_with_a_message(api_as, ingest):
    incident_id = ingest()
    client = api_as(roles.COMMANDER)
    assert client.post(detail_url(incident_id, "acknowledge"), format="json").status_code == 200
    r = client.post(detail_url(incident_id, "acknowledge"), format="json")
    assert r.status_code == 409
    assert r.json() == {
        "detail": f"Incident #{incident_id} is already acknowledged.",
        "code": "invalid_transition",
    }
    r = client.post(detail_url(incident_id, "reopen"), {"reason": "again"}, format="json")
    assert r.status_code == 409
    assert "not resolved" in r.json()["detail"]


def test_reopen_needs_a_reason(api_as, ingest):
    incident_id = ingest()
    client = api_as(roles.COMMANDER)
    client.post(
        detail_url(incident_id, "resolve"),
        {"reason": "Over.", "confirm": True, "confirm_no_commander": True},
        format="json",
    )
    for body in ({}, {"reason": ""}, {"reason": "   "}):
        r = client.post(detail_url(incident_id, "reopen"), body, format="json")
        assert r.status_code == 400, body
        assert list(r.json()) == ["reason"]
    assert Incident.objects.get(pk=incident_id).status == "resolved"


def test_reason_longer_than_the_limit_is_rejected(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.RESPONDER).post(
        detail_url(incident_id, "mitigate"), {"reason": "x" * 2001}, format="json"
    )
    assert r.status_code == 400
    assert "2000" in r.json()["reason"][0]


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("acknowledge", None),
        ("mitigate", {}),
        ("resolve", {}),
        ("reopen", {"reason": "r"}),
        ("notes", {"text": "t"}),
        ("commander", {"commander": "commander"}),
    ],
)
def test_unknown_incident_actions_are_404(api_as, action, body):
    r = api_as(roles.COMMANDER).post(detail_url(987654, action), body, format="json")
    assert r.status_code == 404
    assert r.json() == {"detail": "Incident #987654 does not exist."}


def test_api_speaks_json_only(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.RESPONDER).post(detail_url(incident_id, "notes"), {"text": "hi"})
    assert r.status_code == 415


# --- notes ------------------------------------------------------------------------------
def test_note_is_added_and_answered(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.RESPONDER, "rita").post(
        detail_url(incident_id, "notes"), {"text": "  Router config rolled back.  "}, format="json"
    )
    assert r.status_code == 201
    event = r.json()
    assert set(event) == EVENT_FIELDS
    assert (event["kind"], event["actor"], event["source"]) == ("note", "rita", "console")
    assert event["message"] == "Router config rolled back."


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({}, "required"),
        ({"text": ""}, "blank"),
        ({"text": " \n\t "}, "blank"),
        ({"text": None}, "null"),
        ({"text": "x" * 10_001}, "10000"),
    ],
)
def test_invalid_notes_are_rejected_with_a_message(api_as, ingest, body, needle):
    incident_id = ingest()
    client = api_as(roles.RESPONDER)
    r = client.post(detail_url(incident_id, "notes"), body, format="json")
    assert r.status_code == 400
    assert needle in r.json()["text"][0]
    events = client.get(detail_url(incident_id, "timeline")).json()["results"]
    assert not [e for e in events if e["kind"] == "note"]


def test_note_of_exactly_the_limit_is_accepted(api_as, ingest):
    incident_id = ingest()
    r = api_as(roles.RESPONDER).post(
        detail_url(incident_id, "notes"), {"text": "x" * 10_000}, format="json"
    )
    assert r.status_code == 201
    assert len(r.json()["message"]) == 10_000


# --- commander --------------------------------------------------------------------------
def _set_commander(client, incident_id, username):
    return client.post(detail_url(incident_id, "commander"), {"commander": username}, format="json")


def test_responder_takes_command_of_an_unowned_incident(api_as, ingest):
    incident_id = ingest()
    rita = api_as(roles.RESPONDER, "rita")
    r = _set_commander(rita, incident_id, "rita")
    assert r.status_code == 200
    assert r.json()["commander"] == "rita"
    events = rita.get(detail_url(incident_id, "timeline")).json()["results"]
    assert events[-1]["kind"] == "commander_changed"
    assert {k: v for k, v in events[-1]["payload"].items() if k != "msg"} == {
        "from": None,
        "to": "rita",
    }


def test_responder_cannot_take_over_or_assign(api_as, ingest):
    incident_id = ingest()
    rita = api_as(roles.RESPONDER, "rita")
    rob = api_as(roles.RESPONDER, "rob")
    assert _set_commander(rita, incident_id, "rita").status_code == 200

    r = _set_commander(rob, incident_id, "rob")
    assert r.status_code == 403
    assert "assign the incident commander" in r.json()["detail"]
    assert _set_commander(rob, incident_id, None).status_code == 403
    other = ingest("g-other")
    assert _set_commander(rob, other, "rita").status_code == 403
    assert Incident.objects.get(pk=incident_id).commander.username == "rita"


def test_commander_assigns_and_clears(api_as, ingest):
    incident_id = ingest()
    api_as(roles.RESPONDER, "rita")
    carl = api_as(roles.COMMANDER, "carl")
    r = _set_commander(carl, incident_id, "rita")
    assert (r.status_code, r.json()["commander"]) == (200, "rita")
    r = _set_commander(carl, incident_id, "carl")
    assert (r.status_code, r.json()["commander"]) == (200, "carl")
    r = _set_commander(carl, incident_id, None)
    assert (r.status_code, r.json()["commander"]) == (200, None)


def test_commander_assignment_errors(api_as, ingest):
    incident_id = ingest()
    api_as(roles.VIEWER, "vera")
    carl = api_as(roles.COMMANDER, "carl")

    r = _set_commander(carl, incident_id, "nobody-by-that-name")
    assert r.status_code == 400
    assert r.json() == {"commander": ["No active user is named nobody-by-that-name."]}
    r = carl.post(detail_url(incident_id, "commander"), {}, format="json")
    assert r.status_code == 400
    assert "commander" in r.json()

    r = _set_commander(carl, incident_id, "vera")
    assert r.status_code == 409
    assert "vera has no responder role" in r.json()["detail"]

    assert _set_commander(carl, incident_id, "carl").status_code == 200
    r = _set_commander(carl, incident_id, "carl")
    assert r.status_code == 409
    assert r.json()["code"] == "unchanged"


# --- query counts -----------------------------------------------------------------------
LIST_QUERY_BOUND = 4  # token+user, groups, count, page
DETAIL_QUERY_BOUND = 5  # token+user, groups, incident with counts, alerts, related
TIMELINE_QUERY_BOUND = 5  # token+user, groups, incident, count, page


@pytest.mark.parametrize("n", [3, 30])
def test_list_query_count_is_constant(api_as, ingest, django_assert_max_num_queries, n):
    for i in range(n):
        ingest(f"g{i}")
    client = api_as(roles.VIEWER)
    Incident.objects.update(commander=api_as(roles.COMMANDER, "carl").user)
    with django_assert_max_num_queries(LIST_QUERY_BOUND):
        r = client.get(LIST)
    assert len(r.json()["results"]) == n
    assert all(row["commander"] == "carl" for row in r.json()["results"])


@pytest.mark.parametrize("n", [5, 50])
def test_detail_query_count_is_constant(api_as, ingest, django_assert_max_num_queries, n):
    incident_id = ingest(pods=n)
    client = api_as(roles.VIEWER)
    with django_assert_max_num_queries(DETAIL_QUERY_BOUND):
        r = client.get(detail_url(incident_id))
    assert len(r.json()["alerts"]) == n


@pytest.mark.parametrize("n", [2, 20])
def test_timeline_query_count_is_constant(api_as, ingest, django_assert_max_num_queries, n):
    incident_id = ingest()
    client = api_as(roles.RESPONDER)
    for i in range(n):
        client.post(detail_url(incident_id, "notes"), {"text": f"note {i}"}, format="json")
    with django_assert_max_num_queries(TIMELINE_QUERY_BOUND):
        r = client.get(detail_url(incident_id, "timeline"))
    assert sum(e["kind"] == "note" for e in r.json()["results"]) == n
