"""The pager's pages with Django's test client: who may see and do what per role, the
empty states that say what to configure, the forms (take a shift, overrides, swaps,
contact methods, heartbeats), the calendar across a daylight-saving change, and
escaping. Writes go through the real services; rows a page only reads are made
directly."""

from __future__ import annotations

import re
import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.utils import timezone

from console import roles
from console.viewer import TZ_COOKIE
from pager.heartbeats.services import token_hash
from pager.models import (
    ContactMethod,
    EscalationPolicy,
    EscalationStep,
    Heartbeat,
    Override,
    OverrideSource,
    Rotation,
    RotationMember,
    Schedule,
    ShiftSwap,
    StepAction,
    SwapState,
    Team,
)
from pager.schedules.rotation import wall_clock_stored

pytestmark = pytest.mark.django_db
# A rotation stores its first handoff as a wall-clock time (Monday 2 November, 09:00).
FIRST_HANDOFF = wall_clock_stored(datetime(2026, 11, 2, 9))  # noqa: DTZ001
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.fixture
def people(make_user):
    return {
        "vic": make_user("vic", roles.VIEWER),
        "rita": make_user("rita", roles.RESPONDER),
        "ron": make_user("ron", roles.RESPONDER),
        "cara": make_user("cara", roles.COMMANDER),
        "ada": make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True),
    }


@pytest.fixture
def team(people):
    """Team Serving: rita and ron take weekly turns on Primary (Europe/Berlin), from a
    Monday 09:00 well before today; a policy pages who is on call, then cara."""
    team = Team.objects.create(slug="serving", name="Serving")
    team.members.add(people["rita"], people["ron"], people["cara"])
    schedule = Schedule.objects.create(
        team=team, slug="serving-primary", name="Primary", time_zone="Europe/Berlin"
    )
    rotation = Rotation.objects.create(schedule=schedule, name="Weekly", starts_at=FIRST_HANDOFF)
    RotationMember.objects.create(rotation=rotation, user=people["rita"], position=1)
    RotationMember.objects.create(rotation=rotation, user=people["ron"], position=2)
    policy = EscalationPolicy.objects.create(name="Serving policy", team=team, repeat_times=1)
    EscalationStep.objects.create(
        policy=policy, position=1, action=StepAction.PAGE_SCHEDULE, schedule=schedule,
        wait_minutes=10, severities=["SEV1", "SEV2"],
    )  # fmt: skip
    EscalationStep.objects.create(
        policy=policy, position=2, action=StepAction.PAGE_USER, user=people["cara"]
    )
    team.escalation_policy = policy
    team.save()
    return team


def login(client, user):
    client.force_login(user)
    return client


# --- who may see what ----------------------------------------------------------------------
PAGES = ["/pager/", "/pager/teams/serving/", "/pager/pages/", "/pager/heartbeats/"]


@pytest.mark.parametrize("who", ["vic", "rita", "cara"])
def test_every_role_sees_the_pager_pages(client, people, team, who):
    login(client, people[who])
    for url in PAGES:
        assert client.get(url).status_code == 200, url


def test_my_on_call_is_for_responders_and_up(client, people, team):
    assert login(client, people["vic"]).get("/pager/me/").status_code == 403
    for who in ("rita", "cara"):
        assert login(client, people[who]).get("/pager/me/").status_code == 200


def test_signed_out_goes_to_the_login_and_no_role_is_refused(client, make_user, team):
    response = client.get("/pager/")
    assert response.status_code == 302
    assert "/login/" in response["Location"]
    login(client, make_user("nobody", role=None))
    assert client.get("/pager/").status_code == 403


def test_unknown_team_is_404(client, people):
    assert login(client, people["vic"]).get("/pager/teams/nope/").status_code == 404


def test_viewers_cannot_write_and_responders_cannot_manage(client, people, team):
    schedule = team.schedules.get()
    login(client, people["vic"])
    assert client.post("/pager/teams/serving/take/", {"schedule": schedule.pk}).status_code == 403
    assert client.post("/pager/me/methods/", {"kind": "email"}).status_code == 403
    login(client, people["rita"])
    form = {"schedule": schedule.pk, "user": people["ron"].pk, "from": "2027-01-04T09:00",
            "until": "2027-01-04T17:00", "zone": "Europe/Berlin"}  # fmt: skip
    assert client.post("/pager/teams/serving/overrides/", form).status_code == 403
    assert client.post("/pager/heartbeats/", {"name": "cron"}).status_code == 403
    assert not Override.objects.exists()
    assert not Heartbeat.objects.exists()


# --- empty states --------------------------------------------------------------------------
def test_no_team_says_what_to_add_and_where(client, people):
    body = text(login(client, people["ada"]).get("/pager/"))
    assert "No team is set up yet, so nobody is paged." in body
    assert 'href="/admin/pager/team/add/"' in body
    assert 'href="/admin/pager/schedule/add/"' in body
    assert 'href="/admin/pager/escalationpolicy/add/"' in body
    body = text(login(client, people["vic"]).get("/pager/"))
    assert "Ask an admin to add a team" in body
    assert "/admin/" not in body


def test_empty_pages_heartbeats_and_methods(client, people):
    login(client, people["rita"])
    assert "Nobody can be paged until an admin adds a team" in text(client.get("/pager/pages/"))
    assert "No heartbeat yet." in text(client.get("/pager/heartbeats/"))
    body = text(client.get("/pager/me/"))
    assert "You have no contact method" in body
    assert "You are not on call in the next 14 days." in body


def test_team_without_schedule_or_policy(client, people):
    Team.objects.create(slug="bare", name="Bare")
    body = text(login(client, people["ada"]).get("/pager/teams/bare/"))
    assert "This team has no schedule yet." in body
    assert 'href="/admin/pager/schedule/add/"' in body
    assert "No escalation policy: incidents this team owns page nobody." in body


# --- the teams page and a team's page ---------------------------------------------------
def test_teams_page_shows_who_is_on_call_now_and_next(client, people, team):
    body = text(login(client, people["vic"]).get("/pager/"))
    assert "Serving" in body
    assert "Primary" in body
    # Weekly turns from Monday 2 November: rita, ron, rita, ron, rita (30 Nov - 7 Dec).
    assert re.search(r'pg-who">rita</span> <span class="pg-when">until Mon 7 Dec 09:00', body)
    assert "Next: <strong>ron</strong> from Mon 7 Dec 09:00" in body
    assert "Serving policy" in body


def test_team_page_policy_in_words(client, people, team):
    body = text(login(client, people["vic"]).get("/pager/teams/serving/"))
    assert "Page who is on call for Primary (only for SEV1, SEV2), then wait 10 minutes" in body
    assert "Page cara" in body
    assert "After the last step, the steps run once more." in body


def test_times_follow_the_browser_zone_else_the_schedule(client, people, team):
    login(client, people["vic"])
    client.cookies[TZ_COOKIE] = "Asia/Shanghai"
    body = text(client.get("/pager/"))
    assert "Times in Asia/Shanghai" in body
    assert "until Mon 7 Dec 16:00" in body
    del client.cookies[TZ_COOKIE]
    body = text(client.get("/pager/"))
    assert "each schedule's own time zone" in body
    assert "until Mon 7 Dec 09:00 (Europe/Berlin)" in body


def test_escaping_team_and_schedule_names(client, people):
    evil = Team.objects.create(slug="evil", name="<script>alert(1)</script>")
    Schedule.objects.create(team=evil, slug="evil-s", name="<img src=x onerror=alert(2)>")
    login(client, people["vic"])
    for url in ("/pager/", "/pager/teams/evil/"):
        body = client.get(url).content.decode()
        assert "<script>alert(1)" not in body
        assert "<img src=x" not in body
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


# --- the calendar ---------------------------------------------------------------------------
def _blocks(body: str, day: str) -> list[str]:
    """The class lists of the shift blocks in one day cell."""
    cell = re.search(rf'data-day="{day}"[^>]*>(.*?)</div>', body, re.S)
    assert cell is not None, day
    return re.findall(r'class="(blk [^"]*)"', cell.group(1))


def test_calendar_places_a_shift_across_the_autumn_change(client, people):
    """22:00-06:00 across 25 October 2026 in Berlin (the clocks go back at 03:00): the
    block ends at 24:00 on the 24th and runs 00:00-06:00 on the 25th, on wall-clock time."""
    team = Team.objects.create(slug="night", name="Night")
    schedule = Schedule.objects.create(
        team=team, slug="night-s", name="Nights", time_zone="Europe/Berlin"
    )
    Override.objects.create(
        schedule=schedule, user=people["rita"], source=OverrideSource.OVERRIDE,
        starts_at=datetime(2026, 10, 24, 22, 0, tzinfo=BERLIN),
        ends_at=datetime(2026, 10, 25, 6, 0, tzinfo=BERLIN),
    )  # fmt: skip
    assert Override.objects.get().ends_at - Override.objects.get().starts_at == timedelta(hours=9)
    login(client, people["vic"])
    client.cookies[TZ_COOKIE] = "Europe/Berlin"
    body = client.get("/pager/teams/night/?start=2026-10-19").content.decode()
    assert "Mon 19 Oct" in body
    assert "Sun 1 Nov" in body
    (first,) = _blocks(body, "2026-10-24")
    assert "gs-88" in first
    assert "ge-96" in first
    assert "cont-after" in first
    (second,) = _blocks(body, "2026-10-25")
    assert "gs-0 " in second
    assert "ge-24" in second
    assert "cont-before" in second
    assert "src-override" in first
    assert "src-override" in second
    assert _blocks(body, "2026-10-26") == []
    assert "rita: Sat 24 Oct 22:00 \u2013 Sun 25 Oct 06:00 · override" in body


def test_calendar_weeks_colours_legend_and_take_links(client, people, team):
    login(client, people["ron"])
    body = client.get("/pager/teams/serving/?start=2026-11-30").content.decode()
    assert "Mon 30 Nov" in body
    assert "Sun 13 Dec" in body
    assert "?start=2026-11-23#calendar" in body
    assert "?start=2026-12-07#calendar" in body
    # ron (until Monday 09:00) then rita: a colour each, in the legend
    assert re.search(r'blk pc-0" aria-hidden="true"></span>ron', body)
    assert re.search(r'blk pc-1" aria-hidden="true"></span>rita', body)
    # a shift past the window's end keeps its real end
    assert "ron: Mon 7 Dec 09:00 \u2013 Mon 14 Dec 09:00" in body
    # rita's shift: ron may take it; ron's own: a swap request
    assert "take=" in body
    assert "from=2026-11-30T09%3A00" in body
    assert "swap=" in body
    # the clicked block fills in the form
    schedule = team.schedules.get()
    page = client.get(
        f"/pager/teams/serving/?take={schedule.pk}&from=2026-12-05T18:00&until=2026-12-07T09:00"
    ).content.decode()
    assert 'value="2026-12-05T18:00"' in page
    assert 'value="2026-12-07T09:00"' in page
    assert client.get("/pager/teams/serving/?start=garbage").status_code == 200


# --- shifts: take, overrides, swaps ---------------------------------------------------------
def test_take_a_shift(client, people, team):
    schedule = team.schedules.get()
    login(client, people["ron"])
    response = client.post(
        "/pager/teams/serving/take/",
        {
            "schedule": schedule.pk,
            "from": "2026-12-05T20:00",
            "until": "2026-12-06T08:00",
            "zone": "Europe/Berlin",
            "reason": "rita is ill",
        },
        follow=True,
    )
    assert "You are on call for that time" in text(response)
    take = Override.objects.get()
    assert take.source == OverrideSource.TAKE
    assert take.user == people["ron"]
    assert take.replaces == people["rita"]
    assert take.starts_at == datetime(2026, 12, 5, 19, 0, tzinfo=UTC)
    client.cookies[TZ_COOKIE] = "Europe/Berlin"
    body = client.get("/pager/teams/serving/").content.decode()
    assert re.search(r'class="blk pc-\d src-take gs-80 ge-96', body)
    assert "covers for rita" in body
    # ron may end his own take
    response = client.post(f"/pager/teams/serving/overrides/{take.pk}/cancel/", follow=True)
    assert "Override cancelled" in text(response)


def test_take_refused_says_why_and_keeps_the_form(client, people, team):
    schedule = team.schedules.get()
    login(client, people["ron"])
    response = client.post(
        "/pager/teams/serving/take/",
        {
            "schedule": schedule.pk,
            "from": "2026-12-06T08:00",
            "until": "2026-12-05T20:00",
            "zone": "Europe/Berlin",
        },
    )
    assert response.status_code == 302
    assert "take=" in response["Location"]
    assert "from=2026-12-06T08%3A00" in response["Location"]
    body = text(client.get(response["Location"]))
    assert "The end must be after the start." in body
    assert 'value="2026-12-06T08:00"' in body
    response = client.post("/pager/teams/serving/take/", {"schedule": schedule.pk, "from": "x"})
    assert "Enter the start as a date and time" in text(client.get(response["Location"]))
    assert not Override.objects.exists()


def test_override_create_and_cancel(client, people, team):
    schedule = team.schedules.get()
    login(client, people["cara"])
    body = text(client.get("/pager/teams/serving/"))
    assert "Add an override" in body
    assert f'<option value="{people["ron"].pk}">ron</option>' in body
    assert "vic</option>" not in body  # not a member of the team
    response = client.post(
        "/pager/teams/serving/overrides/",
        {
            "schedule": schedule.pk,
            "user": people["ron"].pk,
            "from": "2026-12-10T09:00",
            "until": "2026-12-10T17:00",
            "zone": "Europe/Berlin",
            "reason": "cover",
        },
        follow=True,
    )
    assert "Override added" in text(response)
    override = Override.objects.get()
    assert override.source == OverrideSource.OVERRIDE
    assert override.user == people["ron"]
    assert 'data-testid="override"' in response.content.decode()
    response = client.post(f"/pager/teams/serving/overrides/{override.pk}/cancel/", follow=True)
    assert "Override cancelled" in text(response)
    override.refresh_from_db()
    assert override.cancelled_at is not None


def test_schedule_feed_and_its_new_address(client, people, team):
    schedule = team.schedules.get()
    login(client, people["rita"])
    assert "/pager/feeds/schedule/" not in client.get("/pager/teams/serving/").content.decode()
    url = f"/pager/teams/serving/schedules/{schedule.pk}/feed/"
    assert client.post(url).status_code == 403
    login(client, people["cara"])
    body = client.get("/pager/teams/serving/").content.decode()
    assert f"http://testserver/pager/feeds/schedule/{schedule.feed_key}.ics" in body
    response = client.post(url, follow=True)
    assert "calendar feed has a new address: the old one no longer works" in text(response)
    old = schedule.feed_key
    schedule.refresh_from_db()
    assert schedule.feed_key != old
    assert client.get(f"/pager/feeds/schedule/{schedule.feed_key}.ics").status_code == 200
    assert client.get(f"/pager/feeds/schedule/{old}.ics").status_code == 404


def test_ical_import_error_says_what_to_fix(client, people, team):
    Schedule.objects.filter(team=team).update(
        ical_url="https://cal.example.com/x.ics", ical_error="cal.example.com answered HTTP 403"
    )
    body = text(login(client, people["ada"]).get("/pager/teams/serving/"))
    assert "The imported calendar could not be read: cal.example.com answered HTTP 403" in body
    assert "/admin/pager/schedule/" in body


def test_maintenance_window_create_and_cancel(client, people, team):
    login(client, people["cara"])
    response = client.post(
        "/pager/teams/serving/windows/",
        {
            "name": "Driver upgrade",
            "from": "2026-12-08T22:00",
            "until": "2026-12-09T02:00",
            "zone": "Europe/Berlin",
            "recurrence": "",
            "reason": "CUDA 12.8",
        },
        follow=True,
    )
    assert "Maintenance window added" in text(response)
    body = text(response)
    assert "Driver upgrade" in body
    assert "upcoming" in body
    window = team.windows.get()
    assert window.time_zone == "Europe/Berlin"
    response = client.post(f"/pager/teams/serving/windows/{window.pk}/cancel/", follow=True)
    assert "Maintenance window cancelled" in text(response)
    assert "No maintenance window now or coming up." in text(response)
    login(client, people["rita"])
    assert client.post("/pager/teams/serving/windows/", {"name": "x"}).status_code == 403


def test_swap_request_accept_and_cancel(client, people, team):
    schedule = team.schedules.get()
    login(client, people["rita"])  # rita is on call until Mon 7 Dec 09:00
    response = client.post(
        "/pager/teams/serving/swaps/",
        {
            "schedule": schedule.pk,
            "from": "2026-12-06T09:00",
            "until": "2026-12-06T21:00",
            "zone": "Europe/Berlin",
            "note": "wedding",
        },
        follow=True,
    )
    assert "Swap requested" in text(response)
    swap = ShiftSwap.objects.get()
    body = text(response)
    assert "wedding" in body
    assert "Cancel request" in body
    assert "Accept: I will cover it" not in body
    login(client, people["ron"])
    assert "Accept: I will cover it" in text(client.get("/pager/teams/serving/"))
    response = client.post(f"/pager/teams/serving/swaps/{swap.pk}/accept/", follow=True)
    assert "Swap accepted" in text(response)
    swap.refresh_from_db()
    assert swap.state == SwapState.ACCEPTED
    assert swap.taker == people["ron"]
    assert swap.override.source == OverrideSource.SWAP
    # a second request, cancelled by its requester
    login(client, people["rita"])
    client.post(
        "/pager/teams/serving/swaps/",
        {
            "schedule": schedule.pk,
            "from": "2026-12-06T22:00",
            "until": "2026-12-07T06:00",
            "zone": "Europe/Berlin",
        },
    )
    second = ShiftSwap.objects.get(state=SwapState.OPEN)
    response = client.post(f"/pager/teams/serving/swaps/{second.pk}/cancel/", follow=True)
    assert "Swap request cancelled." in text(response)


# --- my on-call -----------------------------------------------------------------------------
def test_contact_methods_add_test_move_delete(client, people, team):
    login(client, people["rita"])
    response = client.post(
        "/pager/me/methods/",
        {"kind": "email", "address": "rita.ramos@example.com", "label": "work"},
        follow=True,
    )
    assert "Contact method added" in text(response)
    client.post("/pager/me/methods/", {"kind": "email", "address": "rr-home@example.org"})
    first, second = ContactMethod.objects.filter(user=people["rita"]).order_by("position")
    body = client.get("/pager/me/").content.decode()
    # never shown back in full
    assert "rita.ramos@example.com" not in body
    assert "rr-home@example.org" not in body
    assert "r…@example.com" in body
    assert "Never tested." in body
    # test
    response = client.post(f"/pager/me/methods/{first.pk}/test/", follow=True)
    assert "Test sent" in text(response)
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["rita.ramos@example.com"]
    first.refresh_from_db()
    assert first.last_test_at is not None
    assert "Last test" in text(response)
    assert first.last_test_result[:20] in text(response)
    # move the second up
    response = client.post(f"/pager/me/methods/{second.pk}/move/", {"direction": "up"}, follow=True)
    assert "Order saved" in text(response)
    assert list(
        ContactMethod.objects.filter(user=people["rita"])
        .order_by("position")
        .values_list("pk", flat=True)
    ) == [second.pk, first.pk]
    # edit without an address keeps it; delete
    client.post(f"/pager/me/methods/{first.pk}/", {"kind": "email", "label": "desk", "address": ""})
    first.refresh_from_db()
    assert first.label == "desk"
    assert first.address == "rita.ramos@example.com"
    assert not first.enabled  # the checkbox was not sent
    response = client.post(f"/pager/me/methods/{first.pk}/delete/", follow=True)
    assert "Contact method removed." in text(response)
    assert ContactMethod.objects.filter(user=people["rita"]).count() == 1


def test_contact_method_refused_says_what_to_do(client, people):
    login(client, people["rita"])
    response = client.post("/pager/me/methods/", {"kind": "email", "address": "nope"}, follow=True)
    assert "is not an email address; for example alice@example.com" in text(response)
    assert not ContactMethod.objects.exists()


def test_someone_elses_method_is_not_mine(client, people):
    ContactMethod.objects.create(user=people["ron"], position=1, kind="email", address="r@x.io")
    method = ContactMethod.objects.get()
    login(client, people["rita"])
    assert client.post(f"/pager/me/methods/{method.pk}/delete/").status_code == 403
    assert client.post(f"/pager/me/methods/{method.pk}/test/").status_code == 403
    assert (
        client.post(f"/pager/me/methods/{method.pk}/move/", {"direction": "up"}).status_code == 404
    )
    assert ContactMethod.objects.filter(pk=method.pk).exists()
    assert not mail.outbox


def test_my_shifts_feed_and_zone(client, people, team):
    login(client, people["rita"])
    body = text(client.get("/pager/me/"))
    assert "Make my feed address" in body
    assert "Sat 5 Dec" in body or "Mon 7 Dec" in body  # her current shift, in the next 14 days
    response = client.post("/pager/me/feed/", follow=True)
    assert "Your calendar feed has a new address" in text(response)
    key = people["rita"].pager_profile.feed_key
    assert f"/pager/feeds/person/{key}.ics" in response.content.decode()
    client.post("/pager/me/feed/")
    people["rita"].pager_profile.refresh_from_db()
    assert people["rita"].pager_profile.feed_key != key
    response = client.post("/pager/me/zone/", {"time_zone": "Asia/Shanghai"}, follow=True)
    assert "Time zone saved." in text(response)
    people["rita"].pager_profile.refresh_from_db()
    assert people["rita"].pager_profile.time_zone == "Asia/Shanghai"
    # no browser zone: the pages use the saved one
    assert "Times in Asia/Shanghai (your pager time zone)" in text(client.get("/pager/"))
    response = client.post("/pager/me/zone/", {"time_zone": "Mars/Olympus"}, follow=True)
    assert "Unknown time zone" in text(response)


# --- heartbeats -----------------------------------------------------------------------------
def test_heartbeat_create_shows_the_token_once(client, people, team):
    login(client, people["cara"])
    response = client.post(
        "/pager/heartbeats/",
        {"name": "Nightly export", "team": team.pk, "interval": "3600", "grace": "300"},
    )
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    token = re.search(r'data-testid="token">([^<]+)<', response.content.decode()).group(1)
    heartbeat = Heartbeat.objects.get(name="Nightly export")
    assert heartbeat.token_hash == token_hash(token)
    body = text(response)
    assert f'curl -fsS -X POST -H "Authorization: Bearer {token}"' in body
    assert f"/api/v1/pager/heartbeats/{heartbeat.slug}/beat" in body
    again = client.get("/pager/heartbeats/").content.decode()
    assert token not in again
    assert "Nightly export" in again
    assert "Copy the token now" not in again


def test_heartbeat_create_refused_keeps_the_form(client, people):
    login(client, people["cara"])
    response = client.post("/pager/heartbeats/", {"name": "probe", "interval": "5"})
    assert response.status_code == 400
    body = text(response)
    assert "The interval must be between" in body
    assert 'value="probe"' in body
    assert not Heartbeat.objects.exists()


def test_watchdog_replicas_are_rows_of_their_own(client, people):
    for n in (0, 1):
        Heartbeat.objects.create(
            slug=f"alertmanager-{n}", name=f"Alertmanager {n}", kind="watchdog",
            source=f"http://alertmanager-{n}.monitoring:9093", last_seen_at=timezone.now(),
            state="ok",
        )  # fmt: skip
    body = text(login(client, people["vic"]).get("/pager/heartbeats/"))
    assert body.count('data-kind="watchdog"') == 2
    assert "http://alertmanager-1.monitoring:9093" in body
    assert "Add an HTTP heartbeat" not in body  # viewers only read


def test_teams_page_queries_do_not_grow_with_teams(
    client, people, team, django_assert_max_num_queries
):
    login(client, people["vic"])
    client.get("/pager/")  # warm: sessions, content types
    with django_assert_max_num_queries(30) as few:
        client.get("/pager/")
    for n in range(4):
        more = Team.objects.create(slug=f"t{n}", name=f"Team {n}")
        Schedule.objects.create(team=more, slug=f"t{n}-s", name="Primary")
    with django_assert_max_num_queries(len(few.captured_queries)):
        body = client.get("/pager/").content.decode()
    assert body.count('data-testid="team-card"') == 5
