"""Which alert labels each kind says are about what it changes (issue 11, finding 1): the
approval policy looks for open SEV1 incidents whose alerts carry these labels."""

from actions.kinds import kind_for
from tests.unit.conftest import NS


def labels(kind: str, params: dict, current=None) -> list[dict]:
    kind = kind_for(kind)
    return [s.labels for s in kind.subjects(kind.clean(params), current)]


def test_lws_kinds_are_about_their_lws_in_their_namespace():
    lws = [{"namespace": NS, "lws": "vllm-chat"}]
    assert labels("scale_lws", {"lws": "vllm-chat", "replicas": 3}) == lws
    assert labels("set_enforce_eager", {"lws": "vllm-chat"}) == lws
    assert labels("restart_lws_group", {"lws": "vllm-chat", "group": 1}) == lws


def test_configmap_kinds_are_about_every_pool_their_namespace_routes():
    assert labels("update_gateway_limits", {"rate_limit_rps": 5}) == [
        {"namespace": NS, "configmap": "llm-gateway-config"},
        {"namespace": NS},
    ]
    assert labels("rollback_router_config", {"namespace": "llm-prod"})[-1] == {
        "namespace": "llm-prod"
    }


def test_a_cordon_is_about_its_node_and_the_lws_groups_it_restarts(prepare, sim):
    assert labels("cordon_node", {"node": "gpu-node-3", "reason": "ecc"}) == [
        {"node": "gpu-node-3"}
    ]
    kind, params, current, _ = prepare(
        "cordon_node", {"node": "gpu-node-3", "reason": "ecc", "restart_groups": True}
    )
    subjects = kind.subjects(params, current)
    assert subjects[0].labels == {"node": "gpu-node-3"}
    assert subjects[0].name.english == "node gpu-node-3"
    assert subjects[1].labels == {"namespace": NS, "lws": "vllm-chat"}
    assert "restarted by this cordon" in subjects[1].name.english
