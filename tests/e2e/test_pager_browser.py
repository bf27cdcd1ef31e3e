"""The pager in a real browser (Debian's headless Chromium, Playwright).

An alert arrives by webhook; a real Celery worker (Redis, the test's PostgreSQL) starts
the owning team's escalation and sends the page to ana, on call, through a local ntfy
server. On a phone-sized screen, not signed in, ana opens the page's one-tap link,
taps Acknowledge and sees the confirmation; the worker stops the escalation. Then a
commander, signed in at 1440x900, looks at the team's calendar (two schedules, one with
an override) and at the incident's pager panel: the owning team, who is on call now and
next, and the page with its deliveries.

The README screenshots (docs/screenshot-pager-schedule.png, the calendar at 1440x900,
and docs/screenshot-pager-phone.png, the acknowledge page on a phone) are written when
PAGER_SHOTS=1; every run keeps its screenshots in var/screenshots/.
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests
from django.conf import settings as django_settings
from django.utils import timezone

from console import roles
from incidents.models import Incident
from pager.models import (
    ContactKind,
    Escalation,
    EscalationPolicy,
    EscalationState,
    EscalationStep,
    Ownership,
    Rotation,
    RotationMember,
    Schedule,
    StepAction,
    Team,
)
from pager.schedules.rotation import wall_clock_stored
from pager.schedules.services import override_create
from tests.conftest import TOKEN
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in
from tests.e2e.test_csp_browser import WATCH
from tests.helpers import wait_for
from tests.pager_receivers import NtfyServer, contact, ntfy_url
from tests.payloads import alert, notification

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
TIMEOUT_MS = 20_000
DOCS = django_settings.BASE_DIR / "docs"
ZONE = ZoneInfo("Europe/Berlin")
TOPIC = "ana-pages-7f3k"
ACK_LINK = re.compile(r"https?://\S+?/pager/ack/[^/\s]+/")
PHONE = {"width": 390, "height": 844}


def shot(page, name: str, *, readme: bool = False) -> None:
    """Into var/screenshots/; a README one also into docs/ when PAGER_SHOTS=1."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    if readme and os.environ.get("PAGER_SHOTS") == "1":
        shutil.copy(path, DOCS / f"screenshot-{name}.png")


def last_handoff(now: datetime) -> datetime:
    """The latest Monday 09:00 (Berlin wall clock, naive) at or before `now`."""
    local = now.astimezone(ZONE)
    monday = datetime.combine(local.date() - timedelta(days=local.weekday()), time(9, 0))
    return monday if monday <= local.replace(tzinfo=None) else monday - timedelta(days=7)


def rotation(schedule: Schedule, name: str, starts_at: datetime, people, **extra) -> Rotation:
    made = Rotation.objects.create(
        schedule=schedule, name=name, starts_at=wall_clock_stored(starts_at), **extra
    )
    for position, person in enumerate(people, start=1):
        RotationMember.objects.create(rotation=made, user=person, position=position)
    return made


@pytest.fixture
def serving(make_user):
    """LLM serving owns the simulator's namespace. Primary (weekly, Monday 09:00 Berlin):
    ana this week, then ben, then chen; an override puts dev on it tomorrow 09:00-21:00.
    Secondary (weekly too): ben this week, then chen, then dev. Policy: page Primary, wait
    5 min; page Secondary."""
    people = {name: make_user(name, roles.RESPONDER) for name in ("ana", "ben", "chen", "dev")}
    people["cara"] = make_user("cara", roles.COMMANDER)
    team = Team.objects.create(slug="llm-serving", name="LLM serving")
    team.members.add(*people.values())
    Ownership.objects.create(team=team, namespace="llm-serving")
    handoff = last_handoff(timezone.now())
    primary = Schedule.objects.create(
        team=team, slug="llm-serving-primary", name="Primary", time_zone="Europe/Berlin"
    )
    # Three weeks back, so ana (the fourth turn, back to the first) holds this week.
    rotation(primary, "Weekly", handoff - timedelta(weeks=3),
             [people["ana"], people["ben"], people["chen"]])  # fmt: skip
    secondary = Schedule.objects.create(
        team=team, slug="llm-serving-secondary", name="Secondary", time_zone="Europe/Berlin"
    )
    rotation(secondary, "Weekly", handoff - timedelta(weeks=3),
             [people["ben"], people["chen"], people["dev"]])  # fmt: skip
    tomorrow = timezone.now().astimezone(ZONE).date() + timedelta(days=1)
    override_create(
        schedule_id=primary.pk,
        user_id=people["dev"].pk,
        starts_at=datetime.combine(tomorrow, time(9, 0), tzinfo=ZONE),
        ends_at=datetime.combine(tomorrow, time(21, 0), tzinfo=ZONE),
        actor=people["cara"],
        reason="swap agreed in the team chat",
    )
    policy = EscalationPolicy.objects.create(name="LLM serving", team=team)
    EscalationStep.objects.create(
        policy=policy, position=1, action=StepAction.PAGE_SCHEDULE, schedule=primary,
        wait_minutes=5,
    )  # fmt: skip
    EscalationStep.objects.create(
        policy=policy, position=2, action=StepAction.PAGE_SCHEDULE, schedule=secondary
    )
    team.escalation_policy = policy
    team.save()
    return team, people


@pytest.fixture
def ntfy():
    """ntfy's publish API on a free port (the worker sends to it: its environment admits
    127.0.0.1)."""
    server = NtfyServer()
    yield server
    server.close()


def csp_watch(page) -> list[str]:
    """Content-Security-Policy refusals on `page` from now on (the list fills as they come)."""
    refused: list[str] = []
    page.add_init_script(WATCH)
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else 0)
    return refused


def send_alert(base_url: str) -> int:
    with requests.post(
        base_url + "/api/v1/alerts/alertmanager",
        json=notification([alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")]),
        headers={"Authorization": f"Bearer {TOKEN}", "Connection": "close"},
        timeout=10,
    ) as response:
        assert response.status_code == 200, response.text
        return response.json()["incidents"][0]


def test_phone_ack_link_then_calendar_and_incident_panel(
    live_server,
    browser,
    serving,
    ntfy,
    start_worker,
):
    from playwright.sync_api import expect

    team, people = serving
    contact(people["ana"], ContactKind.NTFY, ntfy_url(ntfy, TOPIC), label="phone")
    contact(people["ana"], ContactKind.EMAIL, "ana@example.com")
    start_worker({
        "OUTGOING_URL_ALLOWLIST": "127.0.0.1/32",  # the local ntfy server
        "NOTIFY_CONSOLE_URL": live_server.url,  # the links in pages
        "PAGER_RETRY_BACKOFF_SECONDS": "0",
    })  # fmt: skip

    # The alert opens an incident; the worker starts the escalation and pages ana.
    incident_id = send_alert(live_server.url)
    message = wait_for(lambda: ntfy.messages[TOPIC], timeout=60, what="ana's push")[0]
    assert f"#{incident_id}:" in message["title"]
    link = ACK_LINK.search(message["message"]).group(0)
    assert link.startswith(live_server.url + "/pager/ack/")

    # On a phone, not signed in: the link shows the incident and one button.
    phone_context = browser.new_context(
        viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True,
        timezone_id="Europe/Berlin", locale="en-GB",
    )  # fmt: skip
    phone = phone_context.new_page()
    phone.set_default_timeout(TIMEOUT_MS)
    refused = csp_watch(phone)
    phone.goto(link)
    card = phone.get_by_test_id("page-ack")
    expect(card).to_contain_text(f"Incident #{incident_id}")
    expect(card).to_contain_text("You were paged as ana.")
    button = phone.get_by_test_id("ack-button")
    expect(button).to_be_visible()
    box = button.bounding_box()
    assert box["width"] <= PHONE["width"]
    assert box["height"] >= 40  # a thumb-sized button
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    shot(phone, "pager-phone", readme=True)
    button.tap()
    expect(phone.get_by_test_id("ack-done")).to_contain_text("Acknowledged by ana.")
    expect(phone.get_by_test_id("ack-done")).to_contain_text("You are the incident commander.")
    expect(phone.get_by_test_id("ack-status")).to_have_text("Acknowledged")
    # The phone's zone is Berlin: the time labelled UTC is in UTC.
    triggered = Incident.objects.get(pk=incident_id).triggered_at
    expect(phone.get_by_test_id("page-ack")).to_contain_text(f"{triggered:%Y-%m-%d %H:%M} UTC")
    assert not refused + phone.evaluate("window.__csp.splice(0)")
    shot(phone, "pager-phone-done")
    phone_context.close()

    # The worker hears the acknowledgement and stops the escalation: step 2 never runs.
    escalation = wait_for(
        lambda: Escalation.objects.filter(
            incident_id=incident_id, state=EscalationState.ACKNOWLEDGED
        ).first(),
        timeout=30, what="the escalation to stop on the acknowledgement",
    )  # fmt: skip
    assert escalation.acknowledged_by == people["ana"]
    assert escalation.next_due_at is None

    # A commander at 1440x900: the team's calendar, with the override among the shifts.
    desk = browser.new_context(
        viewport={"width": 1440, "height": 900}, timezone_id="Europe/Berlin", locale="en-GB"
    )
    page = desk.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    refused = csp_watch(page)
    log_in(page, live_server.url, "cara")
    page.goto(f"{live_server.url}/pager/teams/{team.slug}/")
    calendar = page.get_by_test_id("calendar")
    expect(calendar).to_be_visible()
    shifts = calendar.get_by_test_id("shift")
    expect(shifts.first).to_be_visible()
    assert {shifts.nth(i).get_attribute("data-user") for i in range(shifts.count())} == {
        "ana", "ben", "chen", "dev"
    }  # fmt: skip
    override = calendar.locator('[data-testid="shift"][data-source="override"]')
    expect(override).to_have_count(1)
    expect(override).to_have_attribute("data-user", "dev")
    expect(page.get_by_test_id("oncall").first).to_contain_text("ana")
    expect(page.get_by_test_id("steps")).to_contain_text("Primary")
    shot(page, "pager-schedule", readme=True)

    # The incident page's pager panel: owner, on call now and next, the page and its
    # deliveries (ntfy sent; email not needed), the escalation acknowledged by ana.
    page.goto(f"{live_server.url}/incidents/{incident_id}/")
    panel = page.get_by_test_id("pager-panel")
    expect(panel.get_by_test_id("owner")).to_contain_text("LLM serving")
    expect(panel.get_by_test_id("oncall")).to_contain_text("Primary")
    expect(panel.get_by_test_id("oncall")).to_contain_text("Next:")
    expect(panel.get_by_test_id("escalation")).to_have_attribute("data-state", "acknowledged")
    expect(panel.get_by_test_id("escalation")).to_contain_text("Acknowledged by ana")
    expect(panel.get_by_test_id("page")).to_have_count(1)
    deliveries = panel.get_by_test_id("delivery")
    expect(deliveries).to_have_count(2)
    expect(deliveries.nth(0)).to_have_attribute("data-state", "sent")
    expect(deliveries.nth(1)).to_have_attribute("data-state", "skipped")
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(SHOTS / "pager-incident-panel.png"))
    assert not refused + page.evaluate("window.__csp.splice(0)")
    desk.close()
