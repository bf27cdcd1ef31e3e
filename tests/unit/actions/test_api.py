"""REST API of the actions: request with an idempotency key, read, approve,
reject, cancel, undo; permissions per role; query counts that do not grow with the rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from actions.models import ActionRun
from console import roles
from console.api_tokens.models import ApiToken
from tests.factories import IncidentFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
SCALE = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}


@pytest.fixture
def api_as(make_user):
    def _as(role, username=None) -> APIClient:
        user = make_user(username or role or "norole", role)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
        client.user = user
        return client

    return _as


def ask(client, incident_id, key="api-key-0001", kind="scale_lws", params=None):
    body = {"kind": kind, "params": SCALE if params is None else params, "idempotency_key": key}
    return client.post(f"/api/v1/incidents/{incident_id}/actions/", body, format="json")


def test_request_then_repeat_answers_201_then_200_with_the_same_run(api_as):
    incident = IncidentFactory(severity="SEV3")
    rita = api_as(roles.RESPONDER, "rita")
    r1 = ask(rita, incident.pk)
    assert r1.status_code == 201, r1.content
    body = r1.json()
    assert body["status"] == "queued"
    assert body["target"] == "leaderworkerset/llm-serving/vllm-chat"
    assert body["events"][0]["message"].startswith("Requested")
    r2 = ask(rita, incident.pk)
    assert r2.status_code == 200
    assert r2.json()["id"] == body["id"]
    assert ActionRun.objects.count() == 1
    got = rita.get(f"/api/v1/actions/{body['id']}/")
    assert got.status_code == 200
    assert got.json()["requested_by"] == "rita"


def test_errors_are_400_409_404_with_a_message(api_as):
    incident = IncidentFactory(severity="SEV3")
    rita = api_as(roles.RESPONDER, "rita")
    bad = ask(rita, incident.pk, params={**SCALE, "replicas_delta": "lots"})
    assert bad.status_code == 400
    assert "replicas_delta" in bad.json()["detail"]
    unknown_kind = ask(rita, incident.pk, kind="reboot_everything")
    assert unknown_kind.status_code == 400
    assert "kind" in unknown_kind.json()
    assert ask(rita, 999999).status_code == 404
    assert ask(rita, incident.pk).status_code == 201
    busy = ask(api_as(roles.RESPONDER, "ron"), incident.pk, key="api-key-0002")
    assert busy.status_code == 409
    assert busy.json()["code"] == "busy"
    assert rita.get("/api/v1/actions/424242/").status_code == 404


def test_approval_flow_and_roles(api_as):
    incident = IncidentFactory(severity="SEV1")
    rita = api_as(roles.RESPONDER, "rita")
    run = ask(rita, incident.pk).json()
    assert run["status"] == "awaiting_approval"
    assert run["requires_approval"]
    url = f"/api/v1/actions/{run['id']}"
    # A responder cannot approve; the requester (even a commander) cannot either.
    assert rita.post(f"{url}/approve/", {}, format="json").status_code == 403
    viewer = api_as(roles.VIEWER, "vic")
    assert viewer.get(f"{url}/").status_code == 200
    assert ask(viewer, incident.pk, key="api-key-0003").status_code == 403
    cara = api_as(roles.COMMANDER, "cara")
    ok = cara.post(f"{url}/approve/", {"note": "go"}, format="json")
    assert ok.status_code == 200
    assert ok.json()["status"] == "queued"
    assert ok.json()["decided_by"] == "cara"
    again = cara.post(f"{url}/approve/", {}, format="json")
    assert again.status_code == 409
    cancel = rita.post(f"{url}/cancel/", {}, format="json")
    assert cancel.status_code == 200
    assert cancel.json()["status"] == "cancelled"
    undo = rita.post(f"{url}/undo/", {"idempotency_key": "undo-key-01"}, format="json")
    assert undo.status_code == 409
    assert "succeeded" in undo.json()["detail"]


def test_self_approval_refused_for_commanders(api_as):
    incident = IncidentFactory(severity="SEV1")
    cara = api_as(roles.COMMANDER, "cara")
    run = ask(cara, incident.pk).json()
    r = cara.post(f"/api/v1/actions/{run['id']}/approve/", {}, format="json")
    assert r.status_code == 403
    assert "someone else" in r.json()["detail"]
    r = cara.post(f"/api/v1/actions/{run['id']}/reject/", {}, format="json")
    assert r.status_code == 403


def test_list_filters_and_constant_queries(api_as, make_user):
    rita = api_as(roles.RESPONDER, "rita")
    incidents = [IncidentFactory(severity="SEV3") for _ in range(2)]

    def list_queries():
        with CaptureQueriesContext(connection) as ctx:
            r = rita.get("/api/v1/actions/?status=queued")
        assert r.status_code == 200
        return len(ctx.captured_queries), r.json()

    ask(rita, incidents[0].pk, key="list-key-01", params={**SCALE, "lws": "pool-0"})
    n1, body = list_queries()
    assert body["count"] == 1
    for i in range(2, 6):
        ask(rita, incidents[i % 2].pk, key=f"list-key-{i:02}", params={**SCALE, "lws": f"pool-{i}"})
    n5, body = list_queries()
    assert body["count"] == 5
    assert n5 == n1
    by_incident = rita.get(f"/api/v1/incidents/{incidents[0].pk}/actions/").json()
    assert {r["incident"] for r in by_incident} == {incidents[0].pk}
    assert rita.get("/api/v1/actions/?kind=cordon_node").json()["count"] == 0
    assert rita.get("/api/v1/actions/?status=bogus").status_code == 400


def test_actions_are_in_the_openapi_schema(api_as):
    schema = api_as(roles.VIEWER, "vic").get("/api/schema/?format=json").json()
    paths = schema["paths"]
    for path in (
        "/api/v1/incidents/{id}/actions/",
        "/api/v1/actions/{id}/",
        "/api/v1/actions/{id}/approve/",
        "/api/v1/actions/{id}/reject/",
        "/api/v1/actions/{id}/cancel/",
        "/api/v1/actions/{id}/undo/",
    ):
        assert path in paths, path
