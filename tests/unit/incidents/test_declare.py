"""Declaring an incident by hand (incidents/services/declare.py): the fields checked and
named, who may, the opening line with who and where, a grouping key no alert group can
have, a team label that routes it, and the pager's escalation starting from the opening
as it does for an alert-opened incident."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console import roles
from console.surface import acting_through
from incidents.models import Incident, IncidentStatus, TimelineEvent, TimelineEventType
from incidents.services import incident_declare
from incidents.services.declare import GROUPING_PREFIX, DeclareInvalid
from pager.escalation.receivers import changes_for
from pager.models import Escalation, EscalationState, Ownership, Page, StepAction, Team
from pager.routing import route
from pager.tasks import escalation as tasks
from tests.unit.pager.test_escalation_engine import on_call, person, policy_with

pytestmark = pytest.mark.django_db
MIN = timedelta(minutes=1)


@pytest.fixture
def alice(make_user):
    return make_user("alice", roles.RESPONDER)


def declare(actor, **fields):
    return incident_declare(
        actor=actor, **{"title": "Chat replies are slow", "severity": "SEV2", **fields}
    )


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"title": "   "}, "title", "The title is empty."),
        ({"title": "x" * 201}, "title", "longer than 200 characters"),
        ({"severity": "SEV9"}, "severity", "'SEV9' is not a severity: use one of SEV1"),
        ({"severity": ""}, "severity", "is not a severity"),
        ({"namespace": "LLM_Prod"}, "namespace", "'LLM_Prod' is not a namespace name"),
        ({"namespace": "-serving"}, "namespace", "is not a namespace name"),
        ({"namespace": "a" * 64}, "namespace", "is not a namespace name"),
        ({"labels": ["team"]}, "labels", "must be an object"),
        ({"labels": {f"l{n}": "v" for n in range(21)}}, "labels", "At most 20 labels"),
        ({"labels": {"9team": "x"}}, "labels", "'9team' is not a label name"),
        ({"labels": {"__name__": "x"}}, "labels", "is not a label name"),
        ({"labels": {"team": 3}}, "labels", "label team must be a non-empty text"),
        ({"labels": {"team": ""}}, "labels", "label team must be a non-empty text"),
        ({"labels": {"team": "x" * 201}}, "labels", "longer than 200"),
        ({"summary": "s" * 2001}, "summary", "The summary is longer than 2000"),
    ],
)
def test_a_bad_field_is_refused_and_named(alice, fields, field, words):
    with pytest.raises(DeclareInvalid) as refused:
        declare(alice, **fields)
    assert refused.value.field == field
    assert refused.value.code == "invalid"
    assert words in str(refused.value)
    assert not Incident.objects.exists()


def test_fields_are_cleaned(alice):
    incident = declare(
        alice,
        title="  Chat replies are slow ",
        severity="sev1",
        namespace=" llm-prod ",
        labels={"team": " serving ", "lws": "vllm-chat"},
    )
    incident.refresh_from_db()
    assert incident.title == "Chat replies are slow"
    assert incident.severity == "SEV1"
    assert incident.namespace == "llm-prod"
    assert incident.group_labels == {"team": "serving", "lws": "vllm-chat"}


@pytest.mark.parametrize("role", [None, roles.VIEWER])
def test_only_responders_may_declare(make_user, role):
    with pytest.raises(PermissionDenied, match="not allow you to declare an incident"):
        declare(make_user("vera", role))
    assert not Incident.objects.exists()


def test_the_incident_opens_triggered_with_a_key_no_alert_group_has(alice):
    before = timezone.now()
    first, second = declare(alice), declare(alice)  # the same title twice: two incidents
    for incident in (first, second):
        assert incident.status == IncidentStatus.TRIGGERED
        assert incident.grouping_key.startswith(GROUPING_PREFIX)
        assert incident.triggered_at >= before
        assert incident.started_at == incident.triggered_at
        assert not incident.is_drill
        assert not incident.is_demo
    assert first.grouping_key != second.grouping_key


@pytest.mark.parametrize(("surface", "source"), [(None, "console"), ("slack", "slack")])
def test_the_opening_line_says_who_declared_it_and_from_where(alice, surface, source):
    if surface:
        with acting_through(surface):
            incident = declare(alice, summary="  p99 TTFT above 5 s since the deploy ")
    else:
        incident = declare(alice, summary="  p99 TTFT above 5 s since the deploy ")
    opened, note = TimelineEvent.objects.filter(incident=incident).order_by("pk")
    assert opened.kind == TimelineEventType.INCIDENT_OPENED
    assert opened.message == "Incident opened: Chat replies are slow"
    assert (opened.actor, opened.source) == (alice, source)
    assert opened.payload["declared_by"] == "alice"
    assert opened.payload["surface"] == source
    assert opened.payload["grouping_key"] == incident.grouping_key
    assert (note.kind, note.message, note.actor, note.source) == (
        TimelineEventType.NOTE,
        "p99 TTFT above 5 s since the deploy",
        alice,
        source,
    )


def test_without_a_summary_there_is_only_the_opening(alice):
    incident = declare(alice)
    kinds = list(TimelineEvent.objects.filter(incident=incident).values_list("kind", flat=True))
    assert kinds == [TimelineEventType.INCIDENT_OPENED]


def test_a_team_label_routes_the_incident_to_that_team(alice):
    serving = Team.objects.create(slug="serving", name="Serving")
    Team.objects.create(slug="sre", name="SRE", is_default=True)
    gpu = Team.objects.create(slug="gpu", name="GPU")
    Ownership.objects.create(team=gpu, namespace="llm-*")
    named = route(declare(alice, namespace="llm-prod", labels={"team": "serving"}))
    # A declared incident names its team itself: no alert is involved.
    assert (named.team, named.reason) == (serving, "route.named_declared")
    claimed = route(declare(alice, namespace="llm-prod"))
    assert (claimed.team, claimed.reason) == (gpu, "route.owns")
    default = route(declare(alice))
    assert (default.team.slug, default.reason) == ("sre", "route.default_team")


def test_the_escalation_starts_from_the_opening_and_pages_the_teams_on_call(
    alice, django_capture_on_commit_callbacks
):
    team = Team.objects.create(slug="serving", name="Serving")
    bob = person("bob", "ntfy")
    now = timezone.now()
    on_call(team, bob, now - 60 * MIN, now + 60 * MIN)
    policy_with({"action": StepAction.PAGE_SCHEDULE}, team=team)
    with django_capture_on_commit_callbacks(execute=True):
        incident = declare(alice, labels={"team": "serving"})
    # What the pager's receiver hears from the opening: the start, as for ingest's.
    events = list(TimelineEvent.objects.filter(incident=incident))
    assert [(task.name, args) for task, args in changes_for(events)] == [
        (tasks.start.name, (incident.pk,))
    ]
    with django_capture_on_commit_callbacks(execute=False):
        tasks.start.apply(args=(incident.pk,)).get()  # as the worker runs it
    escalation = Escalation.objects.get(incident=incident)
    # Its one step ran at once: the team's on-call person paged, the policy at its end.
    assert (escalation.team, escalation.state) == (team, EscalationState.EXHAUSTED)
    page = Page.objects.get(incident=incident)
    assert page.user == bob
    assert page.key == f"{incident.pk}:0:0:0:1:u{bob.pk}"
