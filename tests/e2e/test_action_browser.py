"""The one-click fix in a real browser: a cuda-graph-capture incident (SEV1, so a second
person approves), the responder clicks the runbook's recommended action, reads the preview,
requests it; a commander approves in another browser; the card goes queued -> running ->
succeeded live, and the simulated release stops crash-looping.

Real processes throughout: the simulator (`python -m simulator serve`), a Celery worker on
Redis with KUBECONFIG pointing at it, the live test server on PostgreSQL, headless Chromium.
"""

import re

import pytest
from playwright.sync_api import expect

from console import roles
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in, send_alerts
from tests.integration.actions.conftest import FAST, eventually
from tests.payloads import alert

TIMEOUT_MS = 30_000
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


@pytest.fixture
def live(live_server, settings):
    settings.LIVE_REFRESH_SECONDS = 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    return live_server


def test_click_the_fix_approve_and_watch_the_crash_loop_end(
    live,
    browser,
    make_user,
    cluster,
    start_worker,
):
    start_worker({"KUBECONFIG": str(cluster.kubeconfig), **FAST})
    cluster.inject("cuda-graph-capture")
    make_user("rita", roles.RESPONDER)
    make_user("cara", roles.COMMANDER)
    crash = alert(
        alertname="VLLMCrashLooping",
        runbook="cuda-graph-capture",
        severity="critical",
        pod="vllm-chat-0",
    )
    incident_id = send_alerts(live.url, [crash], group_key="crash")

    rita = browser.new_page(viewport={"width": 1280, "height": 1000})
    rita.set_default_timeout(TIMEOUT_MS)
    log_in(rita, live.url, "rita")
    rita.goto(f"{live.url}/incidents/{incident_id}/")
    fix = rita.get_by_role("button", name="Turn on --enforce-eager")
    fix.click()
    dialog = rita.get_by_test_id("action-dialog")
    assert "--enforce-eager" in dialog.get_by_test_id("preview-diff").inner_text()
    assert "SEV1" in dialog.get_by_test_id("needs-approval").inner_text()
    rita.screenshot(path=str(SHOTS / "action-confirm.png"))
    dialog.get_by_test_id("confirm-action").click()
    card = rita.get_by_test_id("action-run").first
    card.locator('[data-testid="run-status"]', has_text="Awaiting approval").wait_for()
    assert "someone else with the commander role" in card.inner_text()

    cara = browser.new_context().new_page()
    cara.set_default_timeout(TIMEOUT_MS)
    log_in(cara, live.url, "cara")
    cara.goto(f"{live.url}/incidents/{incident_id}/")
    cara.get_by_role("button", name="Approve").click()
    cara.get_by_test_id("action-run").first.locator(
        '[data-testid="run-status"]', has_text="Succeeded"
    ).wait_for(timeout=90_000)

    # The responder's page catches up by itself, and the fleet recovers.
    card.locator('[data-testid="run-status"]', has_text="Succeeded").wait_for(timeout=30_000)
    assert "Read back" in card.inner_text()
    rita.screenshot(path=str(SHOTS / "action-succeeded.png"), full_page=True)
    eventually(
        lambda: all(s["fixed"] for s in cluster.status()["active_scenarios"]),
        timeout=60,
        what="the simulated release to stop crash-looping",
    )
    # The timeline refreshes on its own poll, separately from the run card.
    expect(rita.locator("#timeline")).to_contain_text(
        re.compile("Approved|Succeeded"), timeout=30_000
    )

    # The audit view lists the run with who asked and who approved.
    rita.goto(f"{live.url}/runbooks/actions/")
    row = rita.get_by_test_id("action-row").first
    assert "set_enforce_eager" in row.inner_text()
    assert "cara" in row.inner_text()
    rita.screenshot(path=str(SHOTS / "actions-audit.png"), full_page=True)
    row.locator("a").first.click()  # the run number, whatever it is
    audit = rita.get_by_test_id("audit")
    assert "Approved" in audit.inner_text()
    assert "resourceVersion" in rita.locator("body").inner_text()  # before/after states
    rita.screenshot(path=str(SHOTS / "action-run.png"), full_page=True)
