"""update_gateway_limits: change limits in the gateway ConfigMap's `config.json`
(max_tokens cap, rate limit, long-context routing threshold and pool).

Only the keys asked for change; every other key of config.json is kept as it is.
"""

from __future__ import annotations

import json

from actions.kinds.base import (
    ActionError,
    ActionKind,
    Conflict,
    Context,
    ParamError,
    Plan,
    Snapshot,
    Subject,
    check_params,
    configmap_subjects,
    int_param,
    name_param,
    namespace_param,
)
from actions.kinds.diff import state_diff
from console.texts import Msg, join, msg

DEFAULT_CONFIGMAP = "llm-gateway-config"
CONFIG_KEY = "config.json"
# key: (low, high); None for the pool name (a LeaderWorkerSet name)
LIMITS: dict[str, tuple[int, int] | None] = {
    "max_tokens_cap": (256, 131072),
    "rate_limit_rps": (0, 100000),  # 0 = no limit
    "rate_limit_burst": (0, 1000000),
    "long_context_threshold_tokens": (1024, 1048576),
    "long_context_pool": None,
}


def _config(cm: dict, where: str) -> dict:
    raw = (cm.get("data") or {}).get(CONFIG_KEY)
    if raw is None:
        raise ActionError(msg("actions.gateway.no_key", where=where, item=CONFIG_KEY))
    try:
        config = json.loads(raw)
    except ValueError as exc:
        said = msg("actions.gateway.not_json", where=where, item=CONFIG_KEY, detail=str(exc))
        raise ActionError(said) from None
    if not isinstance(config, dict):
        raise ActionError(msg("actions.gateway.not_object", where=where, item=CONFIG_KEY))
    return config


def _snapshot(cm: dict, where: str) -> Snapshot:
    meta = cm.get("metadata") or {}
    config = _config(cm, where)
    return Snapshot(
        resource_version=str(meta.get("resourceVersion") or ""),
        state={key: config.get(key) for key in LIMITS},
        identity={"uid": meta.get("uid", "")},
    )


class UpdateGatewayLimits(ActionKind):
    name = "update_gateway_limits"
    title = "Update gateway limits"
    risky = False
    undoable = True

    def clean(self, params: dict) -> dict:
        check_params(params, {"namespace", "configmap", *LIMITS})
        out: dict = {
            "namespace": namespace_param(params),
            "configmap": name_param(params, "configmap", default=DEFAULT_CONFIGMAP, label=False),
        }
        for key, bounds in LIMITS.items():
            if params.get(key) in (None, ""):
                continue
            if bounds is None:
                out[key] = name_param(params, key)
            else:
                out[key] = int_param(params, key, low=bounds[0], high=bounds[1])
        if not set(out) & set(LIMITS):
            raise ParamError(
                "max_tokens_cap", msg("actions.param.at_least_one", keys=", ".join(LIMITS))
            )
        return out

    def target(self, params: dict) -> str:
        return f"configmap/{params['namespace']}/{params['configmap']}"

    def _where(self, params: dict) -> str:
        return f"{params['namespace']}/{params['configmap']}"

    def read(self, api, params: dict) -> Snapshot:
        cm = api.get_configmap(params["namespace"], params["configmap"])
        return _snapshot(cm, self._where(params))

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        where = self._where(params)
        desired = {**current.state, **{k: params[k] for k in LIMITS if k in params}}
        changes = [
            f"{k} {current.state[k]} -> {desired[k]}"
            for k in LIMITS
            if desired[k] != current.state[k]
        ]
        if not changes:
            unchanged = msg("actions.gateway.unchanged", where=where)
            return Plan.of(desired, f"(no change to {where})\n", unchanged)
        warnings = []
        old_cap, new_cap = current.state.get("max_tokens_cap"), desired["max_tokens_cap"]
        if isinstance(old_cap, int) and isinstance(new_cap, int) and new_cap < old_cap:
            warnings.append(msg("actions.gateway.capped", cap=new_cap))
        rps, burst = desired["rate_limit_rps"], desired["rate_limit_burst"]
        if isinstance(rps, int) and isinstance(burst, int) and 0 < burst < rps:
            warnings.append(msg("actions.gateway.burst"))
        return Plan.of(
            desired,
            state_diff(current.state, desired, f"{where} {CONFIG_KEY}"),
            msg("actions.gateway.summary", where=where, changes="; ".join(changes)),
            warnings,
        )

    def _ops(self, api, params: dict, current: Snapshot, plan: Plan) -> list[dict]:
        # Re-read the whole config.json (the snapshot holds only our keys) and refuse if
        # it is not the version that was planned against: other keys are kept verbatim.
        cm = api.get_configmap(params["namespace"], params["configmap"])
        rv = str((cm.get("metadata") or {}).get("resourceVersion") or "")
        if rv != current.resource_version:
            raise Conflict(
                msg(
                    "actions.gateway.moved",
                    where=self._where(params),
                    before=current.resource_version,
                    now=rv,
                )
            )
        old = cm["data"][CONFIG_KEY]
        config = _config(cm, self._where(params))
        config.update({k: plan.desired[k] for k in LIMITS if plan.desired[k] is not None})
        path = f"/data/{CONFIG_KEY.replace('~', '~0').replace('/', '~1')}"
        return [
            {"op": "test", "path": "/metadata/resourceVersion", "value": current.resource_version},
            {"op": "test", "path": path, "value": old},
            {"op": "replace", "path": path, "value": json.dumps(config, indent=2)},
        ]

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        if plan.desired == current.state:
            return msg("actions.dry_run.not_needed")
        ops = self._ops(api, params, current, plan)
        api.patch_configmap(params["namespace"], params["configmap"], ops, dry_run=True)
        return msg("actions.dry_run.accepted")

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        if plan.desired == current.state:
            return current
        ops = self._ops(api, params, current, plan)
        cm = api.patch_configmap(params["namespace"], params["configmap"], ops)
        return _snapshot(cm, self._where(params))

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        now = self.read(api, params)
        wrong = [k for k in LIMITS if now.state[k] != plan.desired[k]]
        if wrong:
            expected = (
                msg(
                    "actions.gateway.verify_wrong",
                    item=k,
                    have=str(now.state[k]),
                    want=str(plan.desired[k]),
                )
                for k in wrong
            )
            return False, join(expected)
        return True, msg("actions.gateway.verify_ok", item=CONFIG_KEY, version=now.resource_version)

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        return configmap_subjects(params["namespace"], params["configmap"])

    def configmap_of(self, params: dict) -> str | None:
        return str(params.get("configmap") or DEFAULT_CONFIGMAP)

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        old = before.state
        restore = {k: old[k] for k in LIMITS if k in params and old[k] is not None}
        if not restore:
            raise ActionError(msg("actions.gateway.no_undo"))
        return {"namespace": params["namespace"], "configmap": params["configmap"], **restore}
