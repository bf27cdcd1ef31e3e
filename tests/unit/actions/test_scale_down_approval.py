"""A scale-down that takes an LWS below its ready groups by more than the step guardrail
(ACTIONS_SCALE_MAX_STEP) needs a commander's approval whatever the incident's severity:
otherwise two "small" scale-downs in a row, the second filed before LWS has drained the
first, remove more serving groups than one action may (issue 11, finding 1)."""

import pytest

from actions import services
from actions.models import ActionRunStatus
from console import roles
from tests.factories import IncidentFactory
from tests.unit.conftest import NS

pytestmark = pytest.mark.django_db


@pytest.fixture
def step_of_two(settings, api):
    settings.ACTIONS_SCALE_MAX_STEP = 2
    return api


def scale(incident, actor, delta, key):
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=actor,
        kind="scale_lws",
        params={"namespace": NS, "lws": "vllm-chat", "replicas_delta": delta},
        idempotency_key=key,
    )
    return run


def test_the_kind_reads_the_ready_groups(step_of_two, prepare):
    _, _, current, _ = prepare("scale_lws", {"lws": "vllm-chat", "replicas_delta": -1})
    assert current.state == {"replicas": 4}
    assert current.identity["ready_replicas"] == 4


def test_a_second_scale_down_before_lws_drained_the_first_needs_approval(step_of_two, make_user):
    rita, cole = make_user("rita", roles.RESPONDER), make_user("cole", roles.COMMANDER)
    quiet = IncidentFactory(severity="SEV4", status="acknowledged")
    # A step within the guardrail, from the 4 ready groups: no approval.
    preview = services.action_run_preview(
        incident_id=quiet.pk,
        actor=rita,
        kind="scale_lws",
        params={"namespace": NS, "lws": "vllm-chat", "replicas_delta": -2},
    )
    assert not preview.requires_approval
    # That change landed (spec 4 -> 2) and LWS has not removed the groups yet: 4 ready.
    step_of_two.patch_scale(NS, "vllm-chat", {"spec": {"replicas": 2}})
    run = scale(quiet, rita, -1, "scale-down-2")
    assert run.status == ActionRunStatus.AWAITING_APPROVAL
    assert "4 groups are ready" in run.approval_reason
    assert "ACTIONS_SCALE_MAX_STEP" in run.approval_reason
    services.action_run_approve(run_id=run.pk, actor=cole)
    run.refresh_from_db()
    assert run.status == ActionRunStatus.QUEUED


def test_scaling_up_while_groups_drain_needs_no_approval(step_of_two, make_user):
    rita = make_user("rita", roles.RESPONDER)
    step_of_two.patch_scale(NS, "vllm-chat", {"spec": {"replicas": 2}})
    run = scale(IncidentFactory(severity="SEV4"), rita, 1, "scale-up-1")
    assert run.status == ActionRunStatus.QUEUED
