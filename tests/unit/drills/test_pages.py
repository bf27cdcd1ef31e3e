"""The drill pages: viewers see plans, runs and scorecards; only commanders plan, start
and stop; the runbook page says when its drill last passed."""

from datetime import timedelta

import pytest

from console import roles
from drills.models import DrillRun

pytestmark = pytest.mark.django_db


def test_viewers_see_but_cannot_plan_start_or_stop(client, make_user, make_plan, finished_run):
    plan = make_plan()
    run = finished_run(passed=True, ago=timedelta(days=1), plan=plan)
    DrillRun.objects.filter(pk=run.pk).update(status="running", ended_at=None)
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get("/runbooks/drills/").content.decode()
    assert plan.title in page
    assert "needs the commander role" in page
    assert 'data-testid="plan-form"' not in page
    assert "Start drill" not in client.get(f"/runbooks/drills/plans/{plan.pk}/").content.decode()
    assert (
        'data-testid="stop-drill"'
        not in client.get(f"/runbooks/drills/runs/{run.pk}/").content.decode()
    )
    assert client.post(f"/runbooks/drills/plans/{plan.pk}/start/").status_code == 403
    assert client.post(f"/runbooks/drills/runs/{run.pk}/stop/").status_code == 403
    assert client.post("/runbooks/drills/", {"runbook": "ttft-spike"}).status_code == 403
    assert DrillRun.objects.get(pk=run.pk).status == "running"


def test_commanders_get_the_buttons(client, commander, make_plan):
    plan = make_plan()
    client.force_login(commander)
    assert 'data-testid="plan-form"' in client.get("/runbooks/drills/").content.decode()
    assert "Start drill" in client.get(f"/runbooks/drills/plans/{plan.pk}/").content.decode()


def test_a_bad_plan_is_a_400_naming_the_field(client, commander):
    client.force_login(commander)
    response = client.post(
        "/runbooks/drills/",
        {"runbook": "ttft-spike", "namespace": "llm-serving", "lws": "vllm-chat",
         "fault": "ttft-spike", "expected_branch": "no-such-branch",
         "max_duration_seconds": 600, "detect_within_seconds": 60,
         "acknowledge_within_seconds": 60, "recover_within_seconds": 600},
    )  # fmt: skip
    assert response.status_code == 400
    assert "has no branch &#x27;no-such-branch&#x27;" in response.content.decode()


def test_the_runbook_page_says_when_its_drill_last_passed(
    client, make_user, make_plan, finished_run
):
    client.force_login(make_user("vera", roles.VIEWER))
    panel = client.get("/runbooks/ttft-spike/").content.decode()
    assert "never passed" in panel
    plan = make_plan()
    finished_run(passed=False, ago=timedelta(hours=1), plan=plan)
    passed = finished_run(passed=True, ago=timedelta(days=3), plan=plan)
    panel = client.get("/runbooks/ttft-spike/").content.decode()
    assert "last passed" in panel
    assert f"/runbooks/drills/runs/{passed.pk}/" in panel
    assert "never passed" in client.get("/runbooks/nccl-hang/").content.decode()


def test_the_api_reads_for_everyone_and_writes_for_commanders(
    client, make_user, make_plan, finished_run
):
    plan = make_plan()
    run = finished_run(passed=True, ago=timedelta(days=1), plan=plan)
    client.force_login(make_user("vera", roles.VIEWER))
    assert client.get("/api/v1/drills/plans/").json()[0]["id"] == plan.pk
    detail = client.get(f"/api/v1/drills/runs/{run.pk}/").json()
    assert detail["passed"] is True
    assert "scorecard" in detail
    listed = client.get("/api/v1/drills/runs/?runbook=ttft-spike").json()
    assert [r["id"] for r in listed] == [run.pk]
    assert client.post(f"/api/v1/drills/plans/{plan.pk}/start/").status_code == 403
    assert client.get("/api/v1/drills/runs/999999/").status_code == 404


def test_a_bad_plan_over_the_api_is_a_400_naming_the_problem(client, commander):
    client.force_login(commander)
    response = client.post(
        "/api/v1/drills/plans/",
        {"runbook": "no-such-runbook", "namespace": "llm-serving", "lws": "vllm-chat",
         "fault": "ttft-spike"},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 400
    assert "no runbook 'no-such-runbook'" in response.json()["detail"]
    response = client.post(
        "/api/v1/drills/plans/", {"fault": "meteor-strike"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "fault" in response.json()
