"""Items read from the namespace's router and gateway ConfigMaps (the objects the
rollback_router_config and update_gateway_limits actions change)."""

from __future__ import annotations

import json

from console.texts import Msg, msg
from readiness.texts import listing
from readiness.verifiers import Finding, failed, passed

ROUTER_KEY = "dynamic_config.json"
GATEWAY_KEY = "config.json"
FALLBACK_KEYS = ("fallback_routing_logic", "fallback_routing")
# The gateway's limit keys, by what they limit (a phrase id); 0 or absent means "no limit".
LIMITS = {
    "readiness.limit.rps": ("rate_limit_rps",),
    "readiness.limit.tokens": ("rate_limit_tokens_per_minute", "max_tokens_per_minute"),
    "readiness.limit.concurrency": ("max_concurrent_requests", "max_concurrency"),
}


def _data(configmap: dict, key: str, where: Msg) -> dict | Msg:
    """The JSON object under `key`, or the problem that keeps it from being read."""
    raw = (configmap.get("data") or {}).get(key)
    if raw is None:
        return msg("readiness.config.no_key", where=where, data_key=key)
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return msg("readiness.config.not_json", where=where, data_key=key, detail=str(exc))
    if not isinstance(value, dict):
        return msg("readiness.config.not_object", where=where, data_key=key)
    return value


def _limit(value) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def router_fallback(configmap: dict, where: Msg) -> Finding:
    config = _data(configmap, ROUTER_KEY, where)
    if isinstance(config, Msg):
        return failed(msg("readiness.router.unreadable", problem=config), [config])
    logic = config.get("routing_logic")
    fallback = next((config[k] for k in FALLBACK_KEYS if k in config), None)
    evidence = [
        msg(
            "readiness.router.evidence",
            where=where,
            data_key=ROUTER_KEY,
            logic=repr(logic),
            fallback=repr(fallback),
        )
    ]
    if logic == "roundrobin":
        return passed(msg("readiness.router.roundrobin"), evidence)
    if fallback == "roundrobin":
        return passed(msg("readiness.router.falls_back", logic=str(logic)), evidence)
    return failed(msg("readiness.router.no_fallback", logic=repr(logic)), evidence)


def _gateway(configmap: dict, where: Msg) -> dict | Finding:
    """The gateway config, or the failed Finding saying why it cannot be read."""
    config = _data(configmap, GATEWAY_KEY, where)
    if isinstance(config, Msg):
        return failed(msg("readiness.gateway.unreadable", problem=config), [config])
    return config


def gateway_limits(configmap: dict, where: Msg) -> Finding:
    config = _gateway(configmap, where)
    if isinstance(config, Finding):
        return config
    evidence, missing = [], []
    for what, keys in LIMITS.items():
        set_ = [(k, config[k]) for k in keys if k in config]
        value = max((_limit(v) for _, v in set_), default=0)
        shown = (
            ", ".join(f"{k}={v}" for k, v in set_)
            if set_
            else msg("readiness.gateway.no_key", keys=" / ".join(keys))
        )
        evidence.append(msg("readiness.gateway.evidence", where=where, what=msg(what), shown=shown))
        if value <= 0:
            missing.append(msg(what))
    if missing:
        return failed(msg("readiness.gateway.no_limit", what=listing(missing)), evidence)
    return passed(msg("readiness.gateway.limited"), evidence)


def max_tokens_cap(configmap: dict, where: Msg) -> Finding:
    config = _gateway(configmap, where)
    if isinstance(config, Finding):
        return config
    cap = _limit(config.get("max_tokens_cap"))
    evidence = [
        msg(
            "readiness.gateway.max_tokens_evidence",
            where=where,
            data_key=GATEWAY_KEY,
            value=repr(config.get("max_tokens_cap")),
        )
    ]
    if cap <= 0:
        return failed(msg("readiness.gateway.no_cap"), evidence)
    return passed(msg("readiness.gateway.cap", cap=f"{cap:g}"), evidence)
