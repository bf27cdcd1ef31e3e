"""A page to a team's channel goes out through the notifications target the team names
(here a signed webhook to a local receiver), links to the incident (a channel cannot
acknowledge), and fails with the target's own reason when the target is gone."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from notifications.models import Target, TargetKind
from pager.models import ContactKind, DeliveryState, Escalation, Page, PageDelivery, PageStatus
from pager.paging.services import page_send
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.pager_receivers"]

SECRET = "channel-signing-secret-0123"


def channel_page(incident, target):
    now = timezone.now()
    escalation = Escalation.objects.create(incident=incident, started_at=now)
    page = Page.objects.create(
        escalation=escalation,
        incident=incident,
        channel=target,
        key=f"{incident.pk}:0:0:0:3:c{target.pk}",
        step_position=3,
        due_at=now,
        created_at=now,
    )
    PageDelivery.objects.create(page=page, kind=ContactKind.WEBHOOK, position=1)
    return page


def test_a_channel_page_is_posted_signed_with_the_incident_link(webhook):
    target = Target.objects.create(
        name="serving-oncall", kind=TargetKind.WEBHOOK, url=webhook.url + "/hook", secret=SECRET
    )
    incident = IncidentFactory(severity="SEV1", namespace="llm-prod")
    page = channel_page(incident, target)

    page_send(page_id=page.pk)

    (request,) = webhook.requests
    assert webhook.signature_ok(request, SECRET)
    body = json.loads(request.body)
    assert body["event"] == "page"
    assert body["incident"]["id"] == incident.pk
    assert body["url"].endswith(f"/incidents/{incident.pk}/")
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED
    assert page.deliveries.get().state == DeliveryState.SENT
    line = incident.events.filter(kind="page").latest("id").message
    assert "the channel serving-oncall" in line


def test_a_disabled_channel_fails_the_page_and_says_why(webhook):
    target = Target.objects.create(
        name="old-channel",
        kind=TargetKind.WEBHOOK,
        url=webhook.url + "/hook",
        secret=SECRET,
        enabled=False,
    )
    incident = IncidentFactory(severity="SEV2")
    page = channel_page(incident, target)

    page_send(page_id=page.pk)

    assert webhook.requests == []
    page.refresh_from_db()
    assert page.status == PageStatus.FAILED
    assert "removed or disabled" in page.deliveries.get().error
