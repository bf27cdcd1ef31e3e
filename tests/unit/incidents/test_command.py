"""Someone is in command (issue 25, item 6): the first acknowledgement takes a free seat,
the page and the list say who commands, and resolving a SEV1/SEV2 that nobody commands
is confirmed first (page, API) and recorded on the timeline."""

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents import services
from incidents.models import Incident, TimelineEvent
from incidents.services.command import NoCommander, command_on_acknowledge
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def commander_events(incident: Incident) -> list[TimelineEvent]:
    return list(incident.events.filter(kind="commander_changed").order_by("id"))


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


# --- acknowledging takes command ------------------------------------------------------
def test_the_first_acknowledgement_makes_that_person_the_commander(make_user):
    rita = make_user("rita", roles.RESPONDER)
    incident = IncidentFactory(severity="SEV1")
    services.incident_acknowledge(incident_id=incident.pk, actor=rita)
    incident.refresh_from_db()
    assert incident.commander == rita
    (event,) = commander_events(incident)
    assert (event.actor, {k: v for k, v in event.payload.items() if k != "msg"}) == (
        rita,
        {"from": None, "to": "rita"},
    )
    assert event.message == "rita took command by acknowledging: nobody → rita."


def test_acknowledging_leaves_a_commander_in_place(make_user):
    cole, rita = make_user("cole", roles.COMMANDER), make_user("rita", roles.RESPONDER)
    incident = IncidentFactory(commander=cole)
    services.incident_acknowledge(incident_id=incident.pk, actor=rita)
    incident.refresh_from_db()
    assert incident.commander == cole
    assert not commander_events(incident)


def test_the_api_acknowledgement_takes_command_too(make_user):
    rita = make_user("rita", roles.RESPONDER)
    incident = IncidentFactory()
    r = api(rita).post(f"/api/v1/incidents/{incident.pk}/acknowledge/", format="json")
    assert r.status_code == 200, r.content
    assert r.json()["commander"] == "rita"


def test_a_service_account_never_takes_command(make_user):
    guard = get_user_model().objects.get(username=settings.GUARD_USERNAME)
    guard.user_permissions.add(Permission.objects.get(codename="take_command"))
    guard = get_user_model().objects.get(pk=guard.pk)  # no cached permissions
    assert guard.has_perm("incidents.take_command")
    incident = IncidentFactory()
    assert command_on_acknowledge(incident, actor=guard) is None
    assert Incident.objects.get(pk=incident.pk).commander is None


# --- resolving a SEV1/SEV2 nobody commands ------------------------------------------
@pytest.mark.parametrize("severity", ["SEV1", "SEV2"])
def test_resolving_a_serious_incident_nobody_commands_is_confirmed_first(make_user, severity):
    cara = make_user("cara", roles.COMMANDER)
    incident = IncidentFactory(severity=severity)
    with pytest.raises(NoCommander) as refused:
        services.incident_resolve(incident_id=incident.pk, actor=cara)
    assert "nobody is in command" in str(refused.value)
    assert Incident.objects.get(pk=incident.pk).status == "triggered"
    services.incident_resolve(incident_id=incident.pk, actor=cara, confirm_no_commander=True)
    event = incident.events.get(kind="status_changed")
    assert event.payload["no_commander"] is True
    assert "resolved with nobody in command" in event.message


def test_a_minor_incident_or_one_with_a_commander_is_not_asked(make_user):
    cara = make_user("cara", roles.COMMANDER)
    minor = IncidentFactory(severity="SEV3")
    services.incident_resolve(incident_id=minor.pk, actor=cara)
    commanded = IncidentFactory(severity="SEV1", commander=cara)
    services.incident_resolve(incident_id=commanded.pk, actor=cara)
    for incident in (minor, commanded):
        event = incident.events.get(kind="status_changed")
        assert "no_commander" not in event.payload


def test_the_api_answers_409_naming_the_confirmation(make_user):
    client = api(make_user("cara", roles.COMMANDER))
    incident = IncidentFactory(severity="SEV1")
    url = f"/api/v1/incidents/{incident.pk}/resolve/"
    r = client.post(url, {"reason": "over"}, format="json")
    assert r.status_code == 409
    assert r.json()["code"] == "no_commander"
    assert '"confirm_no_commander": true' in r.json()["detail"]
    r = client.post(url, {"reason": "over", "confirm_no_commander": True}, format="json")
    assert (r.status_code, r.json()["status"]) == (200, "resolved")
    event = incident.events.get(kind="status_changed")
    assert event.message == "Incident resolved: over (resolved with nobody in command, confirmed)"


# --- the page and the list ------------------------------------------------------------
def test_the_page_says_nobody_is_in_command_then_who_is(client, make_user):
    rita = make_user("rita", roles.RESPONDER)
    client.force_login(rita)
    incident = IncidentFactory(severity="SEV1")
    page = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert 'data-testid="no-commander"' in page
    assert "Nobody is in command" in page
    assert "Take command" in page
    client.post(reverse("incidents:acknowledge", args=[incident.pk]))
    page = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert 'data-testid="no-commander"' not in page
    assert "<strong>rita</strong> is in command." in page
    listing = client.get(reverse("incidents:list")).content.decode()
    assert 'data-testid="commander">rita</td>' in listing


def test_the_page_asks_before_resolving_with_nobody_in_command(client, make_user):
    client.force_login(make_user("cara", roles.COMMANDER))
    incident = IncidentFactory(severity="SEV2")
    page = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert 'data-testid="confirm-no-commander-box"' in page  # the resolve form's checkbox
    url = reverse("incidents:resolve", args=[incident.pk])
    asked = client.post(url, {"reason": "queue drained"}, **HTMX)
    assert asked.status_code == 409
    form = asked.content.decode()
    assert "Resolve with nobody in command?" in form
    assert '<input type="hidden" name="confirm_no_commander" value="1">' in form
    assert Incident.objects.get(pk=incident.pk).status == "triggered"
    done = client.post(url, {"reason": "queue drained", "confirm_no_commander": "1"}, **HTMX)
    assert done.status_code == 200
    assert Incident.objects.get(pk=incident.pk).status == "resolved"
