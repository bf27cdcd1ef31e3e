"""The six action kinds, by name. The run services and tasks use only this registry and
the contract in `base` (errors, Snapshot, Plan, Context, Revision)."""

from actions.kinds.base import (
    ActionError,
    ActionKind,
    Conflict,
    Context,
    Forbidden,
    GuardrailError,
    GuardSplit,
    Invalid,
    NotConfigured,
    ParamError,
    Plan,
    Revision,
    Snapshot,
    Subject,
    TargetNotFound,
    Transient,
)
from actions.kinds.cordon_node import CordonNode
from actions.kinds.restart_lws_group import RestartLwsGroup
from actions.kinds.rollback_router_config import RollbackRouterConfig
from actions.kinds.scale_lws import ScaleLws
from actions.kinds.set_enforce_eager import SetEnforceEager
from actions.kinds.update_gateway_limits import UpdateGatewayLimits

KINDS: dict[str, ActionKind] = {
    kind.name: kind
    for kind in (
        ScaleLws(),
        SetEnforceEager(),
        RollbackRouterConfig(),
        RestartLwsGroup(),
        CordonNode(),
        UpdateGatewayLimits(),
    )
}


def kind_for(name: str) -> ActionKind:
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        known = ", ".join(KINDS)
        raise ParamError("kind", f"unknown action kind {name!r}; one of {known}") from None


__all__ = [
    "KINDS",
    "ActionError",
    "ActionKind",
    "Conflict",
    "Context",
    "Forbidden",
    "GuardSplit",
    "GuardrailError",
    "Invalid",
    "NotConfigured",
    "ParamError",
    "Plan",
    "Revision",
    "Snapshot",
    "Subject",
    "TargetNotFound",
    "Transient",
    "kind_for",
]
