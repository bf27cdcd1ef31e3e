"""The one-tap acknowledge link: opening it shows the incident (a link previewer's GET
acknowledges nothing), the button acknowledges once as the paged person, who takes
command if nobody has it; expired, used, tampered and refused links say why."""

from __future__ import annotations

import re

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from console import roles
from console.preferences.services import preference_set
from incidents.models import IncidentStatus, TimelineEventType
from incidents.services.lifecycle import incident_acknowledge
from pager.models import PageStatus
from pager.paging.ack import ack_link, ack_token, page_ack_by_token
from tests.factories import IncidentFactory
from tests.pager_receivers import page_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user):
    return make_user("alice", roles.RESPONDER)


@pytest.fixture
def incident():
    return IncidentFactory(severity="SEV1", title="VLLMHighTTFT: TTFT p99 above 2s")


@pytest.fixture
def page(alice, incident):
    return page_for(alice, incident)


def url(page) -> str:
    return reverse("pager:page-ack", args=[ack_token(page)])


def test_the_link_is_absolute_and_under_the_pager(page):
    assert ack_link(page).startswith("http://testserver/pager/ack/")


def test_opening_the_link_shows_the_incident_and_acknowledges_nothing(client, page, incident):
    response = client.get(url(page))

    assert response.status_code == 200
    text = response.content.decode()
    assert "VLLMHighTTFT: TTFT p99 above 2s" in text
    assert 'data-testid="ack-button"' in text
    assert 'method="post"' in text
    assert "csrfmiddlewaretoken" in text
    assert response["Referrer-Policy"] == "same-origin"
    assert "no-store" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]
    incident.refresh_from_db()
    page.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED
    assert page.ack_link_used_at is None


def test_the_page_needs_no_inline_script_or_style(client, page):
    text = client.get(url(page)).content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text)
    assert " style=" not in text
    assert "<style" not in text


def test_the_button_acknowledges_as_the_paged_person_who_takes_command(page, incident, alice):
    client = Client(enforce_csrf_checks=True)  # signed out, as on the phone
    client.get(url(page))  # sets the CSRF cookie, as the browser would
    token = client.cookies["csrftoken"].value

    response = client.post(url(page), {"csrfmiddlewaretoken": token})

    assert response.status_code == 200
    assert 'data-testid="ack-done"' in response.content.decode()
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.ACKNOWLEDGED
    assert incident.commander == alice
    page.refresh_from_db()
    assert page.status == PageStatus.ACKNOWLEDGED
    assert page.acknowledged_at is not None
    assert page.ack_link_used_at is not None
    events = list(incident.events.order_by("occurred_at", "id"))
    status = [e for e in events if e.kind == TimelineEventType.STATUS_CHANGED]
    assert [(e.payload["to"], e.actor) for e in status] == [("acknowledged", alice)]
    assert any(e.kind == TimelineEventType.COMMANDER_CHANGED for e in events)
    [link_event] = [e for e in events if e.kind == "page"]
    assert link_event.payload["event"] == "acknowledged"
    assert link_event.message.startswith("alice acknowledged the incident with the one-tap link")


def test_the_link_works_once(client, page, incident):
    assert client.post(url(page)).status_code == 200

    again = client.post(url(page))

    assert again.status_code == 409
    assert "already used" in again.content.decode()
    assert client.get(url(page)).status_code == 200  # shown, without the button
    assert 'data-testid="ack-button"' not in client.get(url(page)).content.decode()


def test_an_expired_link_is_refused(client, page, incident, settings):
    settings.PAGE_ACK_LINK_TTL_SECONDS = -1  # every token is older than that

    for response in (client.get(url(page)), client.post(url(page))):
        assert response.status_code == 400
        assert "expired" in response.content.decode()
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED


@pytest.mark.parametrize(
    "tamper",
    [
        lambda token: token[:-2] + ("AA" if not token.endswith("AA") else "BB"),  # signature
        lambda token: "9999" + token[token.index(".") :],  # another page id
        lambda token: signing.TimestampSigner(salt="another.salt").sign(token.split(":")[0]),
        lambda token: "not-a-token",
    ],
    ids=["signature", "page-id", "salt", "garbage"],
)
def test_a_tampered_link_is_refused_with_400(client, page, incident, tamper):
    bad = tamper(ack_token(page))
    path = reverse("pager:page-ack", args=[bad])

    for response in (client.get(path), client.post(path)):
        assert response.status_code == 400
        assert "not valid" in response.content.decode()
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED


def test_already_acknowledged_by_someone_else_says_who(client, page, incident, make_user):
    bob = make_user("bob", roles.RESPONDER)
    incident_acknowledge(incident_id=incident.pk, actor=bob)

    response = client.post(url(page))

    assert response.status_code == 409
    assert "already acknowledged by bob" in response.content.decode()
    page.refresh_from_db()
    assert page.ack_link_used_at is None  # a refused use does not use up the link


def test_a_resolved_incident_has_nothing_to_acknowledge(client, page, incident):
    incident.status = IncidentStatus.RESOLVED
    incident.save()

    response = client.post(url(page))

    assert response.status_code == 409
    assert "already resolved" in response.content.decode()


def test_a_person_without_the_responder_role_is_refused(client, make_user, incident):
    viewer = make_user("vic", roles.VIEWER)
    page = page_for(viewer, incident)

    response = client.post(url(page))

    assert response.status_code == 403
    assert "vic may not acknowledge incidents" in response.content.decode()
    incident.refresh_from_db()
    page.refresh_from_db()
    assert incident.status == IncidentStatus.TRIGGERED
    assert page.ack_link_used_at is None


def test_a_repage_after_an_expired_acknowledgement_is_acknowledged_as_a_page(
    alice, make_user, incident
):
    bob = make_user("bob", roles.RESPONDER)
    incident_acknowledge(incident_id=incident.pk, actor=bob)
    repage = page_for(alice, incident, repage_round=1)

    page = page_ack_by_token(token=ack_token(repage))

    assert page.status == PageStatus.ACKNOWLEDGED
    event = incident.events.filter(kind="page").get()
    assert event.payload == {
        "page": repage.pk,
        "event": "acknowledged",
        "via": "link",
        "user": "alice",
        "repage_round": 1,
        "msg": [["pager.page.ack_link_repage", {"user": "alice", "page": repage.pk}]],
    }
    incident.refresh_from_db()
    assert incident.commander == bob  # who commands does not change


def test_the_page_speaks_the_paged_persons_chosen_language(client, page, alice):
    preference_set(user=alice, language="zh-hans")

    response = client.get(url(page), HTTP_ACCEPT_LANGUAGE="en")

    assert '<html lang="zh-hans">' in response.content.decode()


def test_a_page_from_before_the_incident_reopened_is_refused(client, page, incident):
    incident.reopen_count = 1  # reopened since: its new episode pages anew
    incident.save()

    response = client.post(url(page))

    assert response.status_code == 409
    assert "sent before incident" in response.content.decode()
