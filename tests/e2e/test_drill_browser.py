"""A chaos drill from the browser: a commander plans a drill of ttft-spike on the
simulator's chat pool, starts it, watches the alert's incident get flagged as a drill,
stops it, and reads the scorecard.

Real processes: the simulator (`python -m simulator serve`, its Kubernetes API and /sim
controls), a Celery worker on Redis (injects and clears), the live server on PostgreSQL,
headless Chromium. The test plays beat: it runs the drill watcher while it waits.
"""

import pytest

from console import roles
from drills.execution import drill_runs_watch
from drills.models import DrillRun
from incidents.models import Incident
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in, send_alerts
from tests.integration.actions.conftest import FAST, eventually
from tests.payloads import alert

TIMEOUT_MS = 30_000
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


@pytest.fixture
def live(live_server, settings, cluster):
    settings.DRILLS_SIMULATOR_URL = cluster.url
    SHOTS.mkdir(parents=True, exist_ok=True)
    return live_server


def test_plan_run_stop_and_score_a_drill_from_the_browser(
    live, browser, make_user, cluster, start_worker
):
    worker = start_worker(
        {"KUBECONFIG": str(cluster.kubeconfig), "SIMULATOR_URL": cluster.url, **FAST}
    )
    make_user("cara", roles.COMMANDER)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live.url, "cara")

    page.goto(f"{live.url}/runbooks/drills/?runbook=ttft-spike")
    form = page.get_by_test_id("plan-form")
    form.locator('select[name="runbook"]').select_option("ttft-spike")
    form.locator('select[name="fault"]').select_option("ttft-spike")
    form.locator('input[name="title"]').fill("Chat pool doubles its traffic")
    form.locator('input[name="max_duration_seconds"]').fill("600")
    form.get_by_role("button", name="Save plan").click()
    page.get_by_test_id("drill-plan").wait_for()
    assert "llm-serving/vllm-chat" in page.get_by_test_id("drill-plan").text_content()

    page.get_by_test_id("start-drill").click()
    status = page.get_by_test_id("drill-status")
    eventually(
        lambda: DrillRun.objects.filter(status="running").exists(),
        what=f"the worker to inject (runs: {list(DrillRun.objects.values('status', 'error'))}, "
        f"worker log: {worker.log_path.read_text()[-2000:]})",
    )
    page.locator('[data-testid="drill-status"]', has_text="Running").wait_for()
    eventually(
        lambda: [s["slug"] for s in cluster.status()["active_scenarios"]] == ["ttft-spike"],
        what="the simulator to run the injected scenario",
    )

    # The real alert's notification, shaped as Alertmanager sends it.
    incident_id = send_alerts(live.url, [alert(pod="vllm-chat-0")], group_key="drill-ttft")

    def linked():
        drill_runs_watch()
        return DrillRun.objects.filter(incident_id=incident_id).exists()

    eventually(linked, what="the drill to link the alert's incident")
    page.get_by_test_id("drill-incident").wait_for()
    assert Incident.objects.get(pk=incident_id).is_drill

    page.get_by_test_id("stop-drill").click()
    page.locator('[data-testid="drill-status"]', has_text="Finished").wait_for(timeout=60_000)
    assert status.text_content().strip() == "Finished"
    # Stopped by a person: aborted with the reason, the criteria measured but not judged.
    assert page.get_by_test_id("drill-verdict").text_content().strip() == "Aborted"
    card = page.get_by_test_id("scorecard")
    assert "not judged" in page.get_by_test_id("criterion-recovered").text_content()
    assert "stopped by cara" in page.get_by_test_id("drill-aborted").text_content()
    assert "stopped by cara" in card.page.get_by_test_id("drill-run").text_content()
    assert cluster.status()["active_scenarios"] == []
    # Copied to docs/screenshot-drill.png for the README.
    page.screenshot(path=str(SHOTS / "drill-scorecard.png"))

    page.goto(f"{live.url}/incidents/{incident_id}/")
    page.get_by_test_id("drill-banner").wait_for()
    page.goto(f"{live.url}/runbooks/ttft-spike/")
    assert "never passed" in page.get_by_test_id("drill-last-passed").text_content()
