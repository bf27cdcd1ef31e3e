"""The escalation engine, step by step, with the time passed in (`now`): pages, waits,
repeats, skipped steps, acknowledgement and its expiry, stops, reopening, drills,
maintenance, and every one of them on the incident timeline."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import translation

from console import roles
from console.texts import english, render
from incidents.models import IncidentStatus, TimelineEvent
from incidents.services.lifecycle import (
    incident_acknowledge,
    incident_mitigate,
    incident_reopen,
    incident_resolve,
)
from incidents.timeline_text import timeline_text
from notifications.models import Target, TargetKind
from pager.escalation import services
from pager.escalation.steps import within
from pager.escalation.timeline import reword
from pager.models import (
    ContactMethod,
    Escalation,
    EscalationPolicy,
    EscalationState,
    EscalationStep,
    MaintenanceWindow,
    Override,
    Page,
    PageStatus,
    Schedule,
    StepAction,
    Team,
)
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
S = EscalationState


# --- builders (also used by tests/integration/pager/test_escalation_faults.py) ------------
def person(username: str, *kinds: str, role: str = roles.RESPONDER) -> User:
    from django.contrib.auth.models import Group

    user = User.objects.create_user(username=username, password="pw-" + username)
    user.groups.add(Group.objects.get(name=role))
    for position, kind in enumerate(kinds):
        ContactMethod.objects.create(
            user=user, position=position, kind=kind, address=f"{kind}://{username}"
        )
    return user


def policy_with(*steps: dict, team: Team | None = None, **fields) -> EscalationPolicy:
    """A policy (the team's, when given) with `steps` as EscalationStep fields."""
    policy = EscalationPolicy.objects.create(
        name=fields.pop("name", "primary"), team=team, **fields
    )
    for position, step in enumerate(steps, start=1):
        EscalationStep.objects.create(policy=policy, position=position, **step)
    if team is not None:
        team.escalation_policy = policy
        team.save()
    return policy


def default_team(policy: EscalationPolicy | None = None, **fields) -> Team:
    return Team.objects.create(
        slug=fields.pop("slug", "sre"),
        name=fields.pop("name", "SRE"),
        is_default=True,
        escalation_policy=policy,
        **fields,
    )


def on_call(team: Team, user: User, start: datetime, end: datetime, slug="primary") -> Schedule:
    schedule, _ = Schedule.objects.get_or_create(team=team, slug=slug, defaults={"name": slug})
    Override.objects.create(schedule=schedule, user=user, starts_at=start, ends_at=end)
    return schedule


def opened(**fields):
    """An incident the console opened at T0 (the first step is due then)."""
    return IncidentFactory(**{"triggered_at": T0, **fields})


def timeline(incident) -> list[str]:
    return list(
        TimelineEvent.objects.filter(incident=incident, source="pager")
        .order_by("pk")
        .values_list("message", flat=True)
    )


def keys(incident) -> list[str]:
    return list(Page.objects.filter(incident=incident).order_by("pk").values_list("key", flat=True))


@pytest.fixture
def alice():
    return person("alice", "ntfy", "sms")


@pytest.fixture
def bob():
    return person("bob", "email")


@pytest.fixture
def cara():
    return person("cara", role=roles.COMMANDER)


@pytest.fixture
def team():
    return default_team()


# --- the first step and the waits -----------------------------------------------------------
def test_the_first_step_pages_at_once_and_the_wait_sets_the_next_due_time(team, alice, bob):
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 5},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=team,
    )
    ContactMethod.objects.create(user=alice, position=7, kind="voice", address="x", enabled=False)
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    escalation.refresh_from_db()
    assert escalation.state == S.ACTIVE
    assert escalation.next_due_at == T0 + 5 * MIN
    assert keys(incident) == [f"{incident.pk}:0:0:0:1:u{alice.pk}"]
    page = Page.objects.get()
    assert page.status == PageStatus.PENDING
    assert page.late_seconds == 0
    # One delivery per enabled method, in the person's order.
    assert [(d.position, d.kind, d.method.position) for d in page.deliveries.all()] == [
        (1, "ntfy", 0),
        (2, "sms", 1),
    ]
    assert timeline(incident) == [
        "Escalation started: policy primary, team SRE (no team owns these labels; the "
        "default team).",
        "Paged alice (step 1: named in the policy).",
        "Waiting 5 min before the next step (due at 12:05 UTC).",
    ]

    # Not due yet: nothing happens.
    assert services.escalation_advance(escalation_id=escalation.pk, now=T0 + 4 * MIN) == []
    assert services.escalations_tick(now=T0 + 4 * MIN) == 0
    # Due: bob, then the end of the policy.
    assert services.escalations_tick(now=T0 + 5 * MIN) == 1
    escalation.refresh_from_db()
    assert escalation.state == S.EXHAUSTED
    assert escalation.next_due_at is None
    assert keys(incident)[1] == f"{incident.pk}:0:0:0:2:u{bob.pk}"
    assert timeline(incident)[-2:] == [
        "Paged bob (step 2: named in the policy).",
        "Reached the last step; nobody acknowledged.",
    ]


def test_a_wait_step_waits(team, alice):
    policy_with(
        {"action": StepAction.WAIT, "wait_minutes": 10},
        {"action": StepAction.PAGE_USER, "user": alice},
        team=team,
    )
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert keys(incident) == []
    services.escalations_tick(now=T0 + 10 * MIN)
    assert len(keys(incident)) == 1
    escalation.refresh_from_db()
    assert escalation.state == S.EXHAUSTED


def test_the_policy_repeats_k_times_with_new_keys(team, alice):
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 1},
        team=team,
        repeat_times=2,
    )
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    for minute in (1, 2, 3):
        services.escalations_tick(now=T0 + minute * MIN)
    escalation.refresh_from_db()
    assert escalation.state == S.EXHAUSTED
    assert keys(incident) == [f"{incident.pk}:0:0:{loop}:1:u{alice.pk}" for loop in (0, 1, 2)]
    text = timeline(incident)
    assert "Reached the last step; repeating the policy (repeat 1 of 2)." in text
    assert "Reached the last step; repeating the policy (repeat 2 of 2)." in text
    assert text[-1] == "Reached the last step; nobody acknowledged."


# --- steps that do not apply, and gaps -----------------------------------------------------
def test_a_step_for_other_severities_is_skipped(team, alice, bob):
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "severities": ["SEV1"]},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=team,
    )
    incident = opened(severity="SEV2")
    services.escalation_start(incident_id=incident.pk, now=T0)
    assert keys(incident) == [f"{incident.pk}:0:0:0:2:u{bob.pk}"]
    assert "Skipped step 1: it is only for SEV1, and this incident is SEV2." in timeline(incident)


def test_a_step_runs_only_in_its_hours_in_its_own_time_zone(team, alice, bob):
    night = {"active_from": time(22, 0), "active_until": time(6, 0), "time_zone": "Europe/Berlin"}
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, **night},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=team,
    )
    by_day = opened()
    services.escalation_start(incident_id=by_day.pk, now=T0)  # 13:00 in Berlin
    assert keys(by_day) == [f"{by_day.pk}:0:0:0:2:u{bob.pk}"]
    assert (
        "Skipped step 1: it runs only from 22:00 to 06:00 (Europe/Berlin), and it is 13:00 there."
        in timeline(by_day)
    )
    night_time = datetime(2026, 12, 5, 23, 30, tzinfo=UTC)
    by_night = opened(triggered_at=night_time)
    services.escalation_start(incident_id=by_night.pk, now=night_time)
    assert keys(by_night)[0] == f"{by_night.pk}:0:0:0:1:u{alice.pk}"  # 00:30 in Berlin


@pytest.mark.parametrize(
    ("clock", "start", "end", "inside"),
    [
        (time(23, 0), time(22, 0), time(6, 0), True),
        (time(5, 59), time(22, 0), time(6, 0), True),
        (time(6, 0), time(22, 0), time(6, 0), False),
        (time(12, 0), time(22, 0), time(6, 0), False),
        (time(9, 0), time(9, 0), time(18, 0), True),
        (time(18, 0), time(9, 0), time(18, 0), False),
        (time(23, 0), time(9, 0), None, True),
        (time(8, 0), None, time(9, 0), True),
        (time(9, 0), None, time(9, 0), False),
    ],
)
def test_active_hours_wrap_midnight_when_until_is_before_from(clock, start, end, inside):
    assert within(clock, start, end) is inside


def test_page_who_is_on_call_and_say_so_when_the_schedule_has_a_gap(team, alice, bob):
    schedule = on_call(team, alice, T0 - 60 * MIN, T0 + 60 * MIN)
    empty = Schedule.objects.create(team=team, slug="empty", name="Empty")
    policy_with(
        {"action": StepAction.PAGE_SCHEDULE, "schedule": empty},
        {"action": StepAction.PAGE_SCHEDULE, "schedule": schedule},
        team=team,
    )
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    assert keys(incident) == [f"{incident.pk}:0:0:0:2:u{alice.pk}"]
    assert timeline(incident)[1:3] == [
        "Nobody paged by step 1: schedule Empty has nobody on call at 12:00 UTC (a gap in "
        "the schedule).",
        "Paged alice (step 2: on call in schedule primary).",
    ]


def test_a_step_without_a_schedule_pages_the_teams_schedules(team, alice):
    on_call(team, alice, T0 - 60 * MIN, T0 + 60 * MIN)
    policy_with({"action": StepAction.PAGE_SCHEDULE}, team=team)
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    assert keys(incident) == [f"{incident.pk}:0:0:0:1:u{alice.pk}"]


def test_the_teams_channel_gets_one_webhook_delivery(alice):
    channel = Target.objects.create(
        name="infer-slack", kind=TargetKind.SLACK, url="https://hooks.slack.com/services/x"
    )
    team = default_team(channel=channel)
    policy_with({"action": StepAction.PAGE_CHANNEL}, team=team)
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    page = Page.objects.get()
    assert page.key == f"{incident.pk}:0:0:0:1:c{channel.pk}"
    assert page.channel == channel
    assert [(d.kind, d.position, d.method) for d in page.deliveries.all()] == [("webhook", 1, None)]
    assert "Paged team SRE's channel infer-slack (step 1)." in timeline(incident)


def test_a_team_without_a_channel_is_said(team):
    policy_with({"action": StepAction.PAGE_CHANNEL}, team=team)
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    assert not Page.objects.exists()
    assert (
        "Nothing posted by step 1: team SRE has no enabled channel (set its channel to a "
        "notification target)." in timeline(incident)
    )


def test_a_person_without_contact_methods_is_a_failed_page_at_once(team):
    carol = person("carol")
    policy_with({"action": StepAction.PAGE_USER, "user": carol}, team=team)
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    page = Page.objects.get()
    assert page.status == PageStatus.FAILED
    assert not page.deliveries.exists()
    assert (
        "carol has no contact method: the page could not be sent. Add one on the pager's "
        "contact methods page." in timeline(incident)
    )
    escalation.refresh_from_db()
    assert escalation.state == S.EXHAUSTED


# --- a late step ---------------------------------------------------------------------------
def test_a_late_step_records_how_late_and_says_so(team, alice, bob):
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 5},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=team,
    )
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    services.escalations_tick(now=T0 + 6 * MIN)  # a minute late
    page = Page.objects.get(user=bob)
    assert page.due_at == T0 + 5 * MIN
    assert page.late_seconds == 60
    assert (
        "Paged bob (step 2: named in the policy). Sent 60s late (the escalation was not run "
        "on time)." in timeline(incident)
    )


def test_a_step_run_twice_makes_its_pages_once(team, alice):
    policy_with({"action": StepAction.PAGE_USER, "user": alice}, team=team)
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    # As if the row's update were lost while its pages stayed (a redelivered step).
    Escalation.objects.filter(pk=escalation.pk).update(state=S.ACTIVE, step_index=0, next_due_at=T0)
    assert services.escalation_advance(escalation_id=escalation.pk, now=T0) == []
    assert Page.objects.count() == 1
    assert timeline(incident).count("Paged alice (step 1: named in the policy).") == 1


# --- acknowledgement, its expiry, stops ----------------------------------------------------
@pytest.fixture
def two_step(team, alice, bob):
    return policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 5},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=team,
        ack_timeout_minutes=30,
    )


def test_acknowledging_stops_paging_and_marks_the_open_pages(two_step, alice):
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=alice)
    services.escalation_on_ack(incident_id=incident.pk, actor_id=alice.pk, now=T0 + MIN)
    escalation.refresh_from_db()
    assert escalation.state == S.ACKNOWLEDGED
    assert escalation.acknowledged_by == alice
    assert escalation.ack_expires_at == T0 + 31 * MIN
    assert set(Page.objects.values_list("status", flat=True)) == {PageStatus.ACKNOWLEDGED}
    assert timeline(incident)[-1] == (
        "Escalation stopped: acknowledged by alice. If it is neither mitigated nor resolved "
        "by 12:31 UTC, paging starts again."
    )
    assert services.escalations_tick(now=T0 + 10 * MIN) == 0
    assert Page.objects.count() == 1


def test_an_expired_acknowledgement_pages_again_from_the_first_step(two_step, alice, bob):
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=bob)
    services.escalation_on_ack(incident_id=incident.pk, actor_id=bob.pk, now=T0 + MIN)
    assert services.escalations_tick(now=T0 + 31 * MIN) == 1
    escalation.refresh_from_db()
    assert (escalation.state, escalation.repage_round, escalation.loop) == (S.ACTIVE, 1, 0)
    assert keys(incident)[-1] == f"{incident.pk}:0:1:0:1:u{alice.pk}"
    assert (
        "Acknowledgement expired without progress after 30 min: paging again from the first "
        "step (re-page 1)." in timeline(incident)
    )
    # The one-tap link of a re-page acknowledges the escalation (the incident already is).
    services.escalation_on_ack(incident_id=incident.pk, actor_id=alice.pk, now=T0 + 32 * MIN)
    escalation.refresh_from_db()
    assert escalation.state == S.ACKNOWLEDGED


def test_an_acknowledgement_of_a_mitigated_incident_does_not_expire(two_step, alice):
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=alice)
    services.escalation_on_ack(incident_id=incident.pk, actor_id=alice.pk, now=T0 + MIN)
    incident_mitigate(incident_id=incident.pk, actor=alice)  # its stop task lost
    services.escalations_tick(now=T0 + 40 * MIN)
    escalation.refresh_from_db()
    assert escalation.state == S.STOPPED
    assert escalation.stop_reason == "incident mitigated"
    assert Page.objects.count() == 1


@pytest.mark.parametrize("move", ["mitigate", "resolve"])
def test_mitigating_or_resolving_stops_the_escalation(two_step, cara, move):
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    if move == "mitigate":
        incident_mitigate(incident_id=incident.pk, actor=cara)
    else:
        incident_resolve(incident_id=incident.pk, actor=cara, confirm_no_commander=True)
    reason = services.STOP_REASONS[f"{move}d"]
    services.escalation_stop(incident_id=incident.pk, reason=reason, now=T0 + MIN)
    escalation.refresh_from_db()
    assert (escalation.state, escalation.stop_reason) == (S.STOPPED, f"incident {move}d")
    assert timeline(incident)[-1] == f"Escalation stopped: incident {move}d."
    assert services.escalations_tick(now=T0 + 10 * MIN) == 0


def test_an_acknowledgement_whose_task_was_lost_stops_the_next_step(two_step, alice):
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=alice)  # no escalation_on_ack
    services.escalations_tick(now=T0 + 5 * MIN)
    escalation.refresh_from_db()
    assert escalation.state == S.ACKNOWLEDGED
    assert escalation.acknowledged_by == alice
    assert Page.objects.count() == 1  # bob was not paged


# --- episodes and rounds -------------------------------------------------------------------
def test_a_reopened_incident_escalates_as_a_new_episode(two_step, alice, cara):
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    incident_resolve(incident_id=incident.pk, actor=cara, confirm_no_commander=True)
    services.escalation_stop(incident_id=incident.pk, reason="incident resolved", now=T0 + MIN)
    incident_reopen(incident_id=incident.pk, actor=cara, reason="it is back")
    services.escalation_start(incident_id=incident.pk, now=T0 + 10 * MIN)
    assert list(
        Escalation.objects.filter(incident=incident)
        .order_by("episode")
        .values_list("episode", "state")
    ) == [(0, S.STOPPED), (1, S.ACTIVE)]
    assert keys(incident) == [
        f"{incident.pk}:0:0:0:1:u{alice.pk}",
        f"{incident.pk}:1:0:0:1:u{alice.pk}",
    ]


def test_alerts_firing_again_after_mitigation_page_a_new_round(two_step, alice):
    from incidents.transitions import apply_transition

    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    incident_mitigate(incident_id=incident.pk, actor=alice)
    services.escalation_stop(incident_id=incident.pk, reason="incident mitigated", now=T0 + MIN)
    incident.refresh_from_db()
    # Alertmanager's move (ingestion): no actor.
    _, event = apply_transition(incident, IncidentStatus.TRIGGERED, at=T0, source="alertmanager")
    incident.save()
    event.save()
    services.escalation_start(incident_id=incident.pk, now=T0 + 10 * MIN)
    escalation.refresh_from_db()
    assert (escalation.state, escalation.repage_round) == (S.ACTIVE, 1)
    assert keys(incident)[-1] == f"{incident.pk}:0:1:0:1:u{alice.pk}"
    assert "Alerts fire again after mitigation: paging again from the first step." in timeline(
        incident
    )
    # Started again is not started twice.
    services.escalation_start(incident_id=incident.pk, now=T0 + 11 * MIN)
    assert len(keys(incident)) == 2


def test_an_incident_acknowledged_before_the_start_is_not_paged(two_step, alice):
    incident = opened()
    incident_acknowledge(incident_id=incident.pk, actor=alice)
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert escalation.state == S.ACKNOWLEDGED
    assert escalation.acknowledged_by_id == alice.pk
    assert not Page.objects.exists()
    assert timeline(incident) == [
        "Nobody paged: alice acknowledged the incident before paging began."
    ]


# --- not paged at all ----------------------------------------------------------------------
def test_a_drill_is_recorded_and_not_paged(two_step, settings, alice):
    incident = opened(is_drill=True)
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert (escalation.state, escalation.stop_reason) == (S.STOPPED, "drill incident: not paged")
    assert not Page.objects.exists()
    assert timeline(incident) == [
        "Nobody paged: this is a drill incident (PAGER_PAGE_DRILLS is off)."
    ]
    settings.PAGER_PAGE_DRILLS = True
    paged = opened(is_drill=True)
    assert services.escalation_start(incident_id=paged.pk, now=T0).state == S.ACTIVE
    assert len(keys(paged)) == 1
    demo = opened(is_demo=True)  # seeded history: recorded, its timeline untouched
    escalation = services.escalation_start(incident_id=demo.pk, now=T0)
    assert (escalation.state, escalation.stop_reason) == (S.STOPPED, "demo incident: not paged")
    assert timeline(demo) == []


def test_an_incident_inside_a_maintenance_window_is_suppressed(two_step, team):
    window = MaintenanceWindow.objects.create(
        name="driver upgrade",
        team=team,
        matchers={"namespace": "llm-serving"},
        starts_at=T0 - 60 * MIN,
        ends_at=T0 + 60 * MIN,
    )
    incident = opened(namespace="llm-serving")
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert (escalation.state, escalation.maintenance) == (S.SUPPRESSED, window)
    assert not Page.objects.exists()
    event = TimelineEvent.objects.get(incident=incident, source="pager")
    assert event.kind == "maintenance"
    assert event.message == "Opened inside maintenance window driver upgrade: nobody paged."


def test_a_window_that_ends_with_the_incident_still_firing_starts_the_paging(two_step, team):
    MaintenanceWindow.objects.create(
        name="driver upgrade",
        team=team,
        matchers={"namespace": "llm-serving"},
        starts_at=T0 - 60 * MIN,
        ends_at=T0 + 10 * MIN,
    )
    incident = opened(namespace="llm-serving")
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert escalation.state == S.SUPPRESSED

    services.escalations_tick(now=T0 + 5 * MIN)  # still inside: nothing
    assert not Page.objects.exists()
    services.escalations_tick(now=T0 + 11 * MIN)  # over, still firing: paging starts

    escalation.refresh_from_db()
    assert escalation.state == S.ACTIVE
    assert len(keys(incident)) == 1
    assert (
        "Maintenance window driver upgrade is over and the incident is still firing, "
        "unacknowledged: paging starts now."
    ) in timeline(incident)


def test_no_policy_is_recorded_with_what_to_configure():
    team = default_team()
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert (escalation.state, escalation.stop_reason) == (S.STOPPED, "no escalation policy")
    assert escalation.team == team
    assert timeline(incident) == [
        "Nobody paged: no escalation policy covers this incident (no team owns these labels; "
        "the default team). To page, set an escalation policy on team SRE or mark a policy "
        "as the default."
    ]


def test_starting_twice_is_one_escalation(two_step):
    incident = opened()
    first = services.escalation_start(incident_id=incident.pk, now=T0)
    again = services.escalation_start(incident_id=incident.pk, now=T0 + MIN)
    assert first.pk == again.pk
    assert Page.objects.count() == 1


def test_the_tick_starts_what_a_lost_start_task_did_not(two_step):
    incident = opened()  # opened now; its start task never ran
    opened(status=IncidentStatus.RESOLVED, resolved_at=T0)  # not this one
    # Two ticks' grace: a start task merely still queued is left to run itself.
    assert services.escalations_tick(now=T0 + timedelta(seconds=1)) == 0
    later = T0 + timedelta(seconds=11)
    assert services.escalations_tick(now=later) == 1
    assert Escalation.objects.get().incident == incident
    assert len(keys(incident)) == 1
    assert services.escalations_tick(now=later) == 0


def test_every_state_change_is_on_the_timeline(two_step, alice):
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    services.escalations_tick(now=T0 + 5 * MIN)
    kinds = list(
        TimelineEvent.objects.filter(incident=incident, source="pager")
        .order_by("pk")
        .values_list("kind", "payload__what")
    )
    assert kinds == [
        ("escalation", "started"),
        ("page", "paged"),
        ("escalation", "wait"),
        ("page", "paged"),
        ("escalation", "exhausted"),
    ]
    assert Escalation.objects.get(incident=incident).state == S.EXHAUSTED


def test_each_line_keeps_its_parts_for_a_page_in_another_language(two_step, alice):
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=alice)
    services.escalation_on_ack(incident_id=incident.pk, actor_id=alice.pk, now=T0 + MIN)
    events = TimelineEvent.objects.filter(incident=incident, source="pager")
    assert events.count() == 4
    for event in events:
        assert english(event.payload["msg"]) == event.message
        assert "text" not in event.payload  # the old shape: only rows written before
        with translation.override("zh-hans"):
            shown = timeline_text(event.kind, event.message, event.payload)
        assert shown == render(event.payload["msg"], language="zh-hans") != event.message
    # Lines the engine did not write are left as stored.
    assert reword("Paged alice by ntfy.", {"event": "delivered"}) is None


def test_a_console_without_any_pager_setup_leaves_the_timeline_alone():
    incident = opened()
    escalation = services.escalation_start(incident_id=incident.pk, now=T0)
    assert (escalation.state, escalation.stop_reason) == (S.STOPPED, "no escalation policy")
    assert timeline(incident) == []
