"""Drill tests: plans and runs made through the models where a test needs history, and
through the services (against the real simulator over HTTP) where it tests behaviour."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console import roles
from drills.models import DrillPlan, DrillRun, DrillRunStatus


@pytest.fixture
def commander(make_user):
    return make_user("cara", roles.COMMANDER)


@pytest.fixture
def make_plan(commander):
    def _make(**kw) -> DrillPlan:
        fields = {
            "runbook": "ttft-spike",
            "title": "TTFT spike on chat",
            "namespace": "llm-serving",
            "lws": "vllm-chat",
            "fault": "ttft-spike",
            "expected_branch": "",
            "created_by": commander,
            "created_at": timezone.now(),
            **kw,
        }
        return DrillPlan.objects.create(**fields)

    return _make


@pytest.fixture
def finished_run(make_plan, commander):
    """A finished run in the past, `ago` before now, passed or not."""

    def _make(*, passed: bool, ago: timedelta, plan: DrillPlan | None = None) -> DrillRun:
        plan = plan or make_plan()
        at = timezone.now() - ago
        return DrillRun.objects.create(
            plan=plan, runbook=plan.runbook, namespace=plan.namespace, lws=plan.lws,
            status=DrillRunStatus.FINISHED, started_by=commander, started_at=at,
            injected_at=at, ended_at=at + timedelta(minutes=10), passed=passed,
        )  # fmt: skip

    return _make
