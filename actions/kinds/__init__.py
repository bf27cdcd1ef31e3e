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
    raw,
    said,
)
from actions.kinds.cordon_node import CordonNode
from actions.kinds.restart_lws_group import RestartLwsGroup
from actions.kinds.rollback_router_config import RollbackRouterConfig
from actions.kinds.scale_lws import ScaleLws
from actions.kinds.set_enforce_eager import SetEnforceEager
from actions.kinds.update_gateway_limits import UpdateGatewayLimits
from console.texts import msg

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
        said = msg("actions.param.unknown_kind", kind=repr(name), known=known)
        raise ParamError("kind", said) from None


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
    "raw",
    "said",
]
