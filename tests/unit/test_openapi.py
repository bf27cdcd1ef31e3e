"""The OpenAPI schema documents the API of README "REST API", and the docs work offline."""

import pytest
from django.core.management import call_command

from console import roles

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/v1/incidents/",
    "/api/v1/incidents/{id}/",
    "/api/v1/incidents/{id}/timeline/",
    "/api/v1/incidents/{id}/acknowledge/",
    "/api/v1/incidents/{id}/mitigate/",
    "/api/v1/incidents/{id}/resolve/",
    "/api/v1/incidents/{id}/reopen/",
    "/api/v1/incidents/{id}/notes/",
    "/api/v1/incidents/{id}/commander/",
    "/api/v1/alerts/alertmanager",
]


@pytest.fixture
def viewer_client(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    return client


@pytest.fixture
def schema(viewer_client):
    r = viewer_client.get("/api/schema/?format=json")
    assert r.status_code == 200, r.content
    return r.json()


def test_schema_has_every_path(schema):
    missing = [p for p in PATHS if p not in schema["paths"]]
    assert not missing


def test_schema_documents_bodies_and_errors(schema):
    paths = schema["paths"]
    listing = paths["/api/v1/incidents/"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"status", "severity", "runbook", "q"}
    status = next(p for p in listing["parameters"] if p["name"] == "status")
    assert "open" in status["schema"]["enum"]
    for action in ("acknowledge", "mitigate", "resolve", "reopen", "notes", "commander"):
        responses = paths[f"/api/v1/incidents/{{id}}/{action}/"]["post"]["responses"]
        assert {"401", "403", "404", "409"} <= set(responses), action
    notes = paths["/api/v1/incidents/{id}/notes/"]["post"]
    assert "201" in notes["responses"]
    assert "400" in notes["responses"]
    body = notes["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/NoteInput")
    note_schema = schema["components"]["schemas"]["NoteInput"]
    assert note_schema["properties"]["text"]["maxLength"] == 10_000
    detail = schema["components"]["schemas"]["IncidentDetail"]["properties"]
    assert {"alerts", "group_labels", "commander", "alert_count"} <= set(detail)


def test_schema_documents_the_alertmanager_webhook(schema):
    op = schema["paths"]["/api/v1/alerts/alertmanager"]["post"]
    assert op["security"] == [{"alertmanagerBearer": []}]
    assert {"200", "400", "401", "413", "503"} <= set(op["responses"])
    assert schema["components"]["securitySchemes"]["alertmanagerBearer"]["scheme"] == "bearer"
    webhook = schema["components"]["schemas"]["AlertmanagerWebhook"]
    assert "alerts" in webhook["required"]


def test_schema_generates_without_warnings(tmp_path):
    # The same check as `manage.py spectacular --validate --fail-on-warn`.
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml")
    )
    assert "/api/v1/incidents/{id}/timeline/" in (tmp_path / "schema.yml").read_text()


def test_swagger_ui_is_served_without_a_cdn(viewer_client):
    r = viewer_client.get("/api/docs/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "swagger-ui" in html
    assert "/static/drf_spectacular_sidecar/" in html
    for cdn in ("cdn.", "jsdelivr", "unpkg", "cdnjs"):
        assert cdn not in html, cdn
