"""cordon_node: mark a GPU node unschedulable and taint it (the ECC-error fix), optionally
restarting every LWS group with a pod on it so LWS reschedules them elsewhere.

`cordon: false` is the undo: uncordon and remove our taint (never a restart). A guardrail
refuses to cordon more than ACTIONS_MAX_CORDONED_NODES GPU nodes: during an incident a
runaway "cordon the bad node" loop must not drain the fleet's capacity.
"""

from __future__ import annotations

import contextlib
import re

from django.conf import settings

from actions.kinds.base import (
    ActionError,
    ActionKind,
    Conflict,
    Context,
    GuardrailError,
    GuardSplit,
    ParamError,
    Plan,
    Snapshot,
    Subject,
    TargetNotFound,
    bool_param,
    check_params,
    lws_subject,
    name_param,
    namespace_param,
)
from actions.kinds.diff import state_diff
from actions.kinds.lws_pods import leader_name, lws_group, terminating
from console.texts import Msg, join, msg

TAINT_KEY = "console.llm/cordoned"
GPU_RESOURCE = "nvidia.com/gpu"


def reason_slug(reason: str) -> str:
    """A taint value (label-value syntax, <= 63 chars) from the free-text reason."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", reason.lower()).strip("-._")[:63].strip("-._")
    return slug or "cordoned"


def is_gpu_node(node: dict) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    capacity = (node.get("status") or {}).get("capacity") or {}
    return "nvidia.com/gpu.count" in labels or str(capacity.get(GPU_RESOURCE, "0")) not in ("0", "")


class CordonNode(ActionKind):
    name = "cordon_node"
    title = "Cordon a GPU node"
    risky = True
    undoable = True

    def clean(self, params: dict) -> dict:
        allowed = {"node", "reason", "restart_groups", "cordon", "keep_unschedulable", "namespace"}
        check_params(params, allowed)
        out = {
            "node": name_param(params, "node", label=False),
            "cordon": bool_param(params, "cordon", default=True),
        }
        if out["cordon"]:
            reason = params.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise ParamError("reason", msg("actions.param.reason"))
            if len(reason.strip()) > 200:
                raise ParamError("reason", msg("actions.param.too_long", limit=200))
            out["reason"] = reason.strip()
            out["restart_groups"] = bool_param(params, "restart_groups", default=False)
            if out["restart_groups"]:
                out["namespace"] = namespace_param(params)
        else:
            if bool_param(params, "restart_groups", default=False):
                raise ParamError("restart_groups", msg("actions.param.restart_with_cordon"))
            out["keep_unschedulable"] = bool_param(params, "keep_unschedulable", default=False)
        return out

    def target(self, params: dict) -> str:
        return f"node/{params['node']}"

    def read(self, api, params: dict) -> Snapshot:
        name = params["node"]
        node = api.get_node(name)
        meta, spec = node.get("metadata") or {}, node.get("spec") or {}
        taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
        ours = next((t for t in taints if t.get("key") == TAINT_KEY), None)
        state: dict = {
            "unschedulable": bool(spec.get("unschedulable")),
            "taint": {k: ours.get(k) for k in ("key", "value", "effect")} if ours else None,
        }
        identity: dict = {"uid": meta.get("uid", ""), "taints": taints}
        if params["cordon"]:
            identity["cordoned_gpu_nodes"] = sorted(
                n["metadata"]["name"]
                for n in api.list_nodes()
                if (n.get("spec") or {}).get("unschedulable")
                and is_gpu_node(n)
                and n["metadata"]["name"] != name
            )
        if params.get("restart_groups"):
            pods, leaders = self._lws_pods_on(api, params["namespace"], name)
            state["lws_pods_on_node"] = pods
            identity["leaders"] = leaders
        return Snapshot(str(meta.get("resourceVersion") or ""), state, identity)

    def _lws_pods_on(self, api, namespace: str, node: str) -> tuple[list[str], list[dict]]:
        """Names of live LWS pods on the node, and the leader pod of each of their groups."""
        on_node = [
            p
            for p in api.list_pods(namespace, field_selector=f"spec.nodeName={node}")
            if lws_group(p) and not terminating(p)
        ]
        leaders = []
        for lws, group in sorted({g for p in on_node if (g := lws_group(p))}):
            name = leader_name(lws, group)
            try:
                leader = api.get_pod(namespace, name)
            except TargetNotFound:
                continue  # between delete and re-create: LWS is on it already
            if not terminating(leader):
                uid = leader["metadata"]["uid"]
                leaders.append({"lws": lws, "group": group, "pod": name, "uid": uid})
        return sorted(p["metadata"]["name"] for p in on_node), leaders

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        name = params["node"]
        if not params["cordon"]:
            desired: dict = {"unschedulable": params["keep_unschedulable"], "taint": None}
            summary = msg("actions.cordon.uncordon", node=name, taint=TAINT_KEY)
            if params["keep_unschedulable"]:
                summary = msg("actions.cordon.untaint", node=name, taint=TAINT_KEY)
            if desired == current.state:
                summary = msg("actions.cordon.not_cordoned", node=name)
            return Plan.of(desired, state_diff(current.state, desired, f"node/{name}"), summary)
        others = current.identity.get("cordoned_gpu_nodes") or []
        limit = int(settings.ACTIONS_MAX_CORDONED_NODES)
        if not current.state["unschedulable"] and len(others) >= limit:
            raise GuardrailError(
                msg("actions.cordon.limit", count=len(others), nodes=", ".join(others), limit=limit)
            )
        taint = {"key": TAINT_KEY, "value": reason_slug(params["reason"]), "effect": "NoSchedule"}
        desired = {"unschedulable": True, "taint": taint}
        warnings = [msg("actions.cordon.keeps_running")]
        summary = msg("actions.cordon.summary", node=name, reason=params["reason"])
        if params.get("restart_groups"):
            desired["lws_pods_on_node"] = []
            groups = ", ".join(
                f"{g['lws']}/{g['group']}" for g in current.identity.get("leaders", [])
            )
            if groups:
                summary = msg(
                    "actions.cordon.summary_restart",
                    node=name,
                    reason=params["reason"],
                    groups=groups,
                )
                warnings = [msg("actions.cordon.drops", groups=groups)]
        if desired == current.state:
            summary = msg("actions.cordon.already", node=name)
        diff = state_diff(current.state, desired, f"node/{name}")
        return Plan.of(desired, diff, summary, warnings)

    def _node_ops(self, current: Snapshot, plan: Plan) -> list[dict]:
        keep = [t for t in current.identity.get("taints", []) if t.get("key") != TAINT_KEY]
        taints = keep + ([plan.desired["taint"]] if plan.desired["taint"] else [])
        # The whole taints list is replaced; the resourceVersion test makes that safe.
        return [
            {"op": "test", "path": "/metadata/resourceVersion", "value": current.resource_version},
            {"op": "add", "path": "/spec/unschedulable", "value": plan.desired["unschedulable"]},
            {"op": "add", "path": "/spec/taints", "value": taints},
        ]

    def _node_changes(self, current: Snapshot, plan: Plan) -> bool:
        return any(current.state[k] != plan.desired[k] for k in ("unschedulable", "taint"))

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        steps = []
        if self._node_changes(current, plan):
            api.patch_node(params["node"], self._node_ops(current, plan), dry_run=True)
            steps.append(msg("actions.cordon.node_accepted"))
        if "lws_pods_on_node" in plan.desired:
            for leader in current.identity.get("leaders", []):
                api.delete_pod(params["namespace"], leader["pod"], leader["uid"], dry_run=True)
                steps.append(msg("actions.cordon.would_delete", pod=leader["pod"]))
        if not steps:
            return msg("actions.cordon.dry_run_nothing")
        return msg("actions.cordon.dry_run", steps=join(steps))

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        if self._node_changes(current, plan):
            api.patch_node(params["node"], self._node_ops(current, plan))
        # Restart after the cordon, so the recreated pods avoid this node.
        if "lws_pods_on_node" in plan.desired:
            for leader in current.identity.get("leaders", []):
                # Already gone or replaced (404/409): that group restarted anyway.
                with contextlib.suppress(TargetNotFound, Conflict):
                    api.delete_pod(params["namespace"], leader["pod"], leader["uid"])
        return self.read(api, params)

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        now = self.read(api, params)
        name = params["node"]
        if self._node_changes(now, plan):
            return False, msg(
                "actions.cordon.verify_node",
                node=name,
                unschedulable=str(now.state["unschedulable"]),
                taint=str(now.state["taint"]),
            )
        pods = now.state.get("lws_pods_on_node")
        if pods:
            return False, msg("actions.cordon.verify_pods", node=name, pods=str(pods))
        if not params["cordon"]:
            return True, msg("actions.cordon.verify_untainted", node=name, taint=TAINT_KEY)
        which = "actions.cordon.verify_moved" if pods is not None else "actions.cordon.verify_ok"
        return True, msg(which, node=name, taint=TAINT_KEY)

    def already_applied(self, current: Snapshot, before: Snapshot, plan: Plan) -> bool:
        if self._node_changes(current, plan):
            return False
        # The restarts landed when none of the leaders we meant to delete is still there.
        still = {leader["uid"] for leader in current.identity.get("leaders", [])}
        return not any(leader["uid"] in still for leader in before.identity.get("leaders", []))

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        node = params["node"]
        found = [Subject({"node": node}, msg("actions.subject.node", node=node))]
        # Restarting groups changes their LWS too (known once the pods were read).
        leaders = (current.identity.get("leaders") or []) if current else []
        for lws in sorted({leader["lws"] for leader in leaders}):
            subject = lws_subject(params["namespace"], lws)
            restarted = msg("actions.subject.restarted", subject=subject.name)
            found.append(Subject(subject.labels, restarted))
        return found

    def guard_split(self, params: dict, before: Snapshot, plan: Plan) -> GuardSplit | None:
        """The groups this cordon restarted (rescheduled elsewhere) against the others.
        A cordon without restarts moves no running pod: fleet-wide (a trend)."""
        if not params["cordon"] or "lws_pods_on_node" not in plan.desired:
            return None
        leaders = before.identity.get("leaders") or []
        if not leaders:
            return None
        groups = ", ".join(f"{g['lws']}/{g['group']}" for g in leaders)
        return GuardSplit.of(
            msg("actions.split.rescheduled", groups=groups),
            msg("actions.split.other_groups"),
            changed=tuple(g["pod"] for g in leaders),
        )

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        if not params["cordon"]:
            raise ActionError(msg("actions.cordon.no_undo"))
        return {
            "node": params["node"],
            "cordon": False,
            "keep_unschedulable": before.state["unschedulable"],
        }
