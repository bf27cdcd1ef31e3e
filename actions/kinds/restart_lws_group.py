"""restart_lws_group: delete one group's leader pod so LWS recreates the whole group (the
NCCL-hang fix). The delete carries preconditions.uid, so a retried or redelivered task
can never delete the leader that LWS created in its place.
"""

from __future__ import annotations

from actions.kinds.base import (
    ActionError,
    ActionKind,
    Context,
    GuardrailError,
    GuardSplit,
    Plan,
    Snapshot,
    Subject,
    TargetNotFound,
    check_params,
    exactly_one,
    int_param,
    lws_subject,
    name_param,
    namespace_param,
)
from actions.kinds.diff import state_diff
from actions.kinds.lws_pods import group_of_pod, leader_name
from console.texts import Msg, msg


def read_group(api, namespace: str, lws: str, group: int) -> Snapshot:
    leader = leader_name(lws, group)
    try:
        pod = api.get_pod(namespace, leader)
    except TargetNotFound:
        # Between delete and re-create the group has no leader; that is not an error
        # when re-reading after our own delete, but the group must exist.
        replicas = (api.get_lws(namespace, lws).get("spec") or {}).get("replicas", 0)
        if group >= replicas:
            said = msg(
                "actions.restart.no_group",
                where=f"{namespace}/{lws}",
                replicas=replicas,
                group=group,
            )
            raise TargetNotFound(said) from None
        state = {"group": group, "leader_pod": leader, "uid": "", "phase": "Absent"}
        return Snapshot("", state, {"leader_pod": leader, "uid": ""})
    meta = pod.get("metadata") or {}
    phase = "Terminating" if meta.get("deletionTimestamp") else None
    phase = phase or (pod.get("status") or {}).get("phase") or "Unknown"
    uid = meta.get("uid", "")
    return Snapshot(
        str(meta.get("resourceVersion") or ""),
        {"group": group, "leader_pod": leader, "uid": uid, "phase": phase},
        {"leader_pod": leader, "uid": uid, "node": (pod.get("spec") or {}).get("nodeName")},
    )


class RestartLwsGroup(ActionKind):
    name = "restart_lws_group"
    title = "Restart a LeaderWorkerSet group"
    risky = True
    undoable = False

    def clean(self, params: dict) -> dict:
        check_params(params, {"namespace", "lws", "pod", "group"})
        out: dict = {"namespace": namespace_param(params), "lws": name_param(params, "lws")}
        if exactly_one(params, ("pod", "group")) == "pod":
            out["pod"] = name_param(params, "pod", label=False)
        else:
            out["group"] = int_param(params, "group", low=0)
        return out

    def target(self, params: dict) -> str:
        return f"leaderworkerset/{params['namespace']}/{params['lws']}"

    def _group(self, api, params: dict) -> int:
        if "group" in params:
            return params["group"]
        return group_of_pod(api, params["namespace"], params["lws"], params["pod"])

    def read(self, api, params: dict) -> Snapshot:
        group = self._group(api, params)
        return read_group(api, params["namespace"], params["lws"], group)

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        where = f"{params['namespace']}/{params['lws']}"
        group, leader, uid = (current.state[k] for k in ("group", "leader_pod", "uid"))
        if not uid:
            raise GuardrailError(msg("actions.restart.no_leader", group=group, where=where))
        desired = {"group": group, "leader_pod": leader, "previous_uid": uid}
        shown_after = {**current.state, "uid": "(new, created by LWS)", "phase": "Pending"}
        if "pod" in params:
            summary = msg(
                "actions.restart.summary_pod",
                group=group,
                pod=params["pod"],
                where=where,
                leader=leader,
            )
        else:
            summary = msg("actions.restart.summary", group=group, where=where, leader=leader)
        return Plan.of(
            desired,
            state_diff(current.state, shown_after, f"{params['namespace']}/{leader}"),
            summary,
            [msg("actions.restart.fails", group=group), msg("actions.restart.no_undo_warning")],
        )

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        leader, uid = plan.desired["leader_pod"], plan.desired["previous_uid"]
        api.delete_pod(params["namespace"], leader, uid, dry_run=True)
        return msg("actions.restart.dry_run", pod=leader, uid=uid)

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        leader, uid = plan.desired["leader_pod"], plan.desired["previous_uid"]
        api.delete_pod(params["namespace"], leader, uid)
        return read_group(api, params["namespace"], params["lws"], plan.desired["group"])

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        now = read_group(api, params["namespace"], params["lws"], plan.desired["group"])
        leader = plan.desired["leader_pod"]
        if now.state["uid"] == plan.desired["previous_uid"]:
            phase = now.state["phase"]
            if phase == "Terminating":
                return True, msg("actions.restart.terminating", pod=leader)
            return False, msg("actions.restart.old_uid", pod=leader, phase=phase)
        if not now.state["uid"]:
            return True, msg("actions.restart.deleted", pod=leader)
        uid, phase = now.state["uid"], now.state["phase"]
        return True, msg("actions.restart.recreated", pod=leader, uid=uid, phase=phase)

    def already_applied(self, current: Snapshot, before: Snapshot, plan: Plan) -> bool:
        # Our delete landed if the leader is gone, replaced, or terminating (a graceful
        # delete keeps the uid until the kubelet has stopped the containers).
        old = before.identity.get("uid")
        replaced = current.identity.get("uid") != old
        return bool(old) and (replaced or current.state.get("phase") == "Terminating")

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        return [lws_subject(params["namespace"], params["lws"])]

    def guard_split(self, params: dict, before: Snapshot, plan: Plan) -> GuardSplit | None:
        """The restarted group against the others at the same time."""
        leader, group = plan.desired.get("leader_pod"), plan.desired.get("group")
        if not leader:
            return None
        return GuardSplit.of(
            msg("actions.split.restarted", group=group),
            msg("actions.split.other_groups"),
            changed=(leader,),
        )

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        raise ActionError(msg("actions.restart.no_undo"))
