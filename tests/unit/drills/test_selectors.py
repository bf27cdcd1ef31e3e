from datetime import timedelta

import pytest

from drills.selectors import drill_last_passed

pytestmark = pytest.mark.django_db


def test_last_passed_is_the_newest_passed_run_on_the_target(
    make_plan, finished_run, django_assert_num_queries
):
    plan = make_plan()
    older = finished_run(passed=True, ago=timedelta(days=20), plan=plan)
    finished_run(passed=False, ago=timedelta(days=1), plan=plan)
    newer = finished_run(passed=True, ago=timedelta(days=5), plan=plan)
    other = make_plan(lws="vllm-long", runbook="long-context-kv")
    finished_run(passed=True, ago=timedelta(hours=1), plan=other)

    with django_assert_num_queries(1):
        found = drill_last_passed(namespace="llm-serving", lws="vllm-chat")
    assert found == newer != older
    assert (
        drill_last_passed(namespace="llm-serving", lws="vllm-chat", runbook="ttft-spike") == newer
    )
    assert drill_last_passed(namespace="llm-serving", lws="vllm-chat", runbook="nccl-hang") is None
    assert drill_last_passed(namespace="llm-serving", lws="vllm-long").runbook == "long-context-kv"
    assert drill_last_passed(namespace="other", lws="vllm-chat") is None
