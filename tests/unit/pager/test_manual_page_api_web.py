"""Paging a team by hand through the API (POST /api/v1/pager/teams/<slug>/page/) and the
incident page's "Page a team" form."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident
from pager.models import Page, Team
from pager.paging.services.manual import KEY_PREFIX
from tests.factories import IncidentFactory
from tests.unit.pager.test_escalation_engine import on_call, person

pytestmark = pytest.mark.django_db
HOUR = timedelta(hours=1)


def url(slug: str) -> str:
    return f"/api/v1/pager/teams/{slug}/page/"


@pytest.fixture
def api_as(make_user):
    def _as(role: str | None) -> APIClient:
        user = make_user(role or "norole", role)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
        return client

    return _as


@pytest.fixture
def gpu() -> Team:
    team = Team.objects.create(slug="gpu", name="GPU")
    now = timezone.now()
    on_call(team, person("bob", "ntfy"), now - HOUR, now + HOUR)
    return team


@pytest.fixture
def incident() -> Incident:
    return IncidentFactory()


def manual_pages() -> int:
    return Page.objects.filter(key__startswith=f"{KEY_PREFIX}:").count()


def test_paging_answers_201_with_the_pages(api_as, gpu, incident):
    client = api_as(roles.RESPONDER)
    body = {"incident": incident.pk, "message": "GPU nodes flapping", "key": "req-1"}
    response = client.post(url("gpu"), body, format="json")
    assert response.status_code == 201, response.content
    [page] = response.json()
    assert (page["user"], page["incident"], page["status"]) == ("bob", incident.pk, "pending")
    assert [d["kind"] for d in page["deliveries"]] == ["ntfy"]
    again = client.post(url("gpu"), body, format="json")  # a retried request
    assert again.status_code == 201
    assert [p["id"] for p in again.json()] == [page["id"]]
    assert manual_pages() == 1


def test_an_unknown_team_or_incident_is_404(api_as, gpu, incident):
    client = api_as(roles.RESPONDER)
    missing = client.post(url("nope"), {"incident": incident.pk}, format="json")
    assert missing.status_code == 404
    assert "There is no team 'nope'" in missing.json()["detail"]
    gone = client.post(url("gpu"), {"incident": 999_999}, format="json")
    assert gone.status_code == 404
    assert "#999999" in gone.json()["detail"]


def test_nobody_on_call_is_409_naming_the_team(api_as, incident):
    Team.objects.create(slug="db", name="Databases")
    response = api_as(roles.RESPONDER).post(url("db"), {"incident": incident.pk}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "nobody_on_call"
    assert "Databases" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "incident"),
        ({"incident": 0}, "incident"),
        ({"incident": 1, "message": "m" * 501}, "message"),
        ({"incident": 1, "key": "has spaces"}, "key"),
    ],
)
def test_a_bad_body_is_400_naming_the_field(api_as, gpu, body, field):
    response = api_as(roles.RESPONDER).post(url("gpu"), body, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_viewers_may_not_page(api_as, gpu, incident):
    response = api_as(roles.VIEWER).post(url("gpu"), {"incident": incident.pk}, format="json")
    assert response.status_code == 403
    assert manual_pages() == 0


def test_the_operation_documents_its_errors(api_as):
    schema = api_as(roles.VIEWER).get("/api/schema/", {"format": "json"})
    operation = schema.json()["paths"]["/api/v1/pager/teams/{slug}/page/"]["post"]
    assert operation["operationId"] == "pager_teams_page"
    assert {"201", "400", "401", "403", "404", "409"} <= set(operation["responses"])


# --- the incident page's form ---------------------------------------------------------------
def test_the_panel_offers_the_form_to_responders_and_it_pages(client, make_user, gpu, incident):
    client.force_login(make_user("resp", roles.RESPONDER))
    detail = client.get(reverse("incidents:detail", args=[incident.pk]))
    assert b'data-testid="page-team"' in detail.content
    form = client.get(reverse("pager:incident-page-form", args=[incident.pk]))
    assert b'<option value="gpu">GPU</option>' in form.content
    key = form.context["key"]
    send = reverse("pager:incident-page-team", args=[incident.pk])
    body = {"team": "gpu", "message": "need GPU eyes", "key": key}
    response = client.post(send, body)
    assert response.status_code == 302
    assert response["Location"] == reverse("incidents:detail", args=[incident.pk])
    followed = client.get(response["Location"])
    assert b"Paged 1 person on call in team GPU: bob." in followed.content
    client.post(send, body)  # a double submit: the form's key makes it one request
    assert manual_pages() == 1


def test_the_form_says_why_nobody_was_paged(client, make_user, incident):
    Team.objects.create(slug="db", name="Databases")
    client.force_login(make_user("resp", roles.RESPONDER))
    send = reverse("pager:incident-page-team", args=[incident.pk])
    for team, words in (("db", b"Nobody is on call in team Databases"), ("nope", b"no team")):
        response = client.post(send, {"team": team})
        assert response.status_code == 302
        assert words in client.get(response["Location"]).content
    assert manual_pages() == 0


def test_viewers_neither_see_nor_use_the_form(client, make_user, gpu, incident):
    client.force_login(make_user("vera", roles.VIEWER))
    detail = client.get(reverse("incidents:detail", args=[incident.pk]))
    assert b'data-testid="page-team"' not in detail.content
    form = client.get(reverse("pager:incident-page-form", args=[incident.pk]))
    assert form.status_code == 403
    send = reverse("pager:incident-page-team", args=[incident.pk])
    assert client.post(send, {"team": "gpu"}).status_code == 403
    assert manual_pages() == 0
