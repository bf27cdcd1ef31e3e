"""The schedules part of the pager API: shifts in a range (and its limit), overrides,
taking a shift, swaps, and the imported calendar (an upload as text/calendar or JSON,
its size limit, a calendar that cannot be read). Team and rotation: test_api.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from pager.models import Override, Schedule, ShiftSwap
from tests.unit.pager import test_api as base

pytestmark = pytest.mark.django_db

API = base.API
api_as, people, team = base.api_as, base.people, base.team


def iso(moment: datetime) -> str:
    return moment.isoformat()


@pytest.fixture
def soon() -> tuple[datetime, datetime]:
    """A four-hour window starting tomorrow (whole seconds, as the API echoes them)."""
    start = (timezone.now() + timedelta(days=1)).replace(microsecond=0)
    return start, start + timedelta(hours=4)


@pytest.fixture
def commander(api_as, team):
    return api_as(roles.COMMANDER, "mia")


def as_member(team, name: str) -> APIClient:
    """A client for one of the team's people (the `people` fixture made them)."""
    user = team.members.get(username=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    client.user = user
    return client


# --- shifts -----------------------------------------------------------------------------------
def test_shifts_in_a_range(api_as, team):
    r = api_as(roles.VIEWER).get(
        API + "schedules/primary/shifts/",
        {"start": "2026-03-01T00:00:00Z", "end": "2026-03-15T00:00:00Z"},
    )
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["schedule"], body["start"], body["end"]) == (
        "primary", "2026-03-01T00:00:00Z", "2026-03-15T00:00:00Z"
    )  # fmt: skip
    assert [(s["user"], s["starts_at"], s["ends_at"]) for s in body["shifts"]] == [
        ("bob", "2026-03-01T00:00:00Z", "2026-03-02T09:00:00Z"),
        ("alice", "2026-03-02T09:00:00Z", "2026-03-09T09:00:00Z"),
        ("bob", "2026-03-09T09:00:00Z", "2026-03-15T00:00:00Z"),
    ]
    # A date alone is midnight in TIME_ZONE; without an end, a week.
    r = api_as(roles.VIEWER, "v2").get(API + "schedules/primary/shifts/", {"start": "2026-03-01"})
    assert r.json()["end"] == "2026-03-08T00:00:00Z"


def test_shifts_refuse_a_range_too_long_or_backwards(api_as, team):
    client = api_as(roles.VIEWER)
    url = API + "schedules/primary/shifts/"
    r = client.get(url, {"start": "2026-01-01T00:00:00Z", "end": "2026-03-15T00:00:00Z"})
    assert r.status_code == 400
    assert "62 days" in r.json()["end"][0]
    r = client.get(url, {"start": "2026-03-15T00:00:00Z", "end": "2026-03-01T00:00:00Z"})
    assert r.status_code == 400
    assert "end" in r.json()
    for bad in ("tomorrow", "9999-12-31T23:00:00Z", "0001-01-01"):
        r = client.get(url, {"start": bad})
        assert r.status_code == 400, bad
        assert "start" in r.json()
    assert client.get(API + "schedules/nope/shifts/").status_code == 404


# --- overrides --------------------------------------------------------------------------------
def test_commander_puts_someone_on_call_and_cancels_it(commander, team, soon):
    start, end = soon
    r = commander.post(
        API + "schedules/primary/overrides/",
        {"user": "carol", "starts_at": iso(start), "ends_at": iso(end), "reason": "cover"},
        format="json",
    )
    assert r.status_code == 201, r.content
    shown = r.json()
    assert (shown["user"], shown["source"], shown["reason"], shown["created_by"]) == (
        "carol", "override", "cover", "mia"
    )  # fmt: skip
    assert shown["replaces"] in ("alice", "bob")
    shifts = commander.get(
        API + "schedules/primary/shifts/", {"start": iso(start), "end": iso(end)}
    ).json()["shifts"]
    assert [(s["user"], s["source"]) for s in shifts] == [("carol", "override")]
    r = commander.delete(f"{API}overrides/{shown['id']}/")
    assert r.status_code == 200, r.content
    assert r.json()["cancelled_at"] is not None
    r = commander.delete(f"{API}overrides/{shown['id']}/")
    assert r.status_code == 409
    assert "already cancelled" in r.json()["detail"]


def test_override_input_errors_name_the_problem(commander, team, soon):
    start, end = soon
    url = API + "schedules/primary/overrides/"
    r = commander.post(url, {"user": "ghost", "starts_at": iso(start), "ends_at": iso(end)},
                       format="json")  # fmt: skip
    assert r.status_code == 400
    assert "ghost" in r.json()["user"][0]
    r = commander.post(url, {"user": "carol", "starts_at": iso(end), "ends_at": iso(start)},
                       format="json")  # fmt: skip
    assert r.status_code == 400
    assert r.json()["code"] == "invalid"
    assert "end must be after" in r.json()["detail"]
    later = iso(start + timedelta(days=40))
    too_long = {"user": "carol", "starts_at": iso(start), "ends_at": later}
    r = commander.post(url, too_long, format="json")
    assert r.status_code == 400
    assert "31 days" in r.json()["detail"]
    r = commander.post(url, {"user": "carol"}, format="json")
    assert r.status_code == 400
    assert {"starts_at", "ends_at"} <= set(r.json())
    r = commander.post(url, "not json", content_type="application/json")
    assert r.status_code == 400
    assert commander.delete(f"{API}overrides/{2**63}/").status_code == 404
    assert not Override.objects.exists()


# --- take and swaps ---------------------------------------------------------------------------
def test_a_member_takes_a_shift(api_as, team, soon):
    start, end = soon
    carol = as_member(team, "carol")
    r = carol.post(API + "schedules/primary/take/",
                   {"starts_at": iso(start), "ends_at": iso(end), "reason": "swapped days"},
                   format="json")  # fmt: skip
    assert r.status_code == 201, r.content
    assert (r.json()["user"], r.json()["source"]) == ("carol", "take")
    # Her own take she may end herself.
    assert carol.delete(f"{API}overrides/{r.json()['id']}/").status_code == 200
    outsider = api_as(roles.RESPONDER, "erin")
    r = outsider.post(API + "schedules/primary/take/",
                      {"starts_at": iso(start), "ends_at": iso(end)}, format="json")  # fmt: skip
    assert r.status_code == 400
    assert "not a member" in r.json()["detail"]


def test_swap_asked_accepted_and_cancelled(api_as, commander, team, soon):
    start, end = soon
    # Put alice on call for the window first, so she has time to give away.
    commander.post(API + "schedules/primary/overrides/",
                   {"user": "alice", "starts_at": iso(start), "ends_at": iso(end)},
                   format="json")  # fmt: skip
    alice, bob = as_member(team, "alice"), as_member(team, "bob")
    r = alice.post(API + "schedules/primary/swaps/",
                   {"starts_at": iso(start), "ends_at": iso(end), "note": "dentist"},
                   format="json")  # fmt: skip
    assert r.status_code == 201, r.content
    swap = r.json()
    assert (swap["requester"], swap["state"], swap["note"]) == ("alice", "open", "dentist")
    r = alice.post(f"{API}swaps/{swap['id']}/accept/")
    assert r.status_code == 400
    assert "own swap" in r.json()["detail"]
    r = bob.post(f"{API}swaps/{swap['id']}/accept/")
    assert r.status_code == 200, r.content
    assert (r.json()["state"], r.json()["taker"]) == ("accepted", "bob")
    assert r.json()["override"] is not None
    r = bob.post(f"{API}swaps/{swap['id']}/accept/")
    assert r.status_code == 409
    r = alice.post(f"{API}swaps/{swap['id']}/cancel/")
    assert r.status_code == 200
    assert r.json()["state"] == "cancelled"
    assert ShiftSwap.objects.get().state == "cancelled"
    assert bob.post(f"{API}swaps/{2**63}/cancel/").status_code == 404
    # Time alice is not on call for (bob's override) cannot be given away.
    later = start + timedelta(days=3)
    bobs = {"starts_at": iso(later), "ends_at": iso(later + timedelta(hours=1))}
    commander.post(API + "schedules/primary/overrides/", {"user": "bob", **bobs}, format="json")
    r = alice.post(API + "schedules/primary/swaps/", bobs, format="json")
    assert r.status_code == 400
    assert "on call for" in r.json()["detail"]


# --- the imported calendar --------------------------------------------------------------------
def calendar(*events: tuple[str, datetime, datetime]) -> str:
    def stamp(moment: datetime) -> str:
        return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")

    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//pager//EN"]
    for n, (summary, start, end) in enumerate(events):
        lines += ["BEGIN:VEVENT", f"UID:event-{n}@tests", f"DTSTAMP:{stamp(start)}",
                  f"DTSTART:{stamp(start)}", f"DTEND:{stamp(end)}", f"SUMMARY:{summary}",
                  "END:VEVENT"]  # fmt: skip
    return "\r\n".join([*lines, "END:VCALENDAR", ""])


def test_calendar_upload_as_text_calendar_or_json(commander, team, soon):
    start, end = soon
    text = calendar(("carol", start, end), ("nobody-here", start, end))
    r = commander.post(API + "schedules/primary/ical/", text, content_type="text/calendar")
    assert r.status_code == 200, r.content
    assert r.json()["schedule"] == "primary"
    [problem] = r.json()["problems"]
    assert "nobody-here" in problem
    assert "carol" in Schedule.objects.get(slug="primary").ical_text
    r = commander.post(API + "schedules/primary/ical/",
                       {"ical": calendar(("carol", start, end))}, format="json")  # fmt: skip
    assert r.status_code == 200
    assert r.json()["problems"] == []


def test_calendar_upload_refusals(commander, team, settings):
    url = API + "schedules/primary/ical/"
    r = commander.post(url, "this is not a calendar", content_type="text/calendar")
    assert r.status_code == 400
    assert r.json()["code"] == "ical_invalid"
    assert commander.post(url, {}, format="json").status_code == 400
    settings.PAGER_ICAL_MAX_BYTES = 100
    r = commander.post(url, "BEGIN:VCALENDAR\r\n" + "X" * 200, content_type="text/calendar")
    assert r.status_code == 413
    assert "100 bytes" in r.json()["detail"]
    r = commander.post(url, "x", content_type="application/xml")
    assert r.status_code == 415
    assert (
        commander.post(API + "schedules/nope/ical/", {"ical": "x"}, format="json").status_code
        == 404
    )


def test_calendar_refresh_says_what_happened(commander, team):
    r = commander.post(API + "schedules/primary/ical/refresh/")
    assert r.status_code == 200
    assert "no iCal URL" in r.json()["outcome"]
