"""REST API of postmortems and action items, with permissions, the
Markdown export, filters, and a query count that does not grow with the rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_prometheus(settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3


@pytest.fixture
def api_as(make_user):
    def _as(role, name) -> APIClient:
        user = make_user(name, role)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
        return client

    return _as


def test_draft_read_and_export(api_as):
    incident = IncidentFactory(
        status="resolved", runbook="prefix-cache-drop", title="Cache <b>drop</b>"
    )
    rita = api_as(roles.RESPONDER, "rita")
    assert (
        api_as(roles.VIEWER, "vic").post(f"/api/v1/incidents/{incident.pk}/postmortem/").status_code
        == 403
    )
    r = rita.post(f"/api/v1/incidents/{incident.pk}/postmortem/")
    assert r.status_code == 201, r.content
    pm = r.json()
    assert pm["draft_state"] == "ready"
    assert pm["runbook"] == "prefix-cache-drop"
    assert rita.post(f"/api/v1/incidents/{incident.pk}/postmortem/").status_code == 200
    assert rita.post("/api/v1/incidents/99999/postmortem/").status_code == 404
    got = api_as(roles.VIEWER, "vic2").get(f"/api/v1/postmortems/{pm['id']}/")
    assert got.status_code == 200
    assert list(got.json())[:3] == ["id", "incident", "title"]
    md = rita.get(f"/api/v1/postmortems/{pm['id']}/export.md")
    assert md.status_code == 200
    assert md["Content-Type"].startswith("text/markdown")
    text = md.content.decode()
    headings = ("## Summary", "## Impact", "## Timeline", "## Root cause",
                "## Contributing factors", "## Action items", "## Lessons learned")  # fmt: skip
    order = [text.index(h) for h in headings]
    assert order == sorted(order)


def test_action_items_crud_filters_and_roles(api_as, make_user):
    make_user("olga", roles.RESPONDER)
    incident = IncidentFactory(status="resolved")
    rita = api_as(roles.RESPONDER, "rita")
    vic = api_as(roles.VIEWER, "vic")
    body = {"incident": incident.pk, "title": "Alert on NVLink CRC", "category": "monitoring",
            "priority": "P1", "owner": "olga"}  # fmt: skip
    assert vic.post("/api/v1/action-items/", body, format="json").status_code == 403
    r = rita.post("/api/v1/action-items/", body, format="json")
    assert r.status_code == 201, r.content
    item = r.json()
    assert item["owner"] == "olga"
    assert item["due_date"]  # defaulted from the priority
    bad = rita.post("/api/v1/action-items/", {**body, "category": "vibes"}, format="json")
    assert bad.status_code == 400
    url = f"/api/v1/action-items/{item['id']}/"
    refused = rita.patch(url, {"title": "Renamed", "status": "wont_do"}, format="json")
    assert refused.status_code == 400
    assert vic.get(url).json()["title"] == "Alert on NVLink CRC"  # all or nothing
    ok = rita.patch(
        url, {"status": "wont_do", "wont_do_reason": "covered by DCGM defaults"}, format="json"
    )
    assert ok.status_code == 200
    assert ok.json()["status"] == "wont_do"
    assert vic.get("/api/v1/action-items/?status=wont_do").json()["count"] == 1
    assert vic.get("/api/v1/action-items/?status=open").json()["count"] == 0
    assert vic.get("/api/v1/action-items/?owner=olga&category=monitoring").json()["count"] == 1
    assert rita.delete(url).status_code == 403  # only admins delete
    assert api_as(roles.ADMIN, "ada").delete(url).status_code == 204
    assert vic.get(url).status_code == 404


def test_item_list_queries_do_not_grow(api_as):
    incident = IncidentFactory(status="resolved")
    rita = api_as(roles.RESPONDER, "rita")

    def count():
        with CaptureQueriesContext(connection) as ctx:
            assert rita.get("/api/v1/action-items/").status_code == 200
        return len(ctx.captured_queries)

    def add(n):
        for i in range(n):
            body = {"incident": incident.pk, "title": f"item {i}", "owner": "rita"}
            assert rita.post("/api/v1/action-items/", body, format="json").status_code == 201

    add(2)
    few = count()
    add(10)
    assert count() == few


def test_postmortem_paths_in_the_schema(api_as):
    paths = api_as(roles.VIEWER, "vic").get("/api/schema/?format=json").json()["paths"]
    for path in (
        "/api/v1/incidents/{id}/postmortem/",
        "/api/v1/postmortems/{id}/",
        "/api/v1/postmortems/{id}/export.md",
        "/api/v1/action-items/",
        "/api/v1/action-items/{id}/",
    ):
        assert path in paths, path
