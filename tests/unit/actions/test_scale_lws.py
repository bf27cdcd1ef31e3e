import json

import pytest

from actions.kinds import (
    Conflict,
    Context,
    GuardrailError,
    ParamError,
    Plan,
    Snapshot,
    TargetNotFound,
    kind_for,
)
from simulator.store import LWS
from tests.unit.conftest import NS

KIND = kind_for("scale_lws")


def replicas(sim, name="vllm-chat") -> int:
    return sim.store.get(LWS, NS, name)["spec"]["replicas"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"lws": "vllm-chat"}, "replicas"),
        ({"lws": "vllm-chat", "replicas": 3, "replicas_delta": 1}, "replicas"),
        ({"lws": "vllm-chat", "replicas": "six"}, "replicas"),
        ({"lws": "vllm-chat", "replicas": True}, "replicas"),
        ({"lws": "vllm-chat", "replicas": 0}, "replicas"),  # below ACTIONS_SCALE_MIN_REPLICAS
        ({"lws": "vllm-chat", "replicas": 17}, "replicas"),
        ({"lws": "vllm-chat", "replicas_delta": 5}, "replicas_delta"),
        ({"lws": "vllm-chat", "replicas_delta": 0}, "replicas_delta"),
        ({"lws": "Bad_Name", "replicas": 3}, "lws"),
        ({"lws": "vllm-chat", "replicas": 3, "force": True}, "force"),
    ],
)
def test_clean_rejects_bad_params_naming_the_field(params, field):
    with pytest.raises(ParamError) as exc:
        KIND.clean(params)
    assert exc.value.field == field


def test_clean_normalises_and_defaults_the_namespace():
    assert KIND.clean({"lws": "vllm-chat", "replicas_delta": "-2"}) == {
        "namespace": NS,
        "lws": "vllm-chat",
        "replicas_delta": -2,
    }
    assert KIND.target({"namespace": NS, "lws": "vllm-chat"}) == f"leaderworkerset/{NS}/vllm-chat"
    assert not KIND.risky


def test_preview_dry_run_apply_verify_undo(sim, api, prepare):
    kind, params, current, plan = prepare("scale_lws", {"lws": "vllm-chat", "replicas_delta": 2})
    assert current.state == {"replicas": 4}
    assert plan.desired == {"replicas": 6}
    assert plan.summary == f"Scale {NS}/vllm-chat from 4 to 6 groups"
    assert "-replicas: 4\n+replicas: 6\n" in plan.diff
    history = len(sim.store.history)

    assert (
        kind.dry_run(api, params, current, plan).english
        == "server dry run accepted: spec.replicas 4 -> 6"
    )
    assert replicas(sim) == 4
    assert len(sim.store.history) == history

    after = kind.apply(api, params, current, plan)
    assert after.state == {"replicas": 6}
    assert after.resource_version != current.resource_version
    assert replicas(sim) == 6
    assert kind.verify(api, params, plan)[0] is True
    assert kind.already_applied(kind.read(api, params), current, plan)

    undo = kind.clean(kind.undo_params(params, current))
    assert undo == {"namespace": NS, "lws": "vllm-chat", "replicas": 4}
    now = kind.read(api, undo)
    kind.apply(api, undo, now, kind.plan(now, undo, Context()))
    assert replicas(sim) == 4


def test_stale_resource_version_is_a_conflict(sim, api, prepare):
    kind, params, current, plan = prepare("scale_lws", {"lws": "vllm-chat", "replicas": 5})
    sim.store.mutate(LWS, NS, "vllm-chat", lambda o: o["metadata"]["labels"].update(x="y"))
    with pytest.raises(Conflict) as exc:
        kind.apply(api, params, current, plan)
    assert exc.value.retryable
    assert replicas(sim) == 4
    assert not kind.already_applied(kind.read(api, params), current, plan)


def test_guardrails_are_checked_against_the_current_count(sim, prepare, settings):
    settings.ACTIONS_SCALE_MAX_REPLICAS = 5
    with pytest.raises(GuardrailError, match=r"allowed range is 1\.\.5"):
        prepare("scale_lws", {"lws": "vllm-chat", "replicas_delta": 2})
    settings.ACTIONS_SCALE_MAX_REPLICAS = 16
    with pytest.raises(GuardrailError, match="at most 4 per action"):
        prepare("scale_lws", {"lws": "vllm-chat", "replicas": 9})
    with pytest.raises(GuardrailError, match="allowed range"):
        prepare("scale_lws", {"lws": "vllm-long", "replicas_delta": -2})  # 2 -> 0


def test_no_op_plan_and_unknown_lws(api, prepare):
    kind, params, current, plan = prepare("scale_lws", {"lws": "vllm-chat", "replicas": 4})
    assert plan.desired == current.state
    assert "nothing to change" in plan.summary
    assert kind.apply(api, params, current, plan) == current
    with pytest.raises(TargetNotFound, match='"nope" not found'):
        prepare("scale_lws", {"lws": "nope", "replicas": 4})


def test_snapshot_and_plan_round_trip_through_json(prepare):
    _, _, current, plan = prepare("scale_lws", {"lws": "vllm-chat", "replicas": 6})
    assert Snapshot.from_dict(json.loads(json.dumps(current.as_dict()))) == current
    assert Plan.from_dict(json.loads(json.dumps(plan.as_dict()))) == plan
