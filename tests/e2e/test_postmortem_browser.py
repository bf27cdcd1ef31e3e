"""A postmortem in a real browser: a ttft-spike incident is resolved, the responder drafts
its postmortem from the incident page, accepts two suggested action items, gives one an
owner inline, and asks a commander to review; the commander approves in another browser and
publishes; both items then show on the tracking report (open, by owner and category).

Real processes: the live test server on PostgreSQL, headless Debian Chromium, and a small
HTTP server answering like Prometheus so the drafted charts have data to store.
"""

import pytest

from console import roles
from incidents import services as incident_services
from postmortems.models import ActionItem, Postmortem
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in, send_alerts
from tests.payloads import alert
from tests.prometheus_standin import StandInPrometheus

TIMEOUT_MS = 20_000
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
FIRST, SECOND = "Scale earlier on queue depth", "Keep a warm pool"


@pytest.fixture
def live(live_server, settings):
    fake = StandInPrometheus(default=4.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 2
    settings.LIVE_REFRESH_SECONDS = 5
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield live_server
    fake.close()


def test_resolve_draft_accept_review_publish_and_report(live, browser, make_user):
    from playwright.sync_api import expect

    rita = make_user("rita", roles.RESPONDER)
    cara = make_user("cara", roles.COMMANDER)
    incident_id = send_alerts(
        live.url, [alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")], group_key="pm-e2e"
    )
    incident_services.incident_acknowledge(incident_id=incident_id, actor=rita)
    # Its alerts still fire: each move is confirmed, with a reason.
    incident_services.incident_mitigate(
        incident_id=incident_id, actor=rita, reason="scaled out", confirm=True
    )
    incident_services.incident_resolve(
        confirm_no_commander=True, incident_id=incident_id, actor=cara, reason="over", confirm=True
    )

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live.url, "rita")
    page.goto(f"{live.url}/incidents/{incident_id}/")
    panel = page.locator("#incident-postmortem")
    expect(panel.get_by_role("button", name="Draft postmortem")).to_be_visible()
    panel.screenshot(path=str(SHOTS / "postmortem-incident-panel.png"))
    panel.get_by_role("button", name="Draft postmortem").click()
    expect(page).to_have_url(f"{live.url}/postmortems/{Postmortem.objects.get().pk}/")
    pm = Postmortem.objects.get()
    expect(page.get_by_test_id("pm-status")).to_have_text("Draft")
    expect(page.locator("#section-timeline")).to_contain_text("VLLMHighTTFT started firing")
    expect(page.get_by_test_id("durations")).to_contain_text("Time to resolve")
    # The stored golden signals are drawn by the vendored plotly.
    expect(page.locator("[data-testid=snapshot] .main-svg").first).to_be_visible()

    # Blaming wording is flagged next to the section, and saved anyway.
    summary = page.locator("#section-summary")
    summary.get_by_text("Edit summary").click()
    summary.locator("textarea[name=text]").fill("The pool was too small; cara forgot to scale it.")
    summary.get_by_role("button", name="Save summary").click()
    expect(page.locator("#section-summary [data-testid=blameless-warnings]")).to_contain_text(
        "cara forgot"
    )
    expect(page.get_by_test_id("section-summary")).to_contain_text("The pool was too small")

    for title in (FIRST, SECOND):
        page.get_by_role("button", name=f"Accept: {title}").click()
        expect(page.get_by_test_id("item-title").filter(has_text=title)).to_be_visible()
    expect(page.get_by_test_id("action-item")).to_have_count(2)
    expect(page.get_by_role("button", name=f"Accept: {FIRST}")).to_have_count(0)

    # Inline edit (htmx): give the first item an owner; only its row is replaced.
    row = page.get_by_test_id("action-item").filter(has_text=FIRST)
    row.get_by_text("Edit item").click()
    row.locator("select[name=owner]").select_option("rita")
    row.get_by_role("button", name="Save item").click()
    expect(page.get_by_test_id("action-item").filter(has_text=FIRST)).to_contain_text("rita")

    page.get_by_label("Request review from").fill("cara")
    page.get_by_role("button", name="Request review").click()
    expect(page.get_by_test_id("pm-status")).to_have_text("In review")
    expect(page.get_by_test_id("reviewers")).to_contain_text("cara")
    expect(page.locator("[data-testid=snapshot] .main-svg").first).to_be_visible()
    page.screenshot(path=str(SHOTS / "postmortem-document.png"), full_page=True)

    other = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    other.set_default_timeout(TIMEOUT_MS)
    log_in(other, live.url, "cara")
    other.goto(f"{live.url}/postmortems/{pm.pk}/")
    other.get_by_label("Note").fill("Clear timeline, good fixes.")
    other.get_by_role("button", name="Approve").click()
    expect(other.get_by_test_id("reviewers")).to_contain_text("Approved")
    other.get_by_role("button", name="Publish").click()
    expect(other.get_by_test_id("pm-status")).to_have_text("Published")
    expect(other.get_by_test_id("read-only")).to_be_visible()
    expect(other.get_by_test_id("comments")).to_contain_text("Clear timeline, good fixes.")
    other.screenshot(path=str(SHOTS / "postmortem-published.png"), full_page=True)

    page.goto(f"{live.url}/postmortems/{pm.pk}/print/")
    expect(page.get_by_test_id("pm-title")).to_have_text(pm.title)
    expect(page.locator(".main-svg").first).to_be_visible()
    page.emulate_media(media="print")
    page.screenshot(path=str(SHOTS / "postmortem-print.png"), full_page=True)
    page.emulate_media(media="screen")

    assert ActionItem.objects.filter(postmortem=pm, status="open").count() == 2
    # The tracking report counts open items by owner and category (not by title): the
    # accepted automation item owned by rita, and the capacity item nobody owns yet.
    page.goto(f"{live.url}/postmortems/reports/")
    expect(page.get_by_test_id("tile-open")).to_have_text("2")
    owners = page.get_by_test_id("owners")
    by_owner = {
        row.locator("th").text_content().strip(): row.locator("td").all_inner_texts()
        for row in owners.locator("tbody tr").all()
    }
    # monitoring, automation, drill, config, capacity, process | open, in progress, overdue
    assert by_owner == {
        "rita": ["0", "1", "0", "0", "0", "0", "1", "0", "0"],
        "unassigned": ["0", "0", "0", "0", "1", "0", "1", "0", "0"],
    }
    page.screenshot(path=str(SHOTS / "postmortem-reports.png"), full_page=True)

    # The items page lists both open items; the list shows the published postmortem.
    page.goto(f"{live.url}/postmortems/items/?status=open")
    for item in ActionItem.objects.filter(postmortem=pm):
        expect(page.get_by_text(item.title).first).to_be_visible()
    page.screenshot(path=str(SHOTS / "postmortem-items.png"), full_page=True)
    page.goto(f"{live.url}/postmortems/")
    expect(page.get_by_text(pm.title).first).to_be_visible()
    page.screenshot(path=str(SHOTS / "postmortem-list.png"), full_page=True)
