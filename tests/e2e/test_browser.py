"""The console in a real browser: Debian's headless Chromium driven by Playwright.

An alert arrives by webhook, shows up in the list by live refresh, a responder opens it,
acknowledges it and writes a note, and the page updates without a reload. A second test
does the same work with JavaScript off, through plain forms.
"""

import pytest
import requests

from console import roles
from incidents.models import Incident
from tests.conftest import TOKEN
from tests.e2e.conftest import SHOTS
from tests.payloads import alert, notification

TIMEOUT_MS = 15_000

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def live(live_server, settings):
    settings.LIVE_REFRESH_SECONDS = 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    return live_server


def send_alerts(base_url: str, alerts: list[dict], **kw) -> int:
    # Connection: close, so the live server's request thread ends (and closes its database
    # connection) now rather than when this socket is garbage-collected.
    with requests.post(
        base_url + "/api/v1/alerts/alertmanager",
        json=notification(alerts, **kw),
        headers={"Authorization": f"Bearer {TOKEN}", "Connection": "close"},
        timeout=10,
    ) as response:
        assert response.status_code == 200, response.text
        return response.json()["incidents"][0]


def log_in(page, base_url: str, username: str) -> None:
    page.goto(base_url + "/")
    assert "/login/" in page.url  # the console asks who you are first
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-" + username)
    page.get_by_role("button", name="Log in").click()


def test_alert_to_acknowledged_incident_live(live, browser, make_user):
    from playwright.sync_api import expect

    make_user("rita", roles.RESPONDER)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live.url, "rita")

    expect(page.get_by_text("No incidents.")).to_be_visible()
    expect(page.locator(".who")).to_contain_text("responder")
    page.screenshot(path=SHOTS / "list-empty.png")

    incident_id = send_alerts(live.url, [alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")])

    # No reload: the table polls every LIVE_REFRESH_SECONDS and the row appears.
    row = page.locator(f'#incident-table a[href="/incidents/{incident_id}/"]').last
    expect(row).to_be_visible()
    expect(page.locator("#incident-table")).to_contain_text("SEV1")
    page.screenshot(path=SHOTS / "list.png", full_page=True)

    row.click()
    expect(page).to_have_url(f"{live.url}/incidents/{incident_id}/")
    badge = page.get_by_test_id("status-badge")
    expect(badge).to_have_text("Triggered")
    expect(page.locator("#incident-alerts")).to_contain_text("vllm-chat-1")

    page.get_by_role("button", name="Acknowledge").click()
    expect(badge).to_have_text("Acknowledged")
    expect(page.locator("#timeline")).to_contain_text("Incident acknowledged.")
    expect(page.locator("#timeline")).to_contain_text("rita")
    expect(page.get_by_role("button", name="Acknowledge")).to_have_count(0)
    assert page.url.endswith(f"/incidents/{incident_id}/")  # htmx, not a page load

    note = "KV cache at 98% on vllm-chat-1; <b>scaling</b> to 6 replicas"
    page.fill("#note-text", note)
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("#timeline .note")).to_contain_text(note)  # shown as text, not markup
    expect(page.locator("#note-text")).to_have_value("")
    page.screenshot(path=SHOTS / "detail.png", full_page=True)

    # A change from elsewhere (Alertmanager says all clear) reaches the open page by polling.
    send_alerts(
        live.url,
        [
            {**alert(pod="vllm-chat-0"), "status": "resolved", "endsAt": "2026-11-29T08:10:00Z"},
            {**alert(pod="vllm-chat-1"), "status": "resolved", "endsAt": "2026-11-29T08:10:00Z"},
        ],
    )
    expect(badge).to_have_text("Mitigated")
    expect(page.locator("#incident-alerts")).to_contain_text("0 firing")
    assert Incident.objects.get(pk=incident_id).status == "mitigated"


def test_commander_without_javascript(live, browser, make_user):
    from playwright.sync_api import expect

    make_user("cora", roles.COMMANDER)
    incident_id = send_alerts(live.url, [alert()])
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live.url, "cora")
    page.get_by_role("link", name=f"#{incident_id}").click()

    page.get_by_role("button", name="Take command").click()
    expect(page.locator(".msg-success")).to_contain_text("Commander")
    page.fill('input[name="reason"]', "rolled back the router config")
    page.get_by_role("button", name="Resolve").click()
    # Its alert still fires: a page asks to confirm, keeping the reason typed.
    confirm = page.get_by_test_id("ending-confirm")
    expect(confirm).to_contain_text("1 alert still firing: VLLMHighTTFT (pod=vllm-chat-0)")
    expect(confirm.locator('input[name="reason"]')).to_have_value("rolled back the router config")
    confirm.get_by_role("button", name="Resolve anyway").click()
    expect(page.get_by_test_id("status-badge")).to_have_text("Resolved")
    expect(page.locator("#timeline")).to_contain_text("rolled back the router config")
    expect(page.get_by_role("button", name="Reopen")).to_be_visible()

    page.goto(live.url + "/receipts/")
    expect(page.locator("table.receipts")).to_contain_text("Accepted")
    page.screenshot(path=SHOTS / "receipts.png", full_page=True)
    context.close()
