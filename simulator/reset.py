"""Back to the baseline: what `python -m simulator reset` (POST /sim/reset) does.

Demos and test suites leave the world changed: scaled pools, edited templates and
labels, ConfigMap revisions, cordoned and tainted nodes, rising counters, active
scenarios. A person (or a suite between scenarios) may want the same fleet every time,
so reset restores every baseline object (`objects.new_cluster`) through the
store as one more writer (`simulator-reset`): resourceVersions keep increasing and the
change history shows the reset, as it would for a GitOps sync on a real cluster. Objects
the baseline does not have (a new ConfigMap, extra pods) are deleted. The fleet itself
(engines, counters, faults below the API) starts over, already serving, as at start-up.

A drill never calls it: a drill's end takes back only what its own fault changed
(`POST /sim/clear/<slug>`, simulator/scenario_changes.py), so a fix a responder made
meanwhile (a pool scaled up, a node cordoned) stays.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from simulator import objects
from simulator.fleet import Fleet
from simulator.store import CLUSTER_SCOPED, CONFIGMAPS, LWS, NODES, PODS, NotFound, ObjectStore

if TYPE_CHECKING:
    from simulator.server import Simulator

ACTOR = "simulator-reset"
# Status is written by the controllers; metadata the server owns is kept.
SERVER_OWNED = ("uid", "resourceVersion", "creationTimestamp", "generation")


def _namespace(resource, obj: dict) -> str | None:
    return None if resource in CLUSTER_SCOPED else obj["metadata"].get("namespace")


def _restore(store: ObjectStore, resource, want: dict) -> None:
    name, namespace = want["metadata"]["name"], _namespace(resource, want)
    try:
        have = store.get(resource, namespace, name)
    except NotFound:
        store.create(resource, want, actor=ACTOR)
        return
    meta = {k: v for k, v in have["metadata"].items() if k in SERVER_OWNED}
    restored = {**want, "metadata": {**want["metadata"], **meta}}
    if "status" in have:
        restored["status"] = have["status"]
    if restored == have:
        return  # unchanged: no write, no new revision
    store.update(resource, namespace, name, restored, actor=ACTOR)


def baseline_restore(store: ObjectStore) -> None:
    """Make the store hold exactly the baseline objects (pods: none; the fleet makes them)."""
    baseline = objects.new_cluster()
    for resource in (NODES, LWS, CONFIGMAPS):
        wanted = {
            (_namespace(resource, o), o["metadata"]["name"]): o for o in baseline.list(resource)
        }
        for obj in store.list(resource):
            key = (_namespace(resource, obj), obj["metadata"]["name"])
            if key not in wanted:
                with contextlib.suppress(NotFound):
                    store.delete(resource, key[0], key[1], actor=ACTOR)
        for want in wanted.values():
            _restore(store, resource, want)
    for pod in store.list(PODS):
        with contextlib.suppress(NotFound):
            store.delete(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"], actor=ACTOR)


def simulator_reset(sim: Simulator) -> None:
    """Clear scenarios and API faults, restore the objects, start a fresh fleet (its
    counters from zero, every baseline group ready at once). Call with `sim.lock` held."""
    sim.fleet.clear()
    sim.faults.control("DELETE", b"")
    baseline_restore(sim.store)
    sim.fleet = Fleet(sim.store, seed=sim.seed, startup_delay_s=sim.startup_delay_s)
    sim.fleet.tick(1.0)
