"""What a scenario changed, and how to take back only that.

A scenario's `start` records each change it makes in its state (`state["changes"]`):
- a *field* of an object (a ConfigMap key, the LWS's leader image): the object, the field,
  the value before and the value the fault set. Clearing writes the value back only where
  the field still holds the fault's value; if someone changed it since (a responder's
  fix, the console's action), it is left as it is and the report names who wrote the
  object since;
- a *condition* below the Kubernetes API (traffic doubled, a hung collective, a failing
  GPU, clients retrying without budget): clearing clears that condition and nothing else;
- an *event* that cannot be taken back (a container restart): reported, not undone.

`revert` returns one report entry per change, which `POST /sim/clear/<slug>` answers, so
a drill can say on the incident's timeline exactly what its end restored and what it left
alone. Nothing here resets the fleet: that is `python -m simulator reset`, a person's
decision, never a drill's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator import objects
from simulator.fleet_cluster import leader_image
from simulator.store import CONFIGMAPS, LWS, Resource

if TYPE_CHECKING:
    from simulator.fleet import Fleet

CHAT = "vllm-chat"
CLEAR_ACTOR = "scenario-clear"


@dataclass(frozen=True)
class FieldRef:
    resource: Resource
    name: str
    field: str  # as a person reads it
    get: Callable[[Fleet], Any]
    put: Callable[[Fleet, Any, str], None]  # (fleet, value, actor)

    @property
    def object(self) -> str:
        return f"{self.resource[2]}/{objects.NAMESPACE}/{self.name}"


def _config_field(cm: str, key: str, field: str, default: Any) -> FieldRef:
    def get(fleet: Fleet) -> Any:
        return fleet.config_doc(cm, key).get(field, default)

    def put(fleet: Fleet, value: Any, actor: str) -> None:
        fleet.edit_config(cm, key, lambda doc: doc.__setitem__(field, value), actor=actor)

    return FieldRef(CONFIGMAPS, cm, f"{key}: {field}", get, put)


def _leader_container(lws: dict) -> dict:
    tpl = lws["spec"]["leaderWorkerTemplate"]
    containers = (tpl.get("leaderTemplate") or tpl["workerTemplate"])["spec"]["containers"]
    return next((c for c in containers if c.get("name") == "vllm"), containers[0])


def _get_image(fleet: Fleet) -> str:
    return leader_image(fleet.store.get(LWS, objects.NAMESPACE, CHAT))


def _put_image(fleet: Fleet, image: str, actor: str) -> None:
    lws = fleet.store.get(LWS, objects.NAMESPACE, CHAT)
    _leader_container(lws)["image"] = image
    fleet.store.update(LWS, objects.NAMESPACE, CHAT, lws, actor=actor)


ROUTER_DOC = (objects.ROUTER_CONFIGMAP, "dynamic_config.json")
GATEWAY_DOC = (objects.GATEWAY_CONFIGMAP, "config.json")
FIELDS: dict[str, FieldRef] = {
    "router.routing_logic": _config_field(*ROUTER_DOC, "routing_logic", "prefixaware"),
    "router.model_versions": _config_field(
        *ROUTER_DOC, "model_versions", {"v1": 100, "v2-canary": 0}
    ),
    "gateway.long_context_threshold_tokens": _config_field(
        *GATEWAY_DOC, "long_context_threshold_tokens", 32768
    ),
    "chat.leader_image": FieldRef(LWS, CHAT, "leader container image", _get_image, _put_image),
}


def _changes(state: dict) -> list[dict]:
    return state.setdefault("changes", [])


def change_field(fleet: Fleet, state: dict, ref: str, value: Any, *, actor: str) -> None:
    """Set a field as the failure would, and record it (nothing, if it already held it)."""
    field = FIELDS[ref]
    before = field.get(fleet)
    if before == value:
        return
    field.put(fleet, value, actor)
    _changes(state).append({
        "kind": "field", "ref": ref, "object": field.object, "field": field.field,
        "before": before, "after": value, "by": actor, "at_epoch": time.time(),
    })  # fmt: skip


def change_condition(state: dict, condition: str, before: Any, after: Any, **extra: Any) -> None:
    """Record a condition the scenario set below the API (the caller has set it)."""
    _changes(state).append({
        "kind": "condition", "ref": condition, "object": "fleet", "field": condition,
        "before": before, "after": after, **extra,
    })  # fmt: skip


def record_event(state: dict, what: str, obj: str) -> None:
    _changes(state).append({"kind": "event", "ref": what, "object": obj, "field": what})


# --- conditions: how each is cleared, touching nothing else ------------------------------
def _clear_load(fleet: Fleet, change: dict) -> None:
    fleet.load_factor = change["before"]


def _clear_hung(fleet: Fleet, change: dict) -> None:
    group = fleet.groups(CHAT).get(change["group"])
    if group is not None:  # a restarted group is a new one: nothing left to clear
        group.hung = group.link_fault = False


def _clear_retries(fleet: Fleet, change: dict) -> None:
    fleet.retries_without_budget = change["before"]
    fleet.retry_multiplier = 1.0  # clients calm down once they retry within budget


def _clear_ecc(fleet: Fleet, change: dict) -> None:
    """The GPU is replaced: the node's new GPU has no ECC count and no Xid."""
    node = change["after"]
    if fleet.ecc_node == node:
        fleet.ecc_node = change["before"]
    for counts in (fleet.ecc_dbe, fleet.xid):
        for key in [k for k in counts if k[0] == node]:
            counts[key] = 0


def _clear_traffic(fleet: Fleet, change: dict) -> None:
    added = [tuple(c) for c in change["added"]]
    fleet.extra_classes = [c for c in fleet.extra_classes if tuple(c) not in added]


CONDITIONS: dict[str, Callable[[Fleet, dict], None]] = {
    "load_factor": _clear_load,
    "group_hung": _clear_hung,
    "retries_without_budget": _clear_retries,
    "ecc_node": _clear_ecc,
    "extra_traffic": _clear_traffic,
}


def _writers_since(fleet: Fleet, field: FieldRef, epoch: float) -> list[str]:
    """Who wrote the object after the fault did (oldest first, each once)."""
    actors: list[str] = []
    for c in fleet.store.changes(field.resource, field.name):
        if c.epoch > epoch and c.actor not in (CLEAR_ACTOR, *actors):
            actors.append(c.actor)
    return actors


def revert(fleet: Fleet, state: dict) -> list[dict]:
    """Take back what `start` recorded, newest first; one report entry per change."""
    report: list[dict] = []
    for change in reversed(state.get("changes") or []):
        entry = {k: v for k, v in change.items() if k != "at_epoch"}
        if change["kind"] == "field":
            field = FIELDS[change["ref"]]
            now = field.get(fleet)
            if now == change["after"]:
                field.put(fleet, change["before"], CLEAR_ACTOR)
                entry.update(result="restored", now=change["before"])
            else:
                by = _writers_since(fleet, field, change.get("at_epoch", 0.0))
                entry.update(result="left", now=now, changed_by=by)
        elif change["kind"] == "condition":
            CONDITIONS[change["ref"]](fleet, change)
            entry.update(result="cleared")
        else:
            entry.update(result="not_undoable")
        report.append(entry)
    state["report"] = report
    return report
