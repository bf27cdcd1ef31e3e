"""Items read from the namespace's router and gateway ConfigMaps (the objects the
rollback_router_config and update_gateway_limits actions change)."""

from __future__ import annotations

import json

from readiness.verifiers import Finding, failed, passed

ROUTER_KEY = "dynamic_config.json"
GATEWAY_KEY = "config.json"
FALLBACK_KEYS = ("fallback_routing_logic", "fallback_routing")
# The gateway's limit keys, by what they limit; 0 or absent means "no limit".
LIMITS = {
    "requests per second": ("rate_limit_rps",),
    "tokens": ("rate_limit_tokens_per_minute", "max_tokens_per_minute"),
    "concurrency": ("max_concurrent_requests", "max_concurrency"),
}


def _data(configmap: dict, key: str, where: str) -> tuple[dict | None, str]:
    raw = (configmap.get("data") or {}).get(key)
    if raw is None:
        return None, f"{where} has no data key {key}"
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return None, f"{where} {key} is not JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"{where} {key} is not a JSON object"
    return value, ""


def _limit(value) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def router_fallback(configmap: dict, where: str) -> Finding:
    config, problem = _data(configmap, ROUTER_KEY, where)
    if config is None:
        return failed(f"The router config cannot be read: {problem}.", [problem])
    logic = config.get("routing_logic")
    fallback = next((config[k] for k in FALLBACK_KEYS if k in config), None)
    evidence = [f"{where} {ROUTER_KEY}: routing_logic {logic!r}, fallback {fallback!r}"]
    if logic == "roundrobin":
        return passed("The router already routes round-robin.", evidence)
    if fallback == "roundrobin":
        return passed(f"The router falls back from {logic} to round-robin.", evidence)
    return failed(
        f"The router routes {logic!r} with no round-robin fallback: when its state is lost, "
        "routing fails instead of spreading requests.",
        evidence,
    )


def _gateway(configmap: dict, where: str) -> dict | Finding:
    """The gateway config, or the failed Finding saying why it cannot be read."""
    config, problem = _data(configmap, GATEWAY_KEY, where)
    if config is None:
        return failed(f"The gateway config cannot be read: {problem}.", [problem])
    return config


def gateway_limits(configmap: dict, where: str) -> Finding:
    config = _gateway(configmap, where)
    if isinstance(config, Finding):
        return config
    evidence, missing = [], []
    for what, keys in LIMITS.items():
        set_ = [(k, config[k]) for k in keys if k in config]
        value = max((_limit(v) for _, v in set_), default=0)
        shown = ", ".join(f"{k}={v}" for k, v in set_) or "no key (" + " / ".join(keys) + ")"
        evidence.append(f"{where} {what}: {shown}")
        if value <= 0:
            missing.append(what)
    if missing:
        return failed(f"The gateway sets no limit on {', '.join(missing)}.", evidence)
    return passed("The gateway limits requests per second, tokens and concurrency.", evidence)


def max_tokens_cap(configmap: dict, where: str) -> Finding:
    config = _gateway(configmap, where)
    if isinstance(config, Finding):
        return config
    cap = _limit(config.get("max_tokens_cap"))
    evidence = [f"{where} {GATEWAY_KEY}: max_tokens_cap={config.get('max_tokens_cap')!r}"]
    if cap <= 0:
        return failed("The gateway does not cap max_tokens.", evidence)
    return passed(f"The gateway caps max_tokens at {cap:g}.", evidence)
