"""The runbook part of the incident page in a real browser (Debian's headless Chromium
driven by Playwright): the stepper, the highlighted decision branch and a plotly chart of
a golden signal, against a stand-in Prometheus that answers instant and range queries."""

import pytest
import requests
from django.core.cache import cache

from console import roles
from tests.conftest import TOKEN
from tests.e2e.conftest import SHOTS
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus
from tests.unit.runbooks.test_pages import TTFT_ALL_RED

TIMEOUT_MS = 20_000

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(TTFT_ALL_RED, default=1.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 2
    cache.clear()
    yield fake
    fake.close()
    cache.clear()


@pytest.fixture
def live(live_server, settings):
    settings.LIVE_REFRESH_SECONDS = 30  # the partial polls; keep it still for screenshots
    SHOTS.mkdir(parents=True, exist_ok=True)
    return live_server


def send_alert(base_url: str) -> int:
    with requests.post(
        base_url + "/api/v1/alerts/alertmanager",
        json=notification([alert()]),
        headers={"Authorization": f"Bearer {TOKEN}", "Connection": "close"},
        timeout=10,
    ) as response:
        assert response.status_code == 200, response.text
        return response.json()["incidents"][0]


def test_incident_page_shows_runbook_stepper_branch_and_charts(live, prom, browser, make_user):
    from playwright.sync_api import expect

    make_user("rosa", roles.RESPONDER)
    incident_id = send_alert(live.url)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    failed = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(live.url + f"/incidents/{incident_id}/")
    assert "/login/" in page.url
    page.fill("#id_username", "rosa")
    page.fill("#id_password", "pw-rosa")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"**/incidents/{incident_id}/")

    stepper = page.locator("#runbook-triage .rb-stepper")
    expect(stepper).to_be_visible()
    for step in ("Symptom", "Triage", "Root cause", "Fix", "Long-term"):
        expect(stepper).to_contain_text(step)
    matched = page.locator('[data-testid="matched-branch"]')
    expect(matched).to_have_count(1)
    expect(matched).to_contain_text("capacity")
    expect(matched).to_contain_text("this branch matches")
    expect(page.locator('[data-testid="check-state"]').first).to_have_text("firing")
    # Enabled or not is the actions feature's business (role-dependent); here: it is offered.
    expect(page.get_by_role("button", name="Add two groups to the pool")).to_be_visible()

    page.get_by_test_id("signals-fold").locator("summary").click()  # charts load on demand
    plot = page.locator("#runbook-signals .js-plotly-plot .main-svg").first
    expect(plot).to_be_visible()
    expect(page.locator("#runbook-signals .js-plotly-plot")).to_have_count(6)
    page.wait_for_timeout(300)  # let plotly finish laying out before the picture
    page.screenshot(path=str(SHOTS / "runbook-incident-full.png"), full_page=True)
    page.locator("#runbook-signals").screenshot(path=str(SHOTS / "runbook-charts.png"))
    page.locator("#runbook-triage").screenshot(path=str(SHOTS / "runbook-triage.png"))
    assert not [u for u in failed if not u.startswith(live.url)], failed  # nothing external

    page.goto(live.url + "/runbooks/")
    expect(page.locator('[data-testid="runbook-row"]')).to_have_count(8)
    page.screenshot(path=str(SHOTS / "runbook-catalogue.png"), full_page=True)
    page.close()


def test_live_refresh_keeps_open_details_and_redraws_charts_in_place(
    live_server, prom, browser, make_user, settings
):
    """One poll with nothing changed (204: no swap), then one with a new check value (200:
    swapped): the <details> the responder opened stays open through both, and the chart
    is redrawn with the new data on the same plot element (Plotly.react, no flicker)."""
    from playwright.sync_api import expect

    settings.LIVE_REFRESH_SECONDS = 2
    settings.TRIAGE_CACHE_SECONDS = 0  # every poll asks the stand-in Prometheus again
    make_user("rosa", roles.RESPONDER)
    incident_id = send_alert(live_server.url)
    triage_url = f"/runbooks/incidents/{incident_id}/triage/"

    def is_poll(response):
        return triage_url in response.url and response.request.method == "GET"

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(live_server.url + f"/incidents/{incident_id}/")
    page.fill("#id_username", "rosa")
    page.fill("#id_password", "pw-rosa")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"**/incidents/{incident_id}/")

    details = page.locator('#runbook-triage details[data-keep="check-waiting_queue"]')
    details.locator("summary").click()
    expect(details).to_have_attribute("open", "")
    page.get_by_test_id("signals-fold").locator("summary").click()  # charts load on demand
    plot = page.locator(f'[data-chart="chart-{incident_id}-waiting"]')
    expect(plot.locator(".main-svg").first).to_be_visible()
    plot.evaluate("div => { window.waitingPlot = div; }")

    with page.expect_response(is_poll) as unchanged:
        pass
    assert unchanged.value.status == 204
    expect(details).to_have_attribute("open", "")

    prom.answers["num_requests_waiting"] = 31
    with page.expect_response(lambda r: is_poll(r) and r.status == 200):
        pass
    expect(page.locator('#runbook-triage tr[data-check="waiting_queue"]')).to_contain_text("31")
    reopened = page.locator('#runbook-triage details[data-keep="check-waiting_queue"]')
    expect(reopened).to_have_attribute("open", "")

    page.wait_for_function(
        "() => document.contains(window.waitingPlot) && window.waitingPlot.data"
        " && Math.max(...window.waitingPlot.data[0].y) > 30"
    )
    page.close()
