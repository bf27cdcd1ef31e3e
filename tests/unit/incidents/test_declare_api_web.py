"""Declaring an incident through the API (POST /api/v1/incidents/declare/) and the
incident list's form: 201 with the incident, 400 naming the bad field, 403 without the
responder's permission; the form for responders only."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident, TimelineEvent, TimelineEventType

pytestmark = pytest.mark.django_db
URL = "/api/v1/incidents/declare/"


@pytest.fixture
def api_as(make_user):
    def _as(role: str | None) -> APIClient:
        user = make_user(role or "norole", role)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
        return client

    return _as


def test_declare_answers_201_with_the_incident(api_as):
    response = api_as(roles.RESPONDER).post(
        URL,
        {
            "title": "Chat replies are slow",
            "severity": "sev2",
            "namespace": "llm-prod",
            "labels": {"team": "serving"},
            "summary": "p99 above 5 s",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    incident = Incident.objects.get(pk=body["id"])
    assert (body["title"], body["severity"], body["status"]) == (
        "Chat replies are slow",
        "SEV2",
        "triggered",
    )
    assert body["group_labels"] == {"team": "serving"}
    assert body["alerts"] == []
    opened = TimelineEvent.objects.get(incident=incident, kind=TimelineEventType.INCIDENT_OPENED)
    assert (opened.actor.username, opened.source) == ("responder", "console")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"severity": "SEV2"}, "title"),
        ({"title": "   ", "severity": "SEV2"}, "title"),
        ({"title": "x" * 201, "severity": "SEV2"}, "title"),
        ({"title": "t", "severity": "SEV7"}, "severity"),
        ({"title": "t"}, "severity"),
        ({"title": "t", "severity": "SEV2", "namespace": "Not_A_Label"}, "namespace"),
        ({"title": "t", "severity": "SEV2", "labels": {"bad-name": "x"}}, "labels"),
        ({"title": "t", "severity": "SEV2", "labels": {"team": ""}}, "labels"),
        ({"title": "t", "severity": "SEV2", "labels": "team=serving"}, "labels"),
        ({"title": "t", "severity": "SEV2", "summary": "s" * 2001}, "summary"),
    ],
)
def test_a_bad_field_answers_400_naming_it(api_as, body, field):
    response = api_as(roles.RESPONDER).post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]
    assert response.json()[field]  # a message (per label for a label's value)
    assert not Incident.objects.exists()


@pytest.mark.parametrize("role", [roles.VIEWER, None])
def test_declare_needs_the_responders_permission(api_as, role):
    response = api_as(role).post(URL, {"title": "t", "severity": "SEV2"}, format="json")
    assert response.status_code == 403
    assert response.json()["detail"]
    assert not Incident.objects.exists()


def test_the_declare_operation_documents_its_errors(api_as):
    schema = api_as(roles.VIEWER).get("/api/schema/", {"format": "json"})
    operation = schema.json()["paths"][URL]["post"]
    assert operation["operationId"] == "incidents_declare"
    assert {"201", "400", "401", "403"} <= set(operation["responses"])


# --- the incident list's form -------------------------------------------------------------
def test_responders_see_the_form_and_declare(client, make_user):
    client.force_login(make_user("resp", roles.RESPONDER))
    page = client.get(reverse("incidents:list"))
    assert b'data-testid="declare"' in page.content
    response = client.post(
        reverse("incidents:declare"),
        {"title": "Router drops streams", "severity": "SEV1", "namespace": "", "summary": "x"},
    )
    incident = Incident.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("incidents:detail", args=[incident.pk])
    assert (incident.title, incident.severity) == ("Router drops streams", "SEV1")
    followed = client.get(response["Location"])
    assert f"Incident #{incident.pk} declared.".encode() in followed.content


def test_a_refused_declaration_goes_back_to_the_list_saying_why(client, make_user):
    client.force_login(make_user("resp", roles.RESPONDER))
    response = client.post(reverse("incidents:declare"), {"title": "t", "severity": "SEV9"})
    assert response.status_code == 302
    assert response["Location"] == reverse("incidents:list")
    followed = client.get(response["Location"])
    assert b"is not a severity" in followed.content
    assert not Incident.objects.exists()


def test_viewers_neither_see_the_form_nor_may_post_it(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    assert b'data-testid="declare"' not in client.get(reverse("incidents:list")).content
    response = client.post(reverse("incidents:declare"), {"title": "t", "severity": "SEV2"})
    assert response.status_code == 403
    assert not Incident.objects.exists()
