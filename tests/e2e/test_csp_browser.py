"""The Content-Security-Policy in a real browser: every main page, including the plotly
charts, the htmx partials, the action dialog and the Swagger page, works without a single
CSP violation (Chromium reports each one on the console and as an event)."""

import pytest
import requests
from django.core.cache import cache

from console import roles
from incidents import services as incident_services
from postmortems import services as pm_services
from tests.conftest import TOKEN
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus
from tests.unit.runbooks.test_pages import TTFT_ALL_RED

TIMEOUT_MS = 20_000

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Registered before any page script runs; collects what the browser refused.
WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") +
                    " at " + e.sourceFile + ":" + e.lineNumber);
});
"""

# The charts fold asks Prometheus for six series and draws them: on a loaded 2-CPU CI
# machine that took longer than expect()'s 5 s default.
CHARTS_MS = 20_000


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
    settings.LIVE_REFRESH_SECONDS = 30
    return live_server


def send_alert(base_url: str, group_key: str, **labels) -> int:
    with requests.post(
        base_url + "/api/v1/alerts/alertmanager",
        json=notification([alert(**labels)], group_key=group_key),
        headers={"Authorization": f"Bearer {TOKEN}", "Connection": "close"},
        timeout=10,
    ) as response:
        assert response.status_code == 200, response.text
        return response.json()["incidents"][0]


def test_main_pages_run_without_csp_violations(live, prom, browser, make_user):
    from playwright.sync_api import expect

    rita = make_user("rita", roles.RESPONDER)
    cara = make_user("cara", roles.COMMANDER)
    make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True)
    open_id = send_alert(live.url, "csp-open")
    done_id = send_alert(live.url, "csp-done", pod="vllm-chat-1")
    # Its alert still fires: each move is confirmed, with a reason.
    incident_services.incident_mitigate(
        incident_id=done_id, actor=rita, reason="scaled", confirm=True
    )
    incident_services.incident_resolve(
        confirm_no_commander=True, incident_id=done_id, actor=cara, reason="over", confirm=True
    )
    pm = pm_services.postmortem_draft(incident_id=done_id, actor=rita)

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH)
    messages = []
    page.on("console", lambda m: messages.append(f"{page.url}: {m.text}"))

    def violations() -> list[str]:
        """What was refused since the last call (the page's list starts anew per page)."""
        seen = [m for m in messages if "Content Security Policy" in m]
        messages.clear()
        return seen + [f"{page.url}: {v}" for v in page.evaluate("window.__csp.splice(0)")]

    page.goto(live.url + "/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "pw-ada")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/")
    found = violations()

    # The incident page: triage and golden-signal charts (plotly), then the action dialog,
    # whose Close button is wired by static JS instead of an inline handler.
    page.goto(live.url + f"/incidents/{open_id}/")
    page.get_by_test_id("signals-fold").locator("summary").click()  # charts load on demand
    chart = page.locator("#runbook-signals .js-plotly-plot .main-svg").first
    expect(chart).to_be_visible(timeout=CHARTS_MS)
    expect(page.locator('[data-testid="check-state"]').first).to_be_visible()
    page.get_by_role("button", name="Add two groups to the pool").click()
    dialog = page.locator('[data-testid="action-dialog"]')
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_have_count(0)
    found += violations()

    for path, ready in [
        ("/", "table"),
        ("/receipts/", "main"),
        ("/runbooks/", "main"),
        ("/runbooks/ttft-spike/", "main"),
        ("/runbooks/actions/", "main"),
        (f"/postmortems/{pm.pk}/", ".js-plotly-plot .main-svg"),
        (f"/postmortems/{pm.pk}/print/", ".js-plotly-plot .main-svg"),
        ("/postmortems/", "main"),
        ("/postmortems/reports/", "main"),
        ("/api/docs/", ".swagger-ui .info"),
        ("/admin/", "#content"),
    ]:
        response = page.goto(live.url + path)
        assert "script-src 'self'" in response.headers.get("content-security-policy", ""), path
        expect(page.locator(ready).first).to_be_visible()
        page.wait_for_load_state("networkidle")
        found += violations()

    assert not found, "\n".join(found)
