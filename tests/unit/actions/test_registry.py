import pytest

from actions.kinds import KINDS, ActionKind, ParamError, kind_for

SIX = [
    "scale_lws",
    "set_enforce_eager",
    "rollback_router_config",
    "restart_lws_group",
    "cordon_node",
    "update_gateway_limits",
]


def test_the_six_kinds_and_their_policy_flags():
    assert list(KINDS) == SIX
    assert all(isinstance(k, ActionKind) and k.title for k in KINDS.values())
    assert {n for n, k in KINDS.items() if k.risky} == {
        "set_enforce_eager",
        "rollback_router_config",
        "cordon_node",
        "restart_lws_group",
    }
    assert {n for n, k in KINDS.items() if not k.undoable} == {"restart_lws_group"}
    assert kind_for("cordon_node") is KINDS["cordon_node"]


def test_unknown_kind_lists_the_six():
    with pytest.raises(ParamError) as exc:
        kind_for("reboot_cluster")
    assert exc.value.field == "kind"
    assert all(name in exc.value.message for name in SIX)


def test_params_must_be_an_object():
    for kind in KINDS.values():
        with pytest.raises(ParamError):
            kind.clean(["not", "a", "dict"])
