"""set_enforce_eager: add or remove `--enforce-eager` in the vLLM invocation of the `vllm`
container in the LWS leader and worker templates (the CUDA-graph-capture crash fix).

A JSON patch guarded by a `test` of metadata.resourceVersion and of each old value: LWS is
a CRD, so strategic merge is not available, and a merge patch would replace the whole
containers list.
"""

from __future__ import annotations

from actions.kinds import eager_flag
from actions.kinds.base import (
    ActionError,
    ActionKind,
    Context,
    GuardSplit,
    Plan,
    Snapshot,
    Subject,
    bool_param,
    check_params,
    lws_subject,
    name_param,
    namespace_param,
)
from actions.kinds.diff import unified
from console.texts import Msg, msg

CONTAINER = "vllm"
TEMPLATES = ("leaderTemplate", "workerTemplate")


def _invocations(lws: dict) -> dict:
    """{template: {"container", "field", "index", "value", "on"} | None} for both templates."""
    tpl = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    out = {}
    for key in TEMPLATES:
        containers = ((tpl.get(key) or {}).get("spec") or {}).get("containers") or []
        found = None
        for i, container in enumerate(containers):
            if container.get("name") == CONTAINER:
                where = eager_flag.locate(container)
                if where is not None:
                    found = {"container": i, **where, "on": eager_flag.is_on(where)}
                break
        out[key] = found
    return out


def _enabled(invocations: dict) -> bool:
    found = [v for v in invocations.values() if v]
    return bool(found) and all(v["on"] for v in found)


def _path(template: str, inv: dict) -> str:
    base = f"/spec/leaderWorkerTemplate/{template}/spec/containers/{inv['container']}"
    return f"{base}/{inv['field']}"


def _readable(inv: dict | None) -> str:
    if not inv:
        return "(no vLLM invocation)\n"
    if inv["index"] is None:
        return "\n".join(inv["value"]) + "\n"
    # One flag per line, so the diff points at the flag and not at a 300-character line.
    return inv["value"][inv["index"]].replace(" --", " \\\n  --") + "\n"


class SetEnforceEager(ActionKind):
    name = "set_enforce_eager"
    title = "Toggle --enforce-eager (disable CUDA graphs)"
    risky = True
    undoable = True

    def clean(self, params: dict) -> dict:
        check_params(params, {"namespace", "lws", "enabled"})
        return {
            "namespace": namespace_param(params),
            "lws": name_param(params, "lws"),
            "enabled": bool_param(params, "enabled", default=True),
        }

    def target(self, params: dict) -> str:
        return f"leaderworkerset/{params['namespace']}/{params['lws']}"

    def _snapshot(self, lws: dict) -> Snapshot:
        meta = lws.get("metadata") or {}
        invocations = _invocations(lws)
        return Snapshot(
            resource_version=str(meta.get("resourceVersion") or ""),
            state={"enabled": _enabled(invocations), "invocations": invocations},
            identity={"uid": meta.get("uid", ""), "generation": meta.get("generation")},
        )

    def read(self, api, params: dict) -> Snapshot:
        return self._snapshot(api.get_lws(params["namespace"], params["lws"]))

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        where = f"{params['namespace']}/{params['lws']}"
        enabled = params["enabled"]
        invocations = current.state["invocations"]
        if not any(invocations.values()):
            raise ActionError(msg("actions.eager.no_invocation", container=CONTAINER, where=where))
        desired_inv: dict[str, dict | None] = {}
        diffs = []
        for key, inv in invocations.items():
            if inv is None:
                desired_inv[key] = None
                continue
            new = {**inv, "value": eager_flag.toggled(inv, enabled), "on": enabled}
            desired_inv[key] = new
            if new["value"] != inv["value"]:
                diffs.append(unified(_readable(inv), _readable(new), f"{where} {key} vllm"))
        desired = {"enabled": enabled, "invocations": desired_inv}
        if desired == current.state:
            state = "actions.eager.has" if enabled else "actions.eager.has_not"
            return Plan.of(desired, f"(no change to {where})\n", msg(state, where=where))
        warnings = [msg("actions.eager.rolls", where=where)]
        if enabled:
            warnings.append(msg("actions.eager.slower"))
        verb = "actions.eager.add" if enabled else "actions.eager.remove"
        return Plan.of(desired, "".join(diffs), msg(verb, where=where), warnings)

    def _ops(self, current: Snapshot, plan: Plan) -> list[dict]:
        ops = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": current.resource_version}
        ]
        for key, inv in current.state["invocations"].items():
            new = plan.desired["invocations"].get(key)
            if not inv or not new or new["value"] == inv["value"]:
                continue
            path = _path(key, inv)
            if inv["value"]:
                ops.append({"op": "test", "path": path, "value": inv["value"]})
                ops.append({"op": "replace", "path": path, "value": new["value"]})
            else:  # an args list that did not exist yet
                ops.append({"op": "add", "path": path, "value": new["value"]})
        return ops

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        if plan.desired == current.state:
            return msg("actions.dry_run.not_needed")
        answered = api.patch_lws(
            params["namespace"], params["lws"], self._ops(current, plan), dry_run=True
        )
        ok = _enabled(_invocations(answered)) == plan.desired["enabled"]
        return msg("actions.dry_run.accepted" if ok else "actions.eager.dry_run_no_flag")

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        if plan.desired == current.state:
            return current
        return self._snapshot(
            api.patch_lws(params["namespace"], params["lws"], self._ops(current, plan))
        )

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        lws = api.get_lws(params["namespace"], params["lws"])
        invocations = _invocations(lws)
        wrong = [
            key
            for key, inv in invocations.items()
            if inv and plan.desired["invocations"].get(key) and inv["on"] != plan.desired["enabled"]
        ]
        on = plan.desired["enabled"]
        if wrong:
            which = "actions.eager.not_present" if on else "actions.eager.not_absent"
            return False, msg(which, where=", ".join(wrong))
        status = lws.get("status") or {}
        return True, msg(
            "actions.eager.present" if on else "actions.eager.absent",
            updated=status.get("updatedReplicas", "?"),
            replicas=status.get("replicas", "?"),
        )

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        return [lws_subject(params["namespace"], params["lws"])]

    def guard_split(self, params: dict, before: Snapshot, plan: Plan) -> GuardSplit | None:
        """LWS rolls the new template one group at a time: the groups on it against the
        groups not rolled yet, found at each check; once none is left, fleet-wide."""
        if plan.desired.get("enabled") == before.state.get("enabled"):
            return None
        rolled = "actions.split.rolled_with" if plan.desired.get("enabled") else None
        return GuardSplit.of(
            msg(rolled or "actions.split.rolled_without"),
            msg("actions.split.not_rolled"),
            by_revision=True,
        )

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        return {
            "namespace": params["namespace"],
            "lws": params["lws"],
            "enabled": before.state["enabled"],
        }
