"""The pre-launch checklist in a real browser: the deployments found in the simulator
(its own process, real HTTP), a commander clicks "Verify now", a real Celery worker reads
the cluster and a Prometheus stand-in, and the page reloads with the evidence; then signs
off an item. No Content-Security-Policy violation on the way. Saves the README screenshot.
"""

import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache

from console import roles
from readiness import services
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in
from tests.e2e.test_csp_browser import WATCH
from tests.integration.actions.conftest import FAST
from tests.prometheus_standin import StandInPrometheus

TIMEOUT_MS = 30_000
DOCS_SHOT = Path(django_settings.BASE_DIR) / "docs" / "screenshot-checklist.png"
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


@pytest.fixture
def dcgm(settings):
    fake = StandInPrometheus({"DCGM_FI_DEV_GPU_UTIL": 16, "DCGM_FI_DEV_XID_ERRORS": 16})
    settings.PROMETHEUS_URL = fake.url
    cache.clear()
    yield fake
    fake.close()
    cache.clear()


def test_verify_from_the_browser_shows_evidence_and_sign_off(
    live_server, browser, make_user, cluster, start_worker, dcgm, settings
):
    settings.READINESS_NAMESPACES = ["llm-serving"]
    start_worker({"KUBECONFIG": str(cluster.kubeconfig), "PROMETHEUS_URL": dcgm.url, **FAST})
    services.checklists_refresh()  # what beat does: find the LWS, verify each once
    make_user("cora", roles.COMMANDER)
    SHOTS.mkdir(parents=True, exist_ok=True)

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH)
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security" in m.text else 0)
    log_in(page, live_server.url, "cora")
    page.get_by_role("link", name="Readiness").click()
    rows = page.get_by_test_id("deployment-row")
    assert rows.count() == 2
    page.get_by_role("link", name="vllm-chat").click()
    first = page.get_by_test_id("item-drain").locator("time").inner_text()

    page.get_by_test_id("verify-button").click()
    page.get_by_test_id("verification-active").wait_for()
    # The worker finishes, the banner's poll answers HX-Refresh and the page reloads.
    page.get_by_test_id("verification-active").wait_for(state="detached")
    page.get_by_test_id("verify-button").wait_for()
    drain = page.get_by_test_id("item-drain")
    assert drain.get_attribute("data-state") == "verified"
    assert "preStop: waits 15 s" in drain.inner_text()
    assert drain.locator("time").inner_text() >= first
    limits = page.get_by_test_id("item-gateway_limits")
    assert limits.get_attribute("data-rag") == "red"
    assert "rate_limit_rps=0" in limits.inner_text()
    dcgm_row = page.get_by_test_id("item-dcgm")
    assert dcgm_row.get_attribute("data-state") == "verified"

    form = page.get_by_test_id("signoff-oncall_trained")
    form.locator("input[name=note]").fill("Game day 2026-11-20: all six on-call ran ttft-spike")
    form.get_by_role("button", name="Sign off").click()
    trained = page.get_by_test_id("item-oncall_trained")
    trained.locator(".rag", has_text="Signed off").wait_for()
    assert trained.get_attribute("data-rag") == "green"
    page.screenshot(path=str(SHOTS / "readiness-detail.png"))
    shutil.copy(SHOTS / "readiness-detail.png", DOCS_SHOT)
    assert page.get_by_test_id("overall-rag").inner_text().lower() == "red"
    assert not violations + page.evaluate("window.__csp.splice(0)")
