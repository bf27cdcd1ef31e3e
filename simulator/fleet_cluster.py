"""The controllers of the simulated cluster: LWS controller, scheduler, kubelet.

The Kubernetes API layer only writes desired state into the store; `Cluster.reconcile`
reads it and moves the world, as real controllers do:
- LWS spec.replicas -> groups; a new group's pods are created Pending at once and become
  Ready after the start-up delay; scale-down removes the highest indices;
- a pod deleted from outside (or evicted by a NoExecute taint) -> the whole group is
  recreated (restartPolicy RecreateGroupOnPodRestart); the new pods go through the
  scheduler again, so a cordoned/tainted node is avoided;
- a template change -> rolling update of whole groups, highest index first, at most
  maxUnavailable groups down at a time (a crash-looping group stalls the rollout);
- pods are placed one per node (each takes all 8 GPUs) on the lowest-numbered free,
  schedulable, untainted node; none free -> Pending until one is.
Simplification: a crash-looping container restarts in place (restart count grows) instead
of triggering a group recreate, so the restart count is visible as in the runbook.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import partial

from simulator import objects
from simulator.fleet_engine import EngineState
from simulator.store import LWS, NODES, PODS, AlreadyExists, NotFound, ObjectStore

CONTROLLER = "lws-controller"
# The release the cuda-graph-capture scenario rolls out: CUDA graph capture crashes in it.
CRASHING_IMAGES = frozenset({"vllm/vllm-openai:v0.11.1-rc1"})
# A re-quantised checkpoint whose FP8 calibration is broken: it loads, serves and answers
# HTTP 200 with malformed text (the garbage-output runbook's bad_model branch).
BAD_CHECKPOINT = f"{objects.MODEL}-FP8-uncalibrated"
CRASH_AFTER_S = 5.0  # graph capture fails this long after the container starts
MAX_BACKOFF_S = 60.0  # kubelet caps CrashLoopBackOff at 300 s; compressed for the demo
REVISION_LABEL = "leaderworkerset.sigs.k8s.io/template-revision-hash"
_EAGER = re.compile(r"(?<![\w-])--enforce[-_]eager(?:=(?:true|True|1))?(?![\w-])")


def enforce_eager(lws: dict) -> bool:
    """`--enforce-eager` (or `--enforce_eager`) in the leader's vLLM command or args."""
    tpl = lws["spec"]["leaderWorkerTemplate"]
    pod_tpl = tpl.get("leaderTemplate") or tpl["workerTemplate"]
    for container in pod_tpl.get("spec", {}).get("containers", []):
        for word in [*(container.get("command") or []), *(container.get("args") or [])]:
            if isinstance(word, str) and _EAGER.search(word):
                return True
    return False


def leader_image(lws: dict) -> str:
    tpl = lws["spec"]["leaderWorkerTemplate"]
    pod_tpl = tpl.get("leaderTemplate") or tpl["workerTemplate"]
    containers = pod_tpl.get("spec", {}).get("containers") or [{}]
    return next(
        (c.get("image", "") for c in containers if c.get("name") == "vllm"),
        containers[0].get("image", ""),
    )


def template_hash(lws: dict) -> str:
    raw = json.dumps(lws["spec"]["leaderWorkerTemplate"], sort_keys=True).encode()
    return hashlib.sha256(raw).hexdigest()[:10]


def node_index(name: str) -> int:
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else 10**6


def node_blocked(node: dict) -> bool:
    spec = node.get("spec") or {}
    taints = spec.get("taints") or []
    return bool(spec.get("unschedulable")) or any(
        t.get("effect") in ("NoSchedule", "NoExecute") for t in taints
    )


# mutate() callbacks: what the scheduler and the kubelet write on a pod.
def _bind_node(pod: dict, *, node: str) -> None:
    pod["spec"].update(nodeName=node)


def _write_status(pod: dict, *, status: dict) -> None:
    pod.update(status=status)


@dataclass
class PodSim:
    name: str
    lws: str
    group: int
    worker: int
    uid: str = ""
    node: str = ""
    started_at: float | None = None  # container start (after scheduling)
    restarts: int = 0
    not_ready_until: float = 0.0
    backoff_until: float = 0.0
    written_status: dict | None = None


@dataclass
class GroupSim:
    lws: str
    index: int
    revision: str
    crashing: bool  # template release crashes in CUDA graph capture
    eager: bool
    pods: list[PodSim] = field(default_factory=list)
    hung: bool = False
    link_fault: bool = False  # the hang waits on a flaky NVLink link (CRC errors, Xid 74)
    out_of_rotation: bool = False  # the router sends it nothing (ejected endpoint)
    bad_weights: bool = False  # its checkpoint answers 200 with garbage
    engine: EngineState = field(default_factory=EngineState)

    @property
    def leader(self) -> PodSim:
        return self.pods[0]


class Cluster:
    def __init__(self, store: ObjectStore, startup_delay_s: float) -> None:
        self.store = store
        self.startup_delay_s = startup_delay_s
        self.groups: dict[str, dict[int, GroupSim]] = {}
        self.lost_requests = 0.0  # in-flight requests killed by restarts (-> gateway 502)
        self.now = 0.0
        self.images: dict[str, str] = {}  # LWS name -> leader image, for pod statuses
        # Nodes whose GPUs fail CUDA initialisation (a driver/library mismatch after a node
        # image upgrade): any vllm container placed there exits at start-up.
        self.bad_nodes: set[str] = set()

    # --- queries -----------------------------------------------------------------------
    def pod_ready(self, p: PodSim, g: GroupSim) -> bool:
        return (
            bool(p.node)
            and p.started_at is not None
            and not g.crashing
            and p.node not in self.bad_nodes
            and self.now >= p.started_at + self.startup_delay_s
            and self.now >= p.not_ready_until
        )

    def crashes(self, p: PodSim, g: GroupSim) -> bool:
        return (g.crashing and p.worker == 0) or (bool(p.node) and p.node in self.bad_nodes)

    def group_ready(self, g: GroupSim) -> bool:
        return all(self.pod_ready(p, g) for p in g.pods)

    def all_pods(self):
        for groups in self.groups.values():
            for g in groups.values():
                for p in g.pods:
                    yield g, p

    # --- reconcile ---------------------------------------------------------------------
    def reconcile(self, now: float, *, initial: bool = False) -> None:
        self.now = now
        nodes = {n["metadata"]["name"]: n for n in self.store.list(NODES)}
        self._evict_and_notice_deletes(nodes)
        all_lws = self.store.list(LWS, objects.NAMESPACE)
        for lws in all_lws:
            self._reconcile_lws(lws, initial)
        self._schedule(nodes)
        for lws in all_lws:
            self._write_lws_status(lws)
        self._write_pod_status()

    def _evict_and_notice_deletes(self, nodes: dict) -> None:
        present = {p["metadata"]["name"]: p for p in self.store.list(PODS, objects.NAMESPACE)}
        for groups in self.groups.values():
            for g in list(groups.values()):
                for p in g.pods:
                    node = nodes.get(p.node, {})
                    if p.node and any(
                        t.get("effect") == "NoExecute"
                        for t in node.get("spec", {}).get("taints") or []
                    ):
                        self._delete_pod(p.name, "taint-eviction-controller")
                        present.pop(p.name, None)
                    obj = present.get(p.name)
                    if obj is None or obj["metadata"].get("uid") != p.uid:
                        self._recreate_group(g)  # RecreateGroupOnPodRestart
                        break

    def _reconcile_lws(self, lws: dict, initial: bool) -> None:
        name = lws["metadata"]["name"]
        self.images[name] = leader_image(lws)
        groups = self.groups.setdefault(name, {})
        desired = int(lws["spec"].get("replicas", 1))
        for index in sorted((i for i in groups if i >= desired), reverse=True):
            self._remove_group(groups.pop(index))
        for index in range(desired):
            if index not in groups:
                groups[index] = self._create_group(lws, index, ready_now=initial)
        # Rolling update: outdated groups that are down anyway are replaced at once;
        # ready ones only while fewer than maxUnavailable groups are down.
        revision = template_hash(lws)
        rolling = lws["spec"].get("rolloutStrategy", {}).get("rollingUpdateConfiguration", {})
        max_unavailable = int(rolling.get("maxUnavailable", 1) or 1)
        for index in sorted(groups, reverse=True):
            g = groups[index]
            if g.revision == revision:
                continue
            down = sum(not self.group_ready(x) for x in groups.values())
            if not self.group_ready(g) or down < max_unavailable:
                self._remove_group(g)
                groups[index] = self._create_group(lws, index)

    def _create_group(self, lws: dict, index: int, *, ready_now: bool = False) -> GroupSim:
        name = lws["metadata"]["name"]
        size = int(lws["spec"]["leaderWorkerTemplate"].get("size", 1))
        g = GroupSim(
            name,
            index,
            template_hash(lws),
            crashing=leader_image(lws) in CRASHING_IMAGES and not enforce_eager(lws),
            eager=enforce_eager(lws),
            bad_weights=BAD_CHECKPOINT in json.dumps(lws["spec"]["leaderWorkerTemplate"]),
        )
        for worker in range(size):
            obj = objects.pod(lws, index, worker, "", phase="Pending")
            obj["metadata"]["labels"][REVISION_LABEL] = g.revision
            obj["spec"].pop("nodeName")
            obj["status"] = {
                "phase": "Pending",
                "conditions": [
                    {"type": "PodScheduled", "status": "False"},
                    {"type": "Ready", "status": "False"},
                ],
            }
            try:
                created = self.store.create(PODS, obj, actor=CONTROLLER)
            except AlreadyExists:  # replace a pod left from an earlier controller run
                self._delete_pod(obj["metadata"]["name"], CONTROLLER)
                created = self.store.create(PODS, obj, actor=CONTROLLER)
            p = PodSim(created["metadata"]["name"], name, index, worker, created["metadata"]["uid"])
            if ready_now:
                p.started_at = -self.startup_delay_s  # the fleet was already up
            g.pods.append(p)
        return g

    def _remove_group(self, g: GroupSim) -> None:
        self.lost_requests += g.engine.reset()
        for p in g.pods:
            self._delete_pod(p.name, CONTROLLER)

    def _recreate_group(self, g: GroupSim) -> None:
        try:
            lws = self.store.get(LWS, objects.NAMESPACE, g.lws)
        except NotFound:
            return
        self._remove_group(g)
        self.groups[g.lws][g.index] = self._create_group(lws, g.index)

    def _delete_pod(self, name: str, actor: str) -> None:
        with contextlib.suppress(NotFound):
            self.store.delete(PODS, objects.NAMESPACE, name, actor=actor)

    def restart_container(self, pod_name: str, not_ready_s: float) -> None:
        """A container restart in place: new process, restart count + 1, not ready a while."""
        for g, p in self.all_pods():
            if p.name == pod_name:
                p.restarts += 1
                p.not_ready_until = self.now + not_ready_s
                self.lost_requests += g.engine.reset()

    def _schedule(self, nodes: dict) -> None:
        used = {p.node for _, p in self.all_pods() if p.node}
        free = sorted(
            (n for n, obj in nodes.items() if n not in used and not node_blocked(obj)),
            key=node_index,
        )
        for lws in sorted(self.groups):
            for index in sorted(self.groups[lws]):
                for p in self.groups[lws][index].pods:
                    if not p.node and free:
                        p.node = free.pop(0)
                        if p.started_at is None:
                            p.started_at = self.now
                        self.store.mutate(
                            PODS,
                            objects.NAMESPACE,
                            p.name,
                            partial(_bind_node, node=p.node),
                            actor="default-scheduler",
                        )

    # --- status write-back (only on change, to keep resourceVersions meaningful) -----------
    def _crash_state(self, p: PodSim, g: GroupSim) -> str | None:
        """Advance a crash-looping leader: run CRASH_AFTER_S, exit, back off, run again."""
        if not self.crashes(p, g) or p.started_at is None:
            return None
        if self.now < p.backoff_until:
            return "CrashLoopBackOff"
        if self.now >= max(p.started_at, p.backoff_until) + CRASH_AFTER_S:
            p.restarts += 1
            backoff = min(MAX_BACKOFF_S, 10.0 * 2 ** (p.restarts - 1))
            p.backoff_until = self.now + backoff
            return "CrashLoopBackOff"
        return None

    def waiting_reason(self, p: PodSim, g: GroupSim) -> str | None:
        return "CrashLoopBackOff" if self.crashes(p, g) and self.now < p.backoff_until else None

    def _write_pod_status(self) -> None:
        for g, p in list(self.all_pods()):
            reason = self._crash_state(p, g)
            ready = self.pod_ready(p, g)
            state = {"waiting": {"reason": reason}} if reason else {"running": {}}
            status = {
                "phase": "Running" if p.node and p.started_at is not None else "Pending",
                "conditions": [
                    {"type": "PodScheduled", "status": "True" if p.node else "False"},
                    {"type": "Ready", "status": "True" if ready else "False"},
                ],
                # image/imageID are required fields in the official client's model.
                "containerStatuses": [
                    {
                        "name": "vllm",
                        "ready": ready,
                        "restartCount": p.restarts,
                        "state": state,
                        "image": self.images.get(g.lws, ""),
                        "imageID": f"sim://{g.revision}",
                    }
                ],
            }
            if p.node:
                status["hostIP"] = p.node
            if status != p.written_status:
                try:
                    self.store.mutate(
                        PODS,
                        objects.NAMESPACE,
                        p.name,
                        partial(_write_status, status=status),
                        actor="kubelet",
                    )
                    p.written_status = status
                except NotFound:
                    pass

    def _write_lws_status(self, lws: dict) -> None:
        groups = self.groups.get(lws["metadata"]["name"], {})
        revision = template_hash(lws)
        ready = sum(self.group_ready(g) for g in groups.values())
        updated = sum(g.revision == revision for g in groups.values())
        want = {"replicas": len(groups), "readyReplicas": ready, "updatedReplicas": updated}
        have = lws.get("status") or {}
        if all(have.get(k) == v for k, v in want.items()):
            return
        available = "True" if ready == len(groups) else "False"

        def change(obj: dict) -> None:
            st = obj.setdefault("status", {})
            st.update(want)
            st["conditions"] = [{"type": "Available", "status": available}]
            if updated < len(groups):
                st["conditions"].append({"type": "UpdateInProgress", "status": "True"})

        self.store.mutate(LWS, objects.NAMESPACE, lws["metadata"]["name"], change, actor=CONTROLLER)
