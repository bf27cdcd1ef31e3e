"""The timeline receiver: which incident changes start, acknowledge or stop an escalation,
handed to the worker after the writer's commit; a broker that is down costs nothing."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from incidents.models import TimelineEvent, TimelineEventType
from incidents.services.lifecycle import incident_acknowledge
from pager.escalation import services
from pager.escalation.receivers import changes_for
from pager.models import Escalation, EscalationState, Page, PageStatus, StepAction
from pager.tasks import escalation as tasks
from tests.factories import IncidentFactory
from tests.unit.pager.test_escalation_engine import default_team, person, policy_with

pytestmark = pytest.mark.django_db
TASKS = {task.name: task for task in (tasks.start, tasks.acknowledge, tasks.stop)}


def event(kind: str, actor_id: int | None = None, **payload) -> TimelineEvent:
    return TimelineEvent(incident_id=7, kind=kind, actor_id=actor_id, payload=payload)


def status(old: str, new: str, actor_id: int | None = None) -> TimelineEvent:
    return event(TimelineEventType.STATUS_CHANGED, actor_id, **{"from": old, "to": new})


@pytest.mark.parametrize(
    ("events", "wanted"),
    [
        ([event(TimelineEventType.INCIDENT_OPENED)], [("start", (7,))]),
        ([status("triggered", "acknowledged", 3)], [("acknowledge", (7, 3))]),
        ([status("triggered", "mitigated")], [("stop", (7, "incident mitigated"))]),
        ([status("acknowledged", "resolved")], [("stop", (7, "incident resolved"))]),
        ([status("resolved", "triggered", 3)], [("start", (7,))]),  # reopened
        ([status("mitigated", "triggered")], [("start", (7,))]),  # fired again
        ([status("mitigated", "acknowledged")], [("start", (7,))]),
        ([event(TimelineEventType.SEVERITY_CHANGED, **{"from": "SEV3", "to": "SEV1"})], []),
        ([event("page", 3, event="acknowledged", repage_round=1)], [("acknowledge", (7, 3))]),
        ([event("page", None, event="delivered")], []),
        # The link's status change and its page entry are one acknowledgement.
        (
            [status("triggered", "acknowledged", 3), event("page", 3, event="acknowledged")],
            [("acknowledge", (7, 3))],
        ),
        (
            [event(TimelineEventType.INCIDENT_OPENED), event(TimelineEventType.INCIDENT_OPENED)],
            [("start", (7,))],
        ),
    ],
)
def test_which_changes_call_for_which_task(events, wanted, django_assert_num_queries):
    with django_assert_num_queries(0):
        found = changes_for(events)
    assert [(task.name.rsplit(".", 1)[-1], args) for task, args in found] == wanted


@pytest.fixture
def queued(monkeypatch):
    """What the receiver handed to the broker, in order (run here with `run_queued`)."""
    sent: list[tuple[str, tuple]] = []
    for task in TASKS.values():
        monkeypatch.setattr(
            task, "apply_async", lambda args, _name=task.name, **kw: sent.append((_name, args))
        )
    return sent


def run_queued(queued) -> None:
    while queued:
        name, args = queued.pop(0)
        TASKS[name].apply(args=args).get()  # as the worker would, here


def test_an_opened_incident_pages_and_its_acknowledgement_stops_it(
    queued, django_capture_on_commit_callbacks
):
    team = default_team()
    alice = person("alice", "ntfy")
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 5},
        {"action": StepAction.PAGE_USER, "user": person("bob", "ntfy")},
        team=team,
    )
    incident = IncidentFactory()
    with django_capture_on_commit_callbacks(execute=True):
        TimelineEvent.objects.create(
            incident=incident,
            kind=TimelineEventType.INCIDENT_OPENED,
            occurred_at=incident.triggered_at,
            message="Incident opened.",
        )
    assert queued == [("pager.tasks.escalation.start", (incident.pk,))]
    run_queued(queued)
    escalation = Escalation.objects.get(incident=incident)
    assert escalation.state == EscalationState.ACTIVE
    assert Page.objects.get().user == alice

    with django_capture_on_commit_callbacks(execute=True):
        incident_acknowledge(incident_id=incident.pk, actor=alice)
    assert ("pager.tasks.escalation.acknowledge", (incident.pk, alice.pk)) in queued
    run_queued(queued)
    escalation.refresh_from_db()
    assert escalation.state == EscalationState.ACKNOWLEDGED
    assert Page.objects.get().status == PageStatus.ACKNOWLEDGED


def test_a_broker_that_is_down_costs_the_writer_nothing_and_the_tick_catches_up(
    monkeypatch, caplog, django_capture_on_commit_callbacks
):
    def down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.start, "apply_async", down)
    team = default_team()
    policy_with({"action": StepAction.PAGE_USER, "user": person("alice", "ntfy")}, team=team)
    incident = IncidentFactory()
    with caplog.at_level(logging.WARNING), django_capture_on_commit_callbacks(execute=True):
        TimelineEvent.objects.create(
            incident=incident,
            kind=TimelineEventType.INCIDENT_OPENED,
            occurred_at=incident.triggered_at,
            message="Incident opened.",
        )
    assert "could not queue pager.tasks.escalation.start" in caplog.text
    assert not Escalation.objects.exists()
    # Beat, once the broker is back (past the two ticks' grace a queued start gets).
    assert services.escalations_tick(now=timezone.now() + timedelta(seconds=11)) == 1
    assert Page.objects.filter(incident=incident).count() == 1
