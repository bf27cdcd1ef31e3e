"""scale_lws: set or add replicas (groups) of a LeaderWorkerSet via its /scale subresource."""

from __future__ import annotations

from django.conf import settings

from actions.kinds.base import (
    ActionKind,
    Context,
    GuardrailError,
    GuardSplit,
    ParamError,
    Plan,
    Snapshot,
    Subject,
    check_params,
    exactly_one,
    int_param,
    lws_subject,
    name_param,
    namespace_param,
)
from actions.kinds.diff import state_diff
from actions.kinds.lws_pods import leader_name
from console.texts import Msg, msg


def _bounds() -> tuple[int, int, int]:
    return (
        int(settings.ACTIONS_SCALE_MIN_REPLICAS),
        int(settings.ACTIONS_SCALE_MAX_REPLICAS),
        int(settings.ACTIONS_SCALE_MAX_STEP),
    )


class ScaleLws(ActionKind):
    name = "scale_lws"
    title = "Scale a LeaderWorkerSet"
    risky = False
    undoable = True

    def clean(self, params: dict) -> dict:
        check_params(params, {"namespace", "lws", "replicas", "replicas_delta"})
        low, high, step = _bounds()
        out: dict[str, str | int] = {
            "namespace": namespace_param(params),
            "lws": name_param(params, "lws"),
        }
        which = exactly_one(params, ("replicas", "replicas_delta"))
        if which == "replicas":
            out["replicas"] = int_param(params, "replicas", low=low, high=high)
        else:
            out["replicas_delta"] = int_param(params, "replicas_delta", low=-step, high=step)
            if out["replicas_delta"] == 0:
                raise ParamError("replicas_delta", msg("actions.param.not_zero"))
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
        # The LWS itself, not its /scale view: the same spec.replicas and resourceVersion,
        # plus status.readyReplicas, which the scale-down approval rule compares against.
        lws = api.get_lws(params["namespace"], params["lws"])
        snap = self._snapshot(lws)
        ready = (lws.get("status") or {}).get("readyReplicas")
        return Snapshot(
            snap.resource_version,
            snap.state,
            {**snap.identity, "ready_replicas": int(ready or 0)},
        )

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        low, high, step = _bounds()
        have = current.state["replicas"]
        want = params.get("replicas", have + params.get("replicas_delta", 0))
        where = f"{params['namespace']}/{params['lws']}"
        if want != have:
            # Re-checked at every attempt: after a 409 the current count may have moved.
            if not low <= want <= high:
                raise GuardrailError(
                    msg("actions.scale.range", where=where, want=want, low=low, high=high)
                )
            if abs(want - have) > step:
                raise GuardrailError(
                    msg(
                        "actions.scale.step",
                        where=where,
                        have=have,
                        want=want,
                        step=abs(want - have),
                        max=step,
                    )
                )
        desired = {"replicas": want}
        if want == have:
            summary = msg("actions.scale.unchanged", where=where, have=have)
        else:
            summary = msg("actions.scale.summary", where=where, have=have, want=want)
        warnings = []
        if want < have:
            warnings.append(msg("actions.scale.down", low=want, high=have - 1))
        elif want > have:
            warnings.append(msg("actions.scale.up"))
        return Plan.of(desired, state_diff(current.state, desired, where), summary, warnings)

    def _patch(self, api, params, current: Snapshot, plan: Plan, dry_run: bool) -> dict:
        # resourceVersion in a merge patch is a precondition: 409 if the LWS moved.
        body = {
            "metadata": {"resourceVersion": current.resource_version},
            "spec": {"replicas": plan.desired["replicas"]},
        }
        return api.patch_scale(params["namespace"], params["lws"], body, dry_run=dry_run)

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        answered = self._patch(api, params, current, plan, dry_run=True)
        return msg(
            "actions.scale.dry_run",
            have=current.state["replicas"],
            want=answered["spec"]["replicas"],
        )

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        if plan.desired == current.state:
            return current
        return self._snapshot(self._patch(api, params, current, plan, dry_run=False))

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        scale = api.get_scale(params["namespace"], params["lws"])
        have = (scale.get("spec") or {}).get("replicas")
        running = (scale.get("status") or {}).get("replicas")
        want = plan.desired["replicas"]
        if have != want:
            return False, msg("actions.scale.verify_wrong", have=have, want=want)
        return True, msg("actions.scale.verify_ok", want=want, running=running)

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        return [lws_subject(params["namespace"], params["lws"])]

    def approval_note(
        self, params: dict, current: Snapshot | None, plan: Plan | None
    ) -> Msg | None:
        """A scale-down more than ACTIONS_SCALE_MAX_STEP below the groups ready now needs a
        second person: the step guardrail counts from spec.replicas, so two small steps in
        a row (the second before LWS drained the first) would otherwise remove more."""
        where = f"{params['namespace']}/{params['lws']}"
        if current is None or plan is None:
            if params.get("replicas_delta", 0) < 0 or "replicas" in params:
                return msg("actions.scale.unread", where=where)
            return None
        step = _bounds()[2]
        ready = int(current.identity.get("ready_replicas") or 0)
        want = plan.desired["replicas"]
        if ready - want > step:
            return msg("actions.scale.below_ready", ready=ready, where=where, want=want, step=step)
        return None

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        return {
            "namespace": params["namespace"],
            "lws": params["lws"],
            "replicas": before.state["replicas"],
        }

    def guard_split(self, params: dict, before: Snapshot, plan: Plan) -> GuardSplit | None:
        """A scale-up is judged on the new groups against the old ones; a scale-down
        leaves no changed pod to look at (the remaining groups take the load): fleet-wide."""
        have, want = int(before.state.get("replicas") or 0), int(plan.desired.get("replicas") or 0)
        if want <= have or have == 0:
            return None
        lws = params["lws"]
        return GuardSplit.of(
            msg("actions.split.new_groups", groups=_groups(have, want)),
            msg("actions.split.old_groups", groups=_groups(0, have)),
            changed=tuple(leader_name(lws, i) for i in range(have, want)),
        )


def _groups(low: int, high: int) -> str:
    return str(low) if high - low == 1 else f"{low}-{high - 1}"
