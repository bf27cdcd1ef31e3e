"""A re-paging round (the acknowledgement expired without progress) can be stopped from
the incident page: the incident is acknowledged already, so its own Acknowledge button
cannot; "Stop paging: I have it" acknowledges the round as its presser, on the timeline."""

import pytest
from django.urls import reverse

from console import roles
from incidents.services.lifecycle import incident_acknowledge
from pager.escalation import services
from pager.models import EscalationState, Page, PageStatus, StepAction
from tests.unit.pager.test_escalation_engine import (
    MIN,
    T0,
    default_team,
    opened,
    person,
    policy_with,
    timeline,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_step():
    """Page alice, wait 5 minutes, page bob; an acknowledgement expires after 30."""
    alice, bob = person("alice", "ntfy"), person("bob", "email")
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 5},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=default_team(),
        ack_timeout_minutes=30,
    )
    return bob


@pytest.fixture
def repaging(two_step):
    bob = two_step
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=bob)
    services.escalation_on_ack(incident_id=incident.pk, actor_id=bob.pk, now=T0 + MIN)
    assert services.escalations_tick(now=T0 + 31 * MIN) == 1  # expired: paging again
    return incident


def test_a_responder_stops_the_repaging_from_the_incident_page(client, make_user, repaging):
    rita = make_user("rita", roles.RESPONDER)
    client.force_login(rita)
    panel = client.get(reverse("pager:incident-panel", args=[repaging.pk]))
    assert b'data-testid="stop-paging"' in panel.content

    answer = client.post(reverse("pager:incident-paging-stop", args=[repaging.pk]))

    assert answer.status_code == 302
    escalation = repaging.escalations.get()
    assert (escalation.state, escalation.acknowledged_by) == (EscalationState.ACKNOWLEDGED, rita)
    assert not Page.objects.filter(status__in=(PageStatus.PENDING, PageStatus.DELIVERED)).exists()
    assert any(
        line.startswith("Escalation stopped: acknowledged by rita") for line in timeline(repaging)
    )


def test_a_viewer_cannot_and_nothing_changes(client, make_user, repaging):
    client.force_login(make_user("vic", roles.VIEWER))
    assert (
        b"stop-paging"
        not in client.get(reverse("pager:incident-panel", args=[repaging.pk])).content
    )
    client.post(reverse("pager:incident-paging-stop", args=[repaging.pk]))
    assert repaging.escalations.get().state == EscalationState.ACTIVE


def test_nothing_to_stop_is_said(client, make_user, two_step):
    incident = opened()
    client.force_login(make_user("rita", roles.RESPONDER))
    answer = client.post(reverse("pager:incident-paging-stop", args=[incident.pk]), follow=True)
    assert f"Nobody is being paged for incident #{incident.pk}." in answer.content.decode()
