"""The incident page fits a laptop screen: at 1440x900 the state, the mitigate/resolve
buttons and the timeline are in view without scrolling, the runbook beside them; the
golden-signal charts load only when their fold is opened; below 1000 px one column."""

import re

import pytest
from django.conf import settings as django_settings

from console import roles
from tests.e2e.conftest import SHOTS
from tests.e2e.test_runbook_browser import TIMEOUT_MS, live, prom, send_alert  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

DOCS = django_settings.BASE_DIR / "docs"

# The charts fold asks Prometheus for six series and draws them: on a loaded 2-CPU CI
# machine that took longer than expect()'s 5 s default.
CHARTS_MS = 20_000


def _in_viewport(box, width: int, height: int) -> bool:
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and box["y"] + box["height"] <= height
    )


def _open_incident(browser, live_url: str, incident_id: int, width: int, height: int):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(live_url + f"/incidents/{incident_id}/")
    if "/login/" in page.url:
        page.fill("#id_username", "rosa")
        page.fill("#id_password", "pw-rosa")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"**/incidents/{incident_id}/")
    return page


def test_incident_page_fits_a_laptop_screen(live, prom, browser, make_user):  # noqa: F811
    from playwright.sync_api import expect

    make_user("rosa", roles.COMMANDER)  # every action offered: the tallest header
    incident_id = send_alert(live.url)
    page = _open_incident(browser, live.url, incident_id, 1440, 900)
    signals = []
    page.on("request", lambda r: "signals" in r.url and signals.append(r.url))
    page.get_by_role("button", name="Acknowledge").click()
    expect(page.locator("#timeline")).to_contain_text("Incident acknowledged.")
    expect(page.locator("#runbook-triage .rb-stepper")).to_be_visible()
    page.wait_for_timeout(300)
    page.screenshot(path=str(DOCS / "screenshot-incident-1440.png"))

    assert page.evaluate("window.scrollY") == 0
    header = page.locator("#incident-header").bounding_box()
    # An acknowledged incident offers Mitigate; Resolve comes once it is mitigated.
    mitigate = page.get_by_role("button", name="Mitigate", exact=True).bounding_box()
    first_event = page.locator("#timeline .ev").first.bounding_box()
    for name, box in (("header", header), ("mitigate", mitigate)):
        assert _in_viewport(box, 1440, 900), (name, box)
    assert _in_viewport(first_event, 1440, 900), first_event
    # The runbook is beside the state and timeline, not below them.
    runbook = page.locator("#runbook-triage").bounding_box()
    assert runbook is not None
    assert runbook["y"] < 900
    assert runbook["x"] >= header["x"] + header["width"]
    assert _in_viewport(page.locator("#runbook-triage .rb-stepper").bounding_box(), 1440, 900)

    # Charts on demand: nothing asked for until their fold is opened.
    assert signals == []
    page.get_by_test_id("signals-fold").locator("summary").click()
    expect(page.locator("#runbook-signals .js-plotly-plot").first).to_be_visible(timeout=CHARTS_MS)
    assert signals

    # Scrolling the panels leaves the state and actions where they are.
    page.mouse.wheel(0, 1500)
    page.wait_for_timeout(200)
    assert page.evaluate("window.scrollY") > 0
    mitigate = page.get_by_role("button", name="Mitigate", exact=True).bounding_box()
    assert _in_viewport(mitigate, 1440, 900)
    assert _in_viewport(page.locator("#timeline-h").bounding_box(), 1440, 900)

    # Mitigated (confirmed, an alert still fires): Resolve is offered, in view as well.
    page.fill('#incident-header input[name="reason"]', "scaled vllm-chat to 6 replicas")
    page.get_by_role("button", name="Mitigate", exact=True).click()
    confirm = page.get_by_test_id("ending-confirm")
    confirm.locator('textarea, input[type="text"]').first.fill("TTFT back under 2 s")
    confirm.get_by_role("button", name="Mitigate anyway").click()
    resolve = page.get_by_role("button", name="Resolve", exact=True)
    expect(resolve).to_be_visible()
    expect(confirm).to_have_count(0)  # the question goes away with the answer
    page.evaluate("window.scrollTo(0, 0)")
    assert _in_viewport(resolve.bounding_box(), 1440, 900)
    # The timeline swaps itself in after the change: measure the one that shows it.
    expect(page.locator("#timeline")).to_contain_text(re.compile("mitigated", re.IGNORECASE))
    expect(page.locator("#timeline .ev").first).to_be_in_viewport()
    page.close()

    wide = _open_incident(browser, live.url, incident_id, 1920, 1080)
    expect(wide.locator("#runbook-triage .rb-stepper")).to_be_visible()
    wide.wait_for_timeout(300)
    wide.screenshot(path=str(DOCS / "screenshot-incident-1920.png"))
    wide.close()

    narrow = _open_incident(browser, live.url, incident_id, 900, 1000)
    header = narrow.locator("#incident-header").bounding_box()
    runbook = narrow.locator("#runbook-triage").bounding_box()
    assert runbook["y"] > header["y"] + header["height"]  # one column: below, not beside
    SHOTS.mkdir(parents=True, exist_ok=True)
    narrow.screenshot(path=str(SHOTS / "incident-900.png"), full_page=True)
    narrow.close()
