"""scale_lws: set or add replicas (groups) of a LeaderWorkerSet via its /scale subresource."""

from __future__ import annotations

from runbooks.actions.kinds.base import (
    ActionKind,
    Context,
    GuardrailError,
    ParamError,
    Plan,
    Snapshot,
    check_params,
    exactly_one,
    int_param,
    name_param,
    namespace_param,
    setting,
)
from runbooks.actions.kinds.diff import state_diff


def _bounds() -> tuple[int, int, int]:
    return (
        int(setting("ACTIONS_SCALE_MIN_REPLICAS", 1)),
        int(setting("ACTIONS_SCALE_MAX_REPLICAS", 16)),
        int(setting("ACTIONS_SCALE_MAX_STEP", 4)),
    )


class ScaleLws(ActionKind):
    name = "scale_lws"
    title = "Scale a LeaderWorkerSet"
    risky = False
    undoable = True

    def clean(self, params: dict) -> dict:
        check_params(params, {"namespace", "lws", "replicas", "replicas_delta"})
        low, high, step = _bounds()
        out = {"namespace": namespace_param(params), "lws": name_param(params, "lws")}
        which = exactly_one(params, ("replicas", "replicas_delta"))
        if which == "replicas":
            out["replicas"] = int_param(params, "replicas", low=low, high=high)
        else:
            out["replicas_delta"] = int_param(params, "replicas_delta", low=-step, high=step)
            if out["replicas_delta"] == 0:
                raise ParamError("replicas_delta", "must not be 0")
        return out

    def target(self, params: dict) -> str:
        return f"leaderworkerset/{params['namespace']}/{params['lws']}"

    def _snapshot(self, scale: dict) -> Snapshot:
        meta = scale.get("metadata") or {}
        return Snapshot(
            resource_version=str(meta.get("resourceVersion") or ""),
            state={"replicas": int((scale.get("spec") or {}).get("replicas") or 0)},
            identity={"uid": meta.get("uid", "")},
        )

    def read(self, api, params: dict) -> Snapshot:
        return self._snapshot(api.get_scale(params["namespace"], params["lws"]))

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        low, high, step = _bounds()
        have = current.state["replicas"]
        want = params.get("replicas", have + params.get("replicas_delta", 0))
        where = f"{params['namespace']}/{params['lws']}"
        if want != have:
            # Re-checked at every attempt: after a 409 the current count may have moved.
            if not low <= want <= high:
                raise GuardrailError(
                    f"{where} would have {want} groups; allowed range is {low}..{high} "
                    "(ACTIONS_SCALE_MIN_REPLICAS / ACTIONS_SCALE_MAX_REPLICAS)"
                )
            if abs(want - have) > step:
                raise GuardrailError(
                    f"scaling {where} from {have} to {want} groups is a step of "
                    f"{abs(want - have)}; at most {step} per action (ACTIONS_SCALE_MAX_STEP)"
                )
        desired = {"replicas": want}
        if want == have:
            summary = f"{where} already has {have} groups; nothing to change"
        else:
            summary = f"Scale {where} from {have} to {want} groups"
        warnings = []
        if want < have:
            warnings.append(
                f"scale-down deletes the highest-index groups ({want}..{have - 1}) and their "
                "in-flight requests"
            )
        elif want > have:
            warnings.append("new groups need free GPU nodes and take minutes to load the model")
        return Plan(desired, state_diff(current.state, desired, where), summary, warnings)

    def _patch(self, api, params, current: Snapshot, plan: Plan, dry_run: bool) -> dict:
        # resourceVersion in a merge patch is a precondition: 409 if the LWS moved.
        body = {
            "metadata": {"resourceVersion": current.resource_version},
            "spec": {"replicas": plan.desired["replicas"]},
        }
        return api.patch_scale(params["namespace"], params["lws"], body, dry_run=dry_run)

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> str:
        answered = self._patch(api, params, current, plan, dry_run=True)
        return (
            "server dry run accepted: spec.replicas "
            f"{current.state['replicas']} -> {answered['spec']['replicas']}"
        )

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        if plan.desired == current.state:
            return current
        return self._snapshot(self._patch(api, params, current, plan, dry_run=False))

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, str]:
        scale = api.get_scale(params["namespace"], params["lws"])
        have = (scale.get("spec") or {}).get("replicas")
        running = (scale.get("status") or {}).get("replicas")
        want = plan.desired["replicas"]
        if have != want:
            return False, f"spec.replicas is {have}, expected {want}"
        return True, f"spec.replicas is {want} ({running} groups exist now; LWS is reconciling)"

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        return {
            "namespace": params["namespace"],
            "lws": params["lws"],
            "replicas": before.state["replicas"],
        }
