"""rollback_router_config and update_gateway_limits against the simulator's ConfigMaps."""

import json
from datetime import UTC, datetime

import pytest

from actions.kinds import (
    ActionError,
    Conflict,
    Context,
    ParamError,
    Revision,
    kind_for,
)
from simulator import objects
from simulator.store import CONFIGMAPS
from tests.unit.conftest import NS

ROLLBACK, GATEWAY = kind_for("rollback_router_config"), kind_for("update_gateway_limits")
STARTED = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def cm(sim, name) -> dict:
    return sim.store.get(CONFIGMAPS, NS, name)


def router_data(**changes) -> dict:
    config = json.loads(objects.router_config()["data"]["dynamic_config.json"])
    return {"dynamic_config.json": json.dumps({**config, **changes}, indent=2)}


def gateway_config(sim) -> dict:
    return json.loads(cm(sim, objects.GATEWAY_CONFIGMAP)["data"]["config.json"])


# --- rollback_router_config ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"revision": 3, "data": {"a": "b"}}, "data"),
        ({"data": {"a": 1}}, "data"),
        ({"revision": True}, "revision"),
        ({"configmap": "Not A Name"}, "configmap"),
    ],
)
def test_rollback_clean_rejects(params, field):
    with pytest.raises(ParamError) as exc:
        ROLLBACK.clean(params)
    assert exc.value.field == field


def test_rollback_clean_defaults():
    assert ROLLBACK.clean({}) == {
        "namespace": NS,
        "configmap": "vllm-router-config",
        "revision": "before_incident",
    }
    assert ROLLBACK.clean({"revision": 12})["revision"] == "12"
    assert ROLLBACK.target(ROLLBACK.clean({})) == f"configmap/{NS}/vllm-router-config"
    assert ROLLBACK.risky


def test_rollback_preview_apply_verify_undo(sim, api):
    # The incident: someone switched the router to round robin; the good revision is saved.
    bad = router_data(routing_logic="roundrobin")
    sim.store.mutate(CONFIGMAPS, NS, objects.ROUTER_CONFIGMAP, lambda o: o.update(data=bad))
    asked = []

    def lookup(namespace, configmap, spec, started):
        asked.append((namespace, configmap, spec, started))
        return Revision(7, "before the incident", router_data(), STARTED)

    ctx = Context(incident_started_at=STARTED, revision_lookup=lookup)
    params = ROLLBACK.clean({})
    current = ROLLBACK.read(api, params)
    assert current.state == {"data": bad}
    plan = ROLLBACK.plan(current, params, ctx)
    assert asked == [(NS, "vllm-router-config", "before_incident", STARTED)]
    assert plan.desired == {"data": router_data()}
    assert plan.summary.startswith(f"Roll back {NS}/vllm-router-config to revision 7")
    assert '-  "routing_logic": "roundrobin",\n' in plan.diff
    assert '+  "routing_logic": "prefixaware",\n' in plan.diff

    assert ROLLBACK.dry_run(api, params, current, plan).english == "server dry run accepted"
    assert cm(sim, objects.ROUTER_CONFIGMAP)["data"] == bad

    after = ROLLBACK.apply(api, params, current, plan)
    assert after.resource_version != current.resource_version
    assert cm(sim, objects.ROUTER_CONFIGMAP)["data"] == router_data()
    assert ROLLBACK.verify(api, params, plan)[0] is True
    assert ROLLBACK.already_applied(ROLLBACK.read(api, params), current, plan)

    undo = ROLLBACK.clean(ROLLBACK.undo_params(params, current))
    assert undo["data"] == bad
    now = ROLLBACK.read(api, undo)
    ROLLBACK.apply(api, undo, now, ROLLBACK.plan(now, undo, Context()))
    assert cm(sim, objects.ROUTER_CONFIGMAP)["data"] == bad


def test_rollback_stale_resource_version_is_a_conflict(sim, api):
    params = ROLLBACK.clean({"data": router_data(routing_logic="session")})
    current = ROLLBACK.read(api, params)
    plan = ROLLBACK.plan(current, params, Context())
    other = router_data(routing_logic="kvaware")
    sim.store.mutate(CONFIGMAPS, NS, objects.ROUTER_CONFIGMAP, lambda o: o.update(data=other))
    with pytest.raises(Conflict) as exc:
        ROLLBACK.apply(api, params, current, plan)
    assert exc.value.retryable
    assert cm(sim, objects.ROUTER_CONFIGMAP)["data"] == other
    assert ROLLBACK.verify(api, params, plan)[0] is False


def test_rollback_without_history_or_revision(sim, api):
    params = ROLLBACK.clean({"revision": "previous"})
    current = ROLLBACK.read(api, params)
    with pytest.raises(ActionError, match="no revision history"):
        ROLLBACK.plan(current, params, Context())

    def lookup(*_):
        raise ParamError("revision", "no revision of vllm-router-config before the incident")

    with pytest.raises(ParamError):
        ROLLBACK.plan(current, params, Context(revision_lookup=lookup))
    same = ROLLBACK.plan(current, ROLLBACK.clean({"data": current.state["data"]}), Context())
    assert same.desired == current.state
    assert "already matches" in same.summary


# --- update_gateway_limits ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "max_tokens_cap"),
        ({"max_tokens_cap": 100}, "max_tokens_cap"),
        ({"rate_limit_rps": -1}, "rate_limit_rps"),
        ({"rate_limit_burst": "lots"}, "rate_limit_burst"),
        ({"long_context_threshold_tokens": 2_000_000}, "long_context_threshold_tokens"),
        ({"long_context_pool": "Long Pool"}, "long_context_pool"),
        ({"max_tokens": 512}, "max_tokens"),
    ],
)
def test_gateway_clean_rejects(params, field):
    with pytest.raises(ParamError) as exc:
        GATEWAY.clean(params)
    assert exc.value.field == field


def test_gateway_preview_apply_keeps_other_keys_and_undo(sim, api):
    def add_unknown(obj):
        config = json.loads(obj["data"]["config.json"])
        obj["data"]["config.json"] = json.dumps({**config, "x_team_quota": {"a": 1}})

    sim.store.mutate(CONFIGMAPS, NS, objects.GATEWAY_CONFIGMAP, add_unknown)
    original = gateway_config(sim)
    params = GATEWAY.clean({"max_tokens_cap": "4096", "rate_limit_rps": 50})
    assert not GATEWAY.risky
    current = GATEWAY.read(api, params)
    assert current.state["max_tokens_cap"] == 8192
    assert "x_team_quota" not in current.state
    plan = GATEWAY.plan(current, params, Context())
    assert plan.summary == (
        f"Set gateway limits in {NS}/llm-gateway-config: max_tokens_cap 8192 -> 4096; "
        "rate_limit_rps 0 -> 50"
    )
    assert "\n-max_tokens_cap: 8192\n" in plan.diff
    assert "\n+max_tokens_cap: 4096\n" in plan.diff
    assert any("capped" in w for w in plan.warnings)

    assert GATEWAY.dry_run(api, params, current, plan).english == "server dry run accepted"
    assert gateway_config(sim) == original

    after = GATEWAY.apply(api, params, current, plan)
    assert after.resource_version != current.resource_version
    assert gateway_config(sim) == {**original, "max_tokens_cap": 4096, "rate_limit_rps": 50}
    assert GATEWAY.verify(api, params, plan)[0] is True
    assert GATEWAY.already_applied(GATEWAY.read(api, params), current, plan)

    undo = GATEWAY.clean(GATEWAY.undo_params(params, current))
    assert undo == {"namespace": NS, "configmap": "llm-gateway-config",
                    "max_tokens_cap": 8192, "rate_limit_rps": 0}  # fmt: skip
    now = GATEWAY.read(api, undo)
    GATEWAY.apply(api, undo, now, GATEWAY.plan(now, undo, Context()))
    assert gateway_config(sim) == original


def test_gateway_stale_resource_version_is_a_conflict(sim, api):
    params = GATEWAY.clean({"long_context_threshold_tokens": 16384})
    current = GATEWAY.read(api, params)
    plan = GATEWAY.plan(current, params, Context())
    sim.store.mutate(CONFIGMAPS, NS, objects.GATEWAY_CONFIGMAP, lambda o: o.update(data={
        "config.json": json.dumps({**gateway_config(sim), "rate_limit_rps": 7})
    }))  # fmt: skip
    with pytest.raises(Conflict):
        GATEWAY.apply(api, params, current, plan)
    with pytest.raises(Conflict):
        GATEWAY.dry_run(api, params, current, plan)
    assert gateway_config(sim)["long_context_threshold_tokens"] == 32768


def test_gateway_config_that_is_not_json_is_refused(sim, api):
    sim.store.mutate(
        CONFIGMAPS, NS, objects.GATEWAY_CONFIGMAP, lambda o: o.update(data={"config.json": "{"})
    )
    with pytest.raises(ActionError, match="is not valid JSON"):
        GATEWAY.read(api, GATEWAY.clean({"max_tokens_cap": 4096}))


@pytest.mark.django_db
def test_the_periodic_capture_guards_a_change_the_console_did_not_make(sim, api):
    """An outside write to the router ConfigMap (kubectl, a pipeline) while an incident is
    open in its namespace: the beat's capture stores the revision and starts a guard on
    that incident; the capture at worker start only records it."""
    from actions.capture import config_revisions_capture
    from actions.guard.models import GuardWatch
    from tests.factories import AlertFactory, IncidentFactory

    assert config_revisions_capture(api=api, guard=True) == 2  # the first look: no guard
    incident = IncidentFactory(severity="SEV2", runbook="prefix-cache-drop")
    AlertFactory(incident=incident, labels={"namespace": NS, "lws": "vllm-chat"})
    outside = router_data(routing_logic="roundrobin")
    sim.store.mutate(CONFIGMAPS, NS, objects.ROUTER_CONFIGMAP, lambda o: o.update(data=outside))
    assert config_revisions_capture(api=api, reason="first look at worker start") == 1
    assert not GuardWatch.objects.exists()
    other = router_data(routing_logic="session")
    sim.store.mutate(CONFIGMAPS, NS, objects.ROUTER_CONFIGMAP, lambda o: o.update(data=other))
    assert config_revisions_capture(api=api, guard=True) == 1
    (watch,) = GuardWatch.objects.all()
    assert watch.incident_id == incident.pk
    assert watch.revision.data == other
    assert watch.runbook == "prefix-cache-drop"
