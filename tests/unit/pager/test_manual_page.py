"""Paging a team's on-call people by hand (pager/paging/services/manual.py): who is
paged, the pages made as the escalation makes them and sent the same way, the timeline
lines with who asked and from where, one request paged once per key, nobody on call,
and an incident with or without an escalation already."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone, translation

from console import roles
from console.errors import DomainError, NotFound
from console.surface import acting_through
from incidents.models import IncidentStatus, TimelineEvent
from incidents.timeline_text import timeline_text
from pager import timeline_kinds
from pager.escalation import services as escalation
from pager.models import (
    Escalation,
    EscalationState,
    Page,
    PageStatus,
    Schedule,
    StepAction,
    Team,
)
from pager.paging.services import page_send
from pager.paging.services.manual import KEY_PREFIX, MANUAL_STEP, oncall_page
from tests.factories import IncidentFactory
from tests.pager_receivers import contact, ntfy_url
from tests.unit.pager.test_escalation_engine import default_team, on_call, person, policy_with

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.pager_receivers"]
HOUR = timedelta(hours=1)


@pytest.fixture
def alice():
    return person("alice")  # a responder, who asks


@pytest.fixture
def gpu():
    """Team GPU: bob on call in "primary", carol in "secondary", bob again in "shadow"."""
    team = Team.objects.create(slug="gpu", name="GPU")
    now = timezone.now()
    bob, carol = person("bob", "ntfy"), person("carol")
    on_call(team, bob, now - HOUR, now + HOUR, slug="primary")
    on_call(team, carol, now - HOUR, now + HOUR, slug="secondary")
    on_call(team, bob, now - HOUR, now + HOUR, slug="shadow")
    return team


@pytest.fixture
def incident():
    """An incident whose own escalation (team SRE, nobody on call there) is under way."""
    sre = default_team()
    policy_with({"action": StepAction.PAGE_USER, "user": person("sam")}, team=sre)
    opened = IncidentFactory()
    escalation.escalation_start(incident_id=opened.pk)
    return opened


def lines(incident) -> list[tuple[str, str, str]]:
    rows = TimelineEvent.objects.filter(incident=incident, kind=timeline_kinds.PAGE)
    return [
        (e.message, e.actor.username if e.actor else "", e.source)
        for e in rows.filter(payload__manual=True).order_by("pk")
    ]


def test_everyone_on_call_in_the_teams_schedules_is_paged_once(alice, gpu, incident):
    pages = oncall_page(
        actor=alice, team_slug="gpu", incident_id=incident.pk, message="  GPU nodes\n flapping "
    )
    assert [p.user.username for p in pages] == ["bob", "carol"]
    own = Escalation.objects.get(incident=incident)
    for page in pages:
        assert page.escalation == own  # joins the incident's escalation, which goes on
        assert page.step_position == MANUAL_STEP
        assert page.key.startswith(f"{KEY_PREFIX}:{incident.pk}:{gpu.pk}:")
        assert page.key.endswith(f":u{page.user_id}")
    bob_page, carol_page = pages
    assert bob_page.status == PageStatus.PENDING
    assert [d.kind for d in bob_page.deliveries.all()] == ["ntfy"]
    assert carol_page.status == PageStatus.FAILED  # no contact method: failed at once
    assert lines(incident) == [
        (
            "Paged bob (on call in schedule primary of team GPU), at alice's request. "
            "Message: GPU nodes flapping",
            "alice",
            "console",
        ),
        (
            "Paged carol (on call in schedule secondary of team GPU), at alice's request. "
            "Message: GPU nodes flapping",
            "alice",
            "console",
        ),
    ]
    failed = TimelineEvent.objects.get(incident=incident, actor=alice, payload__what="page_failed")
    assert failed.message.startswith("carol has no contact method")
    own.refresh_from_db()
    assert own.state == EscalationState.EXHAUSTED  # its own course, untouched


def test_the_lines_say_where_the_request_came_from_and_are_reworded(alice, gpu, incident):
    with acting_through("slack"):
        oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk)
    first = TimelineEvent.objects.filter(incident=incident, payload__manual=True).first()
    assert (first.source, first.actor) == ("slack", alice)
    assert (
        first.message == "Paged bob (on call in schedule primary of team GPU), at alice's request."
    )
    # Worded again per language like the escalation's own lines (the parts are known).
    assert first.payload["msg"][0][0] == "pager.paged_manual"
    with translation.override("zh-hans"):
        shown = timeline_text(first.kind, first.message, first.payload)
    assert shown != first.message
    assert "bob" in shown


def test_the_same_key_pages_once(alice, gpu, incident, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as queued:
        first = oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk, key="slack-T1")
    # The pending page is handed to the sending queue when the request commits.
    assert any("pages_enqueue" in callback.__qualname__ for callback in queued)
    with django_capture_on_commit_callbacks() as queued_again:
        again = oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk, key="slack-T1")
    assert [p.pk for p in again] == [p.pk for p in first]
    assert len(lines(incident)) == 2
    assert queued_again == []  # nothing written, nothing sent again
    # Without a key each call is a request of its own.
    oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk)
    assert Page.objects.filter(key__startswith=f"{KEY_PREFIX}:").count() == 4


def test_a_bad_key_or_message_is_refused(alice, gpu, incident):
    with pytest.raises(DomainError, match="request key must be") as refused:
        oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk, key="a b")
    assert refused.value.code == "invalid"
    with pytest.raises(DomainError, match="longer than 500") as refused:
        oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk, message="m" * 501)
    assert refused.value.code == "invalid"


def test_nobody_on_call_is_refused_naming_the_team(alice, incident):
    empty = Team.objects.create(slug="db", name="Databases")
    with pytest.raises(DomainError, match="Nobody is on call in team Databases: it has no sch"):
        oncall_page(actor=alice, team_slug="db", incident_id=incident.pk)
    Schedule.objects.create(team=empty, slug="db-primary", name="primary")
    with pytest.raises(DomainError, match="Nobody is on call in team Databases now") as refused:
        oncall_page(actor=alice, team_slug="db", incident_id=incident.pk)
    assert refused.value.code == "nobody_on_call"
    assert not Page.objects.filter(key__startswith=f"{KEY_PREFIX}:").exists()


def test_unknown_team_or_incident_and_roles(alice, make_user, gpu, incident):
    with pytest.raises(NotFound, match="There is no team 'nope'"):
        oncall_page(actor=alice, team_slug="nope", incident_id=incident.pk)
    with pytest.raises(NotFound, match="Incident #999999 does not exist"):
        oncall_page(actor=alice, team_slug="gpu", incident_id=999_999)
    with pytest.raises(PermissionDenied, match="not allow you to page a team"):
        oncall_page(actor=make_user("vera", roles.VIEWER), team_slug="gpu", incident_id=incident.pk)


@pytest.mark.parametrize("status", [IncidentStatus.MITIGATED, IncidentStatus.RESOLVED])
def test_an_ended_incident_is_not_paged_for(alice, gpu, status):
    ended = IncidentFactory(status=status)
    with pytest.raises(DomainError, match=f"is {status}: pages are not sent") as refused:
        oncall_page(actor=alice, team_slug="gpu", incident_id=ended.pk)
    assert refused.value.code == "invalid_state"


def test_an_incident_without_an_escalation_gets_its_own_first(alice, gpu):
    # No pager policy covers it: the escalation is recorded stopped, and the pages join it.
    opened = IncidentFactory()
    pages = oncall_page(actor=alice, team_slug="gpu", incident_id=opened.pk)
    own = Escalation.objects.get(incident=opened)
    assert {p.escalation_id for p in pages} == {own.pk}
    assert own.state == EscalationState.STOPPED


def test_an_acknowledged_incident_can_still_bring_a_team_in(alice, gpu, incident):
    from incidents.services.lifecycle import incident_acknowledge

    incident_acknowledge(incident_id=incident.pk, actor=alice)
    escalation.escalation_on_ack(incident_id=incident.pk, actor_id=alice.pk)
    pages = oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk)
    assert [p.user.username for p in pages] == ["bob", "carol"]
    assert Escalation.objects.get(incident=incident).state == EscalationState.ACKNOWLEDGED


def test_the_page_is_sent_like_any_other(alice, gpu, incident, ntfy):
    target = person("dina")
    contact(target, "ntfy", ntfy_url(ntfy, "dina-pages"))
    schedule = Schedule.objects.create(team=gpu, slug="tertiary", name="tertiary")
    now = timezone.now()
    on_call(gpu, target, now - HOUR, now + HOUR, slug=schedule.slug)
    pages = oncall_page(actor=alice, team_slug="gpu", incident_id=incident.pk, message="help")
    [page] = [p for p in pages if p.user == target]
    page_send(page_id=page.pk)
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED
    [message] = ntfy.messages["dina-pages"]
    assert f"Incident #{incident.pk}" in message["title"]
