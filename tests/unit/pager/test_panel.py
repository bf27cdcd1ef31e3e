"""The incident page's pager panel: who owns the incident and why, who is on call, the
escalation's state in words, the pages and their deliveries; what it says when nothing
is configured; and a query count that does not grow with the pages. Escalations, pages
and deliveries are rows made directly (the panel only reads them)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from console import roles
from pager.models import (
    ContactKind,
    DeliveryState,
    Escalation,
    EscalationPolicy,
    EscalationState,
    EscalationStep,
    MaintenanceWindow,
    Ownership,
    Page,
    PageDelivery,
    PageStatus,
    Rotation,
    RotationMember,
    Schedule,
    StepAction,
    Team,
)
from pager.schedules.rotation import wall_clock_stored
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
# A rotation stores its first handoff as a wall-clock time (Monday 2 November, 09:00).
FIRST_HANDOFF = wall_clock_stored(datetime(2026, 11, 2, 9))  # noqa: DTZ001


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def panel_url(incident) -> str:
    return f"/pager/incidents/{incident.pk}/panel/"


@pytest.fixture
def people(make_user):
    return {
        "vic": make_user("vic", roles.VIEWER),
        "rita": make_user("rita", roles.RESPONDER),
        "ron": make_user("ron", roles.RESPONDER),
        "ada": make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True),
    }


@pytest.fixture
def serving(people):
    """Team Serving owns namespace llm-*; rita and ron take weekly turns on Primary."""
    team = Team.objects.create(slug="serving", name="Serving")
    team.members.add(people["rita"], people["ron"])
    Ownership.objects.create(team=team, namespace="llm-*")
    schedule = Schedule.objects.create(
        team=team, slug="primary", name="Primary", time_zone="Europe/Berlin"
    )
    rotation = Rotation.objects.create(schedule=schedule, name="Weekly", starts_at=FIRST_HANDOFF)
    RotationMember.objects.create(rotation=rotation, user=people["rita"], position=1)
    RotationMember.objects.create(rotation=rotation, user=people["ron"], position=2)
    policy = EscalationPolicy.objects.create(name="Serving policy", team=team)
    EscalationStep.objects.create(
        policy=policy, position=1, action=StepAction.PAGE_SCHEDULE, schedule=schedule,
        wait_minutes=5,
    )  # fmt: skip
    EscalationStep.objects.create(
        policy=policy, position=2, action=StepAction.PAGE_USER, user=people["ron"]
    )
    team.escalation_policy = policy
    team.save()
    return team


def escalate(incident, team, **fields) -> Escalation:
    now = timezone.now()
    values = {"state": EscalationState.ACTIVE, "started_at": now, **fields}
    return Escalation.objects.create(
        incident=incident, team=team, policy=team.escalation_policy, **values
    )


def page(escalation, user, *, n: int, deliveries: list[tuple[str, str, str]]) -> Page:
    now = timezone.now()
    made = Page.objects.create(
        escalation=escalation,
        incident=escalation.incident,
        user=user,
        key=f"{escalation.incident_id}:0:0:0:{n}:u{user.pk}",
        step_position=1,
        due_at=now,
        created_at=now + timedelta(seconds=n),
        status=PageStatus.DELIVERED,
    )
    for position, (kind, state, error) in enumerate(deliveries, start=1):
        PageDelivery.objects.create(
            page=made, kind=kind, position=position, state=state, attempts=1, error=error,
            sent_at=now if state == DeliveryState.SENT else None,
        )  # fmt: skip
    return made


def test_nothing_configured_says_what_to_add(client, people):
    incident = IncidentFactory(namespace="llm-serving")
    client.force_login(people["ada"])
    body = text(client.get(panel_url(incident)))
    assert "No team owns this incident, so nobody is paged for it." in body
    assert 'href="/admin/pager/team/add/"' in body
    assert "mark one team as the default" in body
    assert "Nobody has been paged for this incident." in body
    client.force_login(people["vic"])
    body = text(client.get(panel_url(incident)))
    assert "Ask an admin to add a team and its ownership" in body
    assert "/admin/" not in body


def test_nobody_owns_it_but_the_default_policy_pages(client, people):
    EscalationPolicy.objects.create(name="Catch-all", is_default=True)
    incident = IncidentFactory(namespace="llm-serving")
    client.force_login(people["vic"])
    body = text(client.get(panel_url(incident)))
    assert "the default escalation policy <strong>Catch-all</strong> pages for it" in body
    assert "nobody is paged" not in body


def test_teams_exist_but_none_owns_it(client, people, serving):
    incident = IncidentFactory(namespace="kube-system")
    client.force_login(people["vic"])
    body = text(client.get(panel_url(incident)))
    assert "No team owns this incident: no team's ownership matches its labels" in body
    assert "/admin/" not in body


def test_owner_why_oncall_and_the_escalation(client, people, serving):
    incident = IncidentFactory(namespace="llm-serving", severity="SEV1")
    due = timezone.now() + timedelta(minutes=5)
    escalation = escalate(incident, serving, step_index=1, next_due_at=due)
    page(
        escalation,
        people["rita"],
        n=1,
        deliveries=[
            (ContactKind.NTFY, DeliveryState.FAILED, "ntfy.sh answered 502 Bad Gateway"),
            (ContactKind.SMS, DeliveryState.UNKNOWN, ""),
            (ContactKind.EMAIL, DeliveryState.SENT, ""),
        ],
    )
    client.force_login(people["vic"])
    response = client.get(panel_url(incident))
    assert response.status_code == 200
    body = text(response)
    assert 'href="/pager/teams/serving/">Serving</a>' in body
    assert "because it owns namespace=llm-*" in body
    assert "Primary" in body
    assert "rita" in body
    assert "Next: <strong>ron</strong>" in body
    assert 'data-state="active"' in body
    assert "Next: Page ron" in body
    assert "Acknowledging the incident stops the paging." in body
    assert "ntfy.sh answered 502 Bad Gateway" in body
    assert body.count('data-testid="delivery"') == 3
    assert 'data-state="unknown"' in body
    assert "Outcome unknown" in body


def test_acknowledged_suppressed_and_stopped(client, people, serving):
    client.force_login(people["vic"])
    acked = IncidentFactory(namespace="llm-a", status="acknowledged")
    escalate(
        acked, serving, state=EscalationState.ACKNOWLEDGED, acknowledged_by=people["rita"],
        acknowledged_at=timezone.now(), ack_expires_at=timezone.now() + timedelta(minutes=30),
    )  # fmt: skip
    body = text(client.get(panel_url(acked)))
    assert "Acknowledged by rita at" in body
    assert "paging starts again" in body

    quiet = IncidentFactory(namespace="llm-b")
    window = MaintenanceWindow.objects.create(
        name="Driver upgrade", team=serving, starts_at=timezone.now() - timedelta(hours=1),
        ends_at=timezone.now() + timedelta(hours=1),
    )  # fmt: skip
    escalate(quiet, serving, state=EscalationState.SUPPRESSED, maintenance=window)
    body = text(client.get(panel_url(quiet)))
    assert "maintenance window <strong>Driver upgrade</strong>: nobody is paged." in body

    drill = IncidentFactory(namespace="llm-c", is_drill=True)
    escalate(
        drill, serving, state=EscalationState.STOPPED,
        stop_reason="a drill incident (PAGER_PAGE_DRILLS is off)",
    )  # fmt: skip
    body = text(client.get(panel_url(drill)))
    assert "Stopped: a drill incident (PAGER_PAGE_DRILLS is off)" in body


def test_window_without_escalation_is_shown(client, people, serving):
    MaintenanceWindow.objects.create(
        name="Node drain", team=serving, starts_at=timezone.now() - timedelta(hours=1),
        ends_at=timezone.now() + timedelta(hours=1),
    )  # fmt: skip
    incident = IncidentFactory(namespace="llm-serving")
    client.force_login(people["vic"])
    body = text(client.get(panel_url(incident)))
    assert "<strong>Node drain</strong> covers this incident: nobody is paged." in body


def test_escaping_in_the_panel(client, people, serving):
    serving.name = "<script>alert(1)</script>"
    serving.save()
    incident = IncidentFactory(namespace="llm-serving")
    escalate(incident, serving, state=EscalationState.STOPPED, stop_reason="<b>x</b>")
    client.force_login(people["vic"])
    body = client.get(panel_url(incident)).content.decode()
    assert "<script>alert(1)" not in body
    assert "<b>x</b>" not in body
    assert "&lt;script&gt;" in body


def test_the_panel_costs_a_fixed_number_of_queries(
    client, people, serving, django_assert_max_num_queries
):
    client.force_login(people["vic"])
    incident = IncidentFactory(namespace="llm-serving")
    escalation = escalate(incident, serving, next_due_at=timezone.now())
    deliveries = [(ContactKind.EMAIL, DeliveryState.SENT, "")]
    page(escalation, people["rita"], n=1, deliveries=deliveries)
    client.get(panel_url(incident))  # warm: sessions, content types
    with django_assert_max_num_queries(20) as few:
        client.get(panel_url(incident))

    for n in range(2, 12):
        page(escalation, people["ron" if n % 2 else "rita"], n=n, deliveries=deliveries * 3)
    for n in range(3):  # more schedules cost nothing more
        Schedule.objects.create(team=serving, slug=f"extra-{n}", name=f"Extra {n}")
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(panel_url(incident))
    assert response.content.decode().count('data-testid="page"') == 11


def test_roles_and_the_incident_page_loads_it(client, people, serving, make_user):
    incident = IncidentFactory(namespace="llm-serving")
    response = client.get(panel_url(incident))
    assert response.status_code == 302
    client.force_login(make_user("nobody", role=None))
    assert client.get(panel_url(incident)).status_code == 403
    client.force_login(people["vic"])
    assert client.get("/pager/incidents/999999/panel/").status_code == 404
    page_body = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert f'hx-get="/pager/incidents/{incident.pk}/panel/"' in page_body
    assert 'data-testid="pager-panel"' in page_body
