"""Overrides, taking a shift and swaps on top of a weekly Europe/Berlin rotation, across
both 2026 daylight-saving changes: who is on call at each instant (hand-computed), who
each change covers for, what is refused and to whom, and the audit rows.

The rotation (as in test_schedule_rotation.py): alice, bob, carol in turn, a week each,
handing off Mondays 09:00 Berlin time from 2026-03-02 (CET = UTC+1 until 2026-03-29,
CEST = UTC+2 until 2026-10-25):
  alice 03-23 08:00Z -> 03-30 07:00Z (the spring week),  bob 03-30 07:00Z -> 04-06 07:00Z,
  alice 10-19 07:00Z -> 10-26 08:00Z (the autumn week),  bob 10-26 08:00Z -> 11-02 08:00Z.
"""

from datetime import UTC, datetime

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console import roles
from console.audit.models import AuditEvent
from console.errors import DomainError
from pager.models import Override, Rotation, RotationMember, Schedule, ShiftSwap, SwapState, Team
from pager.schedules import selectors, services
from pager.schedules.rotation import wall_clock_stored

pytestmark = pytest.mark.django_db


def local(text: str) -> datetime:
    """A naive wall-clock time: what a rotation's handoff and a restriction are."""
    return datetime.fromisoformat(text)


def z(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def clock(monkeypatch):
    """Django's clock, set by the test (the changes below must not be over yet)."""

    class Clock:
        at = z("2026-03-20 12:00")

    monkeypatch.setattr(timezone, "now", lambda: Clock.at)
    return Clock


@pytest.fixture
def people(make_user):
    return {
        name: make_user(name, role, email=f"{name}@example.com")
        for name, role in [
            ("alice", roles.RESPONDER),
            ("bob", roles.RESPONDER),
            ("carol", roles.RESPONDER),
            ("dave", roles.RESPONDER),
            ("erin", roles.RESPONDER),  # not in the team
            ("mia", roles.COMMANDER),
            ("vic", roles.VIEWER),
        ]
    }


@pytest.fixture
def schedule(people):
    team = Team.objects.create(slug="inference", name="Inference")
    team.members.set([people[n] for n in ("alice", "bob", "carol", "dave", "vic")])
    schedule = Schedule.objects.create(
        team=team, slug="primary", name="Primary", time_zone="Europe/Berlin"
    )
    rotation = Rotation.objects.create(
        schedule=schedule, name="weekly", frequency="weekly",
        starts_at=wall_clock_stored(local("2026-03-02 09:00")),
    )  # fmt: skip
    for position, name in enumerate(["alice", "bob", "carol"]):
        RotationMember.objects.create(rotation=rotation, user=people[name], position=position)
    return schedule


def who(schedule: Schedule, at: str) -> tuple[str, str]:
    found = selectors.oncall_at(schedule, z(at))
    return (found[0].username, found[0].source) if found else ("nobody", "")


def test_overrides_takes_and_swaps_across_both_changes(clock, people, schedule):
    p = people
    # Two overlapping overrides: the one created later wins where they overlap, whatever
    # their order in time.
    services.override_create(
        schedule_id=schedule.pk, user_id=p["carol"].pk, actor=p["mia"],
        starts_at=z("2026-03-25 12:00"), ends_at=z("2026-03-25 16:00"),
    )  # fmt: skip
    clock.at = z("2026-03-20 12:05")
    services.override_create(
        schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["mia"],
        starts_at=z("2026-03-25 10:00"), ends_at=z("2026-03-25 14:00"),
    )  # fmt: skip
    # dave across the spring jump: 03-28 21:00 CET -> 03-29 06:00 CEST (8 h, not 9).
    across_spring = services.override_create(
        schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["mia"], reason="alice travels",
        starts_at=z("2026-03-28 20:00"), ends_at=z("2026-03-29 04:00"),
    )  # fmt: skip
    # carol takes 03-30 08:00-12:00 CEST: the last hour of alice's week, bob's first three.
    take = services.shift_take(
        schedule_id=schedule.pk, actor=p["carol"],
        starts_at=z("2026-03-30 06:00"), ends_at=z("2026-03-30 10:00"),
    )  # fmt: skip
    # bob asks for 04-01 09:00 -> 04-02 09:00 CEST; dave accepts.
    swap = services.swap_request(
        schedule_id=schedule.pk, actor=p["bob"], note="dentist",
        starts_at=z("2026-04-01 07:00"), ends_at=z("2026-04-02 07:00"),
    )  # fmt: skip
    accepted = services.swap_accept(swap_id=swap.pk, actor=p["dave"])
    # bob asks for another day and withdraws it: bob stays on call.
    withdrawn = services.swap_request(
        schedule_id=schedule.pk, actor=p["bob"],
        starts_at=z("2026-04-03 07:00"), ends_at=z("2026-04-04 07:00"),
    )  # fmt: skip
    services.swap_cancel(swap_id=withdrawn.pk, actor=p["bob"])
    # Autumn: dave through the repeated hour, 10-25 02:00 CEST -> 03:00 CET (2 h);
    # bob takes 10-26 08:00-10:00 CET: alice's last hour, his own first.
    services.override_create(
        schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["mia"],
        starts_at=z("2026-10-25 00:00"), ends_at=z("2026-10-25 02:00"),
    )  # fmt: skip
    autumn_take = services.shift_take(
        schedule_id=schedule.pk, actor=p["bob"],
        starts_at=z("2026-10-26 07:00"), ends_at=z("2026-10-26 09:00"),
    )  # fmt: skip

    expected = {
        "2026-03-23 08:00": ("alice", "rotation"),
        "2026-03-25 11:00": ("dave", "override"),  # only dave's (10-14Z)
        "2026-03-25 13:00": ("dave", "override"),  # both: dave's was created later
        "2026-03-25 15:00": ("carol", "override"),  # only carol's (12-16Z)
        "2026-03-25 16:00": ("alice", "rotation"),
        "2026-03-28 19:59": ("alice", "rotation"),
        "2026-03-28 20:00": ("dave", "override"),  # 21:00 CET
        "2026-03-29 00:59": ("dave", "override"),  # 01:59 CET, before the jump
        "2026-03-29 01:00": ("dave", "override"),  # 03:00 CEST, after it
        "2026-03-29 03:59": ("dave", "override"),  # 05:59 CEST
        "2026-03-29 04:00": ("alice", "rotation"),  # 06:00 CEST
        "2026-03-30 05:59": ("alice", "rotation"),
        "2026-03-30 06:00": ("carol", "take"),  # 08:00 CEST
        "2026-03-30 07:00": ("carol", "take"),  # 09:00 CEST: bob's week has begun
        "2026-03-30 10:00": ("bob", "rotation"),
        "2026-04-01 07:00": ("dave", "swap"),
        "2026-04-02 06:59": ("dave", "swap"),
        "2026-04-02 07:00": ("bob", "rotation"),
        "2026-04-03 12:00": ("bob", "rotation"),  # the withdrawn swap
        "2026-04-06 07:00": ("carol", "rotation"),
        "2026-10-24 23:59": ("alice", "rotation"),  # 01:59 CEST
        "2026-10-25 00:30": ("dave", "override"),  # the first 02:30 (CEST)
        "2026-10-25 01:30": ("dave", "override"),  # the second 02:30 (CET)
        "2026-10-25 02:00": ("alice", "rotation"),  # 03:00 CET
        "2026-10-26 06:59": ("alice", "rotation"),  # 07:59 CET
        "2026-10-26 07:00": ("bob", "take"),  # 08:00 CET, still alice's week
        "2026-10-26 08:30": ("bob", "take"),  # 09:30 CET, his own week
        "2026-10-26 09:00": ("bob", "rotation"),
    }
    assert {at: who(schedule, at) for at in expected} == expected

    # Who each change covered for.
    assert across_spring.replaces == p["alice"]
    assert take.replaces == p["alice"]  # the first other person in the window
    assert autumn_take.replaces == p["alice"]
    assert accepted.override.replaces == p["bob"]
    assert (accepted.state, accepted.taker) == (SwapState.ACCEPTED, p["dave"])
    withdrawn.refresh_from_db()
    assert withdrawn.state == SwapState.CANCELLED
    kinds = AuditEvent.objects.filter(kind=services.AUDIT_KIND)
    assert kinds.count() == 10  # 4 overrides, 2 takes, 2 requests, 1 accept, 1 cancel
    assert kinds.filter(user=p["carol"], reason__contains="(take)").exists()


def test_now_and_next_and_a_persons_shifts(clock, people, schedule):
    clock.at = z("2026-03-29 12:00")
    services.shift_take(
        schedule_id=schedule.pk, actor=people["dave"],
        starts_at=z("2026-03-30 07:00"), ends_at=z("2026-03-30 19:00"),
    )  # fmt: skip
    oncall = selectors.oncall_now_and_next(schedule)
    assert [(s.username, s.ends_at) for s in oncall.now] == [("alice", z("2026-03-30 07:00"))]
    assert oncall.next is not None
    assert (oncall.next.username, oncall.next.source, oncall.next.ends_at) == (
        "dave", "take", z("2026-03-30 19:00"),
    )  # fmt: skip
    mine = selectors.person_shifts(people["bob"], z("2026-03-29 00:00"), z("2026-04-20 00:00"))
    assert [(s.name, sh.starts_at, sh.ends_at) for s, sh in mine] == [
        ("Primary", z("2026-03-30 19:00"), z("2026-04-06 07:00")),
    ]


def test_cancelling_an_override_and_an_accepted_swap(clock, people, schedule):
    p = people
    override = services.override_create(
        schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["mia"],
        starts_at=z("2026-03-25 10:00"), ends_at=z("2026-03-25 14:00"),
    )  # fmt: skip
    services.override_cancel(override_id=override.pk, actor=p["mia"])
    assert who(schedule, "2026-03-25 11:00") == ("alice", "rotation")
    # One that has begun ends now: the hours already covered stay on record.
    begun = services.override_create(
        schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["mia"],
        starts_at=z("2026-03-20 10:00"), ends_at=z("2026-03-20 18:00"),
    )  # fmt: skip
    services.override_cancel(override_id=begun.pk, actor=p["mia"])
    begun.refresh_from_db()
    assert (begun.cancelled_at, begun.ends_at) == (None, z("2026-03-20 12:00"))
    assert who(schedule, "2026-03-20 11:00") == ("dave", "override")
    assert who(schedule, "2026-03-20 12:00") == ("carol", "rotation")
    # An accepted swap undone by its taker: bob is back.
    swap = services.swap_request(
        schedule_id=schedule.pk, actor=p["bob"],
        starts_at=z("2026-03-31 07:00"), ends_at=z("2026-04-01 07:00"),
    )  # fmt: skip
    services.swap_accept(swap_id=swap.pk, actor=p["carol"])
    assert who(schedule, "2026-03-31 12:00") == ("carol", "swap")
    services.swap_cancel(swap_id=swap.pk, actor=p["carol"])
    assert who(schedule, "2026-03-31 12:00") == ("bob", "rotation")
    assert Override.objects.get(swap=swap).cancelled_at == clock.at
    # A person may end their own take, not someone else's override.
    take = services.shift_take(
        schedule_id=schedule.pk, actor=p["dave"],
        starts_at=z("2026-03-26 07:00"), ends_at=z("2026-03-26 19:00"),
    )  # fmt: skip
    with pytest.raises(PermissionDenied):
        services.override_cancel(override_id=take.pk, actor=p["carol"])
    services.override_cancel(override_id=take.pk, actor=p["dave"])
    with pytest.raises(DomainError, match="already cancelled"):
        services.override_cancel(override_id=take.pk, actor=p["mia"])


@pytest.mark.parametrize(
    ("act", "refusal"),
    [
        ("viewer_takes", PermissionDenied),
        ("responder_overrides", PermissionDenied),
        ("viewer_asks_swap", PermissionDenied),
        ("viewer_accepts", PermissionDenied),
        ("stranger_cancels_swap", PermissionDenied),
    ],
)
def test_roles_refused(clock, people, schedule, act, refusal):
    p = people
    swap = services.swap_request(
        schedule_id=schedule.pk, actor=p["alice"],
        starts_at=z("2026-03-24 08:00"), ends_at=z("2026-03-25 08:00"),
    )  # fmt: skip
    window = {"starts_at": z("2026-03-24 08:00"), "ends_at": z("2026-03-24 20:00")}
    calls = {
        "viewer_takes": lambda: services.shift_take(
            schedule_id=schedule.pk, actor=p["vic"], **window
        ),
        "responder_overrides": lambda: services.override_create(
            schedule_id=schedule.pk, user_id=p["dave"].pk, actor=p["bob"], **window
        ),
        "viewer_asks_swap": lambda: services.swap_request(
            schedule_id=schedule.pk, actor=p["vic"], **window
        ),
        "viewer_accepts": lambda: services.swap_accept(swap_id=swap.pk, actor=p["vic"]),
        "stranger_cancels_swap": lambda: services.swap_cancel(swap_id=swap.pk, actor=p["bob"]),
    }
    with pytest.raises(refusal):
        calls[act]()
    assert not Override.objects.exists()
    assert ShiftSwap.objects.get().state == SwapState.OPEN


def test_what_is_refused_and_why(clock, people, schedule):
    p = people

    def override(user="dave", start="2026-03-24 08:00", end="2026-03-24 20:00"):
        return services.override_create(
            schedule_id=schedule.pk,
            user_id=p[user].pk,
            actor=p["mia"],
            starts_at=z(start),
            ends_at=z(end),
        )

    with pytest.raises(DomainError, match="end must be after the start"):
        override(end="2026-03-24 08:00")
    with pytest.raises(DomainError, match="at most 31 days"):
        override(end="2026-04-24 08:01")
    with pytest.raises(DomainError, match="already over"):
        override(start="2026-03-19 08:00", end="2026-03-20 11:00")
    with pytest.raises(DomainError, match="erin is not a member of team Inference"):
        override(user="erin")
    with pytest.raises(DomainError, match="erin is not a member"):
        services.shift_take(
            schedule_id=schedule.pk,
            actor=p["erin"],
            starts_at=z("2026-03-24 08:00"),
            ends_at=z("2026-03-24 20:00"),
        )
    with pytest.raises(DomainError, match="already on call for all of that time"):
        services.shift_take(
            schedule_id=schedule.pk,
            actor=p["alice"],
            starts_at=z("2026-03-24 08:00"),
            ends_at=z("2026-03-24 20:00"),
        )
    # bob is not on call then (alice is), nor for all of 03-29 .. 03-31.
    for start, end in [
        ("2026-03-24 08:00", "2026-03-25 08:00"),
        ("2026-03-29 12:00", "2026-03-31 12:00"),
    ]:
        with pytest.raises(DomainError, match="only ask for a swap of time you are on call for"):
            services.swap_request(
                schedule_id=schedule.pk, actor=p["bob"], starts_at=z(start), ends_at=z(end)
            )
    swap = services.swap_request(
        schedule_id=schedule.pk,
        actor=p["alice"],
        starts_at=z("2026-03-24 08:00"),
        ends_at=z("2026-03-25 08:00"),
    )
    with pytest.raises(DomainError, match="already asked for a swap"):
        services.swap_request(
            schedule_id=schedule.pk,
            actor=p["alice"],
            starts_at=z("2026-03-24 20:00"),
            ends_at=z("2026-03-25 20:00"),
        )
    with pytest.raises(DomainError, match="cannot accept your own swap"):
        services.swap_accept(swap_id=swap.pk, actor=p["alice"])
    with pytest.raises(DomainError, match="erin is not a member"):
        services.swap_accept(swap_id=swap.pk, actor=p["erin"])
    # Someone else now covers part of alice's time: the swap can no longer be accepted.
    override(user="carol", start="2026-03-24 12:00", end="2026-03-24 13:00")
    with pytest.raises(DomainError, match="alice is no longer on call for all of that time"):
        services.swap_accept(swap_id=swap.pk, actor=p["bob"])
    with pytest.raises(DomainError, match="Give the start and end with their time zone"):
        services.shift_take(
            schedule_id=schedule.pk, actor=p["dave"],
            starts_at=local("2026-03-24 08:00"), ends_at=local("2026-03-24 20:00"),
        )  # fmt: skip


def test_a_take_that_began_starts_now(clock, people, schedule):
    take = services.shift_take(
        schedule_id=schedule.pk, actor=people["dave"],
        starts_at=z("2026-03-20 06:00"), ends_at=z("2026-03-20 18:00"),
    )  # fmt: skip
    assert (take.starts_at, take.replaces) == (clock.at, people["carol"])
    assert who(schedule, "2026-03-20 11:00") == ("carol", "rotation")


def test_feed_keys_rotate(clock, people, schedule):
    old = schedule.feed_key
    new = services.feed_key_rotate(schedule_id=schedule.pk, actor=people["mia"])
    schedule.refresh_from_db()
    assert schedule.feed_key == new != old
    with pytest.raises(PermissionDenied):
        services.feed_key_rotate(schedule_id=schedule.pk, actor=people["alice"])
    mine = services.pager_profile_ensure(user=people["alice"]).feed_key
    assert services.feed_key_rotate(actor=people["alice"]) != mine
    with pytest.raises(PermissionDenied):
        services.feed_key_rotate(user=people["bob"], actor=people["alice"])
    with pytest.raises(PermissionDenied):
        services.feed_key_rotate(actor=people["vic"])
