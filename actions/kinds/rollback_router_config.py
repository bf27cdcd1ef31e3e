"""rollback_router_config: restore a saved revision of the router's ConfigMap.

ConfigMaps keep no history; the run services store revisions (actions/revisions)
and hand a lookup in through `Context.revision_lookup`. Undo restores explicit `data`
(the "before" of the run being undone), which this kind also accepts directly.
"""

from __future__ import annotations

from actions.kinds.base import (
    ActionError,
    ActionKind,
    Context,
    ParamError,
    Plan,
    Snapshot,
    Subject,
    check_params,
    configmap_subjects,
    name_param,
    namespace_param,
)
from actions.kinds.diff import data_diff
from console.texts import Msg, msg

DEFAULT_CONFIGMAP = "vllm-router-config"
NAMED_REVISIONS = ("before_incident", "previous")


def configmap_snapshot(cm: dict) -> Snapshot:
    meta = cm.get("metadata") or {}
    return Snapshot(
        resource_version=str(meta.get("resourceVersion") or ""),
        state={"data": dict(cm.get("data") or {})},
        identity={"uid": meta.get("uid", "")},
    )


class RollbackRouterConfig(ActionKind):
    name = "rollback_router_config"
    title = "Roll back the router config"
    risky = True
    undoable = True

    def clean(self, params: dict) -> dict:
        check_params(params, {"namespace", "configmap", "revision", "data"})
        out: dict[str, object] = {
            "namespace": namespace_param(params),
            "configmap": name_param(params, "configmap", default=DEFAULT_CONFIGMAP, label=False),
        }
        if params.get("data") is not None:
            data = params["data"]
            if params.get("revision") not in (None, ""):
                raise ParamError("data", msg("actions.param.data_or_revision"))
            if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in data.items()
            ):
                raise ParamError("data", msg("actions.param.data_shape"))
            out["data"] = dict(data)
            return out
        revision = params.get("revision")
        if revision in (None, ""):
            revision = "before_incident"
        if isinstance(revision, bool) or not isinstance(revision, int | str):
            raise ParamError("revision", msg("actions.param.revision"))
        revision = str(revision).strip()
        if revision not in NAMED_REVISIONS and not (0 < len(revision) <= 64):
            raise ParamError("revision", msg("actions.param.revision"))
        out["revision"] = revision
        return out

    def target(self, params: dict) -> str:
        return f"configmap/{params['namespace']}/{params['configmap']}"

    def read(self, api, params: dict) -> Snapshot:
        return configmap_snapshot(api.get_configmap(params["namespace"], params["configmap"]))

    def plan(self, current: Snapshot, params: dict, ctx: Context) -> Plan:
        where = f"{params['namespace']}/{params['configmap']}"
        if "data" in params:
            desired = {"data": dict(params["data"])}
            what = msg("actions.rollback.saved_data")
        else:
            if ctx.revision_lookup is None:
                raise ActionError(msg("actions.rollback.no_history", where=where))
            revision = ctx.revision_lookup(
                params["namespace"],
                params["configmap"],
                params["revision"],
                ctx.incident_started_at,
            )
            desired = {"data": dict(revision.data)}
            when = revision.captured_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
            what = msg("actions.rollback.revision", id=revision.id, label=revision.label, when=when)
        if desired == current.state:
            matches = msg("actions.rollback.matches", where=where, what=what)
            return Plan.of(desired, f"(no change to {where})\n", matches)
        return Plan.of(
            desired,
            data_diff(current.state["data"], desired["data"], where),
            msg("actions.rollback.summary", where=where, what=what),
            [msg("actions.rollback.reload")],
        )

    def _ops(self, current: Snapshot, plan: Plan) -> list[dict]:
        return [
            {"op": "test", "path": "/metadata/resourceVersion", "value": current.resource_version},
            {"op": "add", "path": "/data", "value": plan.desired["data"]},
        ]

    def dry_run(self, api, params: dict, current: Snapshot, plan: Plan) -> Msg:
        if plan.desired == current.state:
            return msg("actions.dry_run.not_needed")
        api.patch_configmap(
            params["namespace"], params["configmap"], self._ops(current, plan), dry_run=True
        )
        return msg("actions.dry_run.accepted")

    def apply(self, api, params: dict, current: Snapshot, plan: Plan) -> Snapshot:
        if plan.desired == current.state:
            return current
        return configmap_snapshot(
            api.patch_configmap(params["namespace"], params["configmap"], self._ops(current, plan))
        )

    def verify(self, api, params: dict, plan: Plan) -> tuple[bool, Msg]:
        now = self.read(api, params)
        if now.state != plan.desired:
            changed = sorted(
                k
                for k in set(now.state["data"]) | set(plan.desired["data"])
                if now.state["data"].get(k) != plan.desired["data"].get(k)
            )
            return False, msg("actions.rollback.verify_wrong", keys=", ".join(changed))
        return True, msg("actions.rollback.verify_ok", version=now.resource_version)

    def subjects(self, params: dict, current: Snapshot | None) -> list[Subject]:
        return configmap_subjects(params["namespace"], params["configmap"])

    def configmap_of(self, params: dict) -> str | None:
        return str(params.get("configmap") or DEFAULT_CONFIGMAP)

    def undo_params(self, params: dict, before: Snapshot) -> dict:
        return {
            "namespace": params["namespace"],
            "configmap": params["configmap"],
            "data": dict(before.state["data"]),
        }
