"""The objects a fresh simulated cluster starts with (namespace llm-serving).

Shapes follow the upstream LeaderWorkerSet vLLM example: the
vLLM invocation is one shell string in the leader template's command; workers join the
leader's Ray cluster. Pods are named and labelled as the LWS controller names them:
leader `<lws>-<group>`, workers `<lws>-<group>-<worker>`.
"""

import json

from simulator.store import CONFIGMAPS, LWS, NODES, Invalid, ObjectStore

NAMESPACE = "llm-serving"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
ROUTER_CONFIGMAP = "vllm-router-config"
GATEWAY_CONFIGMAP = "llm-gateway-config"
ROUTING_LOGICS = ("roundrobin", "session", "kvaware", "prefixaware")
MODEL = "meta-llama/Llama-3.1-70B-Instruct"
NODE_COUNT = 16
GPUS_PER_NODE = 8

POOLS = {
    # name: (groups, pods per group, extra vLLM flags)
    "vllm-chat": (4, 2, "--max-model-len 32768 --enable-prefix-caching"),
    "vllm-long": (2, 2, "--max-model-len 131072 --enable-chunked-prefill"),
}


def vllm_command(extra: str) -> str:
    return (
        "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader "
        "--ray_cluster_size=$(LWS_GROUP_SIZE); "
        f"python3 -m vllm.entrypoints.openai.api_server --port 8080 --model {MODEL} "
        f"--tensor-parallel-size 8 --pipeline_parallel_size 2 {extra}"
    )


# The NCCL watchdog: a hung collective aborts (and the group restarts) instead of hanging.
NCCL_ENV = [
    {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"},
    {"name": "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "value": "600"},
]
# Pools hardened for launch: zone spread and an endpoint-drain preStop on the leader. The
# others lack them, so the pre-launch checklist has something to fail on.
HARDENED_POOLS = ("vllm-chat",)


def _container(name: str, command: str) -> dict:
    return {
        "name": name,
        "image": "vllm/vllm-openai:v0.11.0",
        "command": ["sh", "-c", command],
        "env": [dict(e) for e in NCCL_ENV],
        "resources": {"limits": {"nvidia.com/gpu": str(GPUS_PER_NODE)}},
        "ports": [{"containerPort": 8080}],
    }


def _leader_spec(name: str, command: str) -> dict:
    container = _container("vllm", command)
    # Ready only once the model is loaded: /health answers 200 after the weights are in.
    container["readinessProbe"] = {
        "httpGet": {"path": "/health", "port": 8080},
        "initialDelaySeconds": 120,
        "periodSeconds": 10,
        "failureThreshold": 30,
    }
    spec: dict = {"containers": [container], "terminationGracePeriodSeconds": 120}
    if name in HARDENED_POOLS:
        # Leave the endpoints before SIGTERM, then vLLM finishes in-flight requests.
        container["lifecycle"] = {"preStop": {"exec": {"command": ["sh", "-c", "sleep 15"]}}}
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {LWS_NAME_LABEL: name, "role": "leader"}},
            }
        ]
    return spec


def leaderworkerset(name: str, replicas: int, size: int, extra: str) -> dict:
    worker_cmd = (
        "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker "
        "--ray_address=$(LWS_LEADER_ADDRESS)"
    )
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            # The console runs chaos drills only against LWS labelled as drill targets.
            "labels": {"app": name, "console.llm/drill-target": "true"},
        },
        "spec": {
            "replicas": replicas,
            "startupPolicy": "LeaderCreated",
            "rolloutStrategy": {
                "type": "RollingUpdate",
                "rollingUpdateConfiguration": {"partition": 0, "maxUnavailable": 1, "maxSurge": 0},
            },
            "leaderWorkerTemplate": {
                "size": size,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {
                    "metadata": {"labels": {"role": "leader"}},
                    "spec": _leader_spec(name, vllm_command(extra)),
                },
                "workerTemplate": {"spec": {"containers": [_container("vllm", worker_cmd)]}},
            },
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": replicas,
            "updatedReplicas": replicas,
            "hpaPodSelector": f"{LWS_NAME_LABEL}={name},{WORKER_INDEX_LABEL}=0",
            "conditions": [{"type": "Available", "status": "True"}],
        },
    }


def router_config(routing_logic: str = "prefixaware", canary_weight: int = 0) -> dict:
    dynamic = {
        "service_discovery": "k8s",
        "k8s_namespace": NAMESPACE,
        "k8s_label_selector": f"{LWS_NAME_LABEL}=vllm-chat",
        "routing_logic": routing_logic,
        "session_key": "x-user-id",
        "model_versions": {"v1": 100 - canary_weight, "v2-canary": canary_weight},
        # When the routing logic's state is lost (e.g. the KV index), spread round-robin.
        "fallback_routing_logic": "roundrobin",
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": ROUTER_CONFIGMAP, "namespace": NAMESPACE},
        "data": {"dynamic_config.json": json.dumps(dynamic, indent=2)},
    }


def gateway_config() -> dict:
    config = {
        "max_tokens_cap": 8192,
        "rate_limit_rps": 0,  # 0 = no limit
        "rate_limit_burst": 0,
        "long_context_threshold_tokens": 32768,
        "long_context_pool": "vllm-long",
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": GATEWAY_CONFIGMAP, "namespace": NAMESPACE},
        "data": {"config.json": json.dumps(config, indent=2)},
    }


def node(index: int) -> dict:
    name = f"gpu-node-{index}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.count": str(GPUS_PER_NODE),
            },
        },
        "spec": {"unschedulable": False, "taints": []},
        "status": {
            "capacity": {"nvidia.com/gpu": str(GPUS_PER_NODE)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_name(lws: str, group: int, worker: int) -> str:
    return f"{lws}-{group}" if worker == 0 else f"{lws}-{group}-{worker}"


def pod(lws: dict, group: int, worker: int, node_name: str, phase: str = "Running") -> dict:
    name = lws["metadata"]["name"]
    template_key = "leaderTemplate" if worker == 0 else "workerTemplate"
    template = lws["spec"]["leaderWorkerTemplate"][template_key]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(name, group, worker),
            "namespace": NAMESPACE,
            "labels": {
                **template.get("metadata", {}).get("labels", {}),
                LWS_NAME_LABEL: name,
                GROUP_INDEX_LABEL: str(group),
                WORKER_INDEX_LABEL: str(worker),
            },
        },
        "spec": {"nodeName": node_name, "containers": template["spec"]["containers"]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]},
    }


# --- validation (422) -------------------------------------------------------------------
def _validate_lws(obj: dict) -> None:
    spec = obj.get("spec") or {}
    replicas = spec.get("replicas", 1)
    if (
        not isinstance(replicas, int)
        or isinstance(replicas, bool)
        or not 0 <= replicas <= 1_000_000
    ):
        raise Invalid(f"spec.replicas: Invalid value: {replicas!r}: must be between 0 and 1000000")
    template = spec.get("leaderWorkerTemplate")
    if not isinstance(template, dict) or "workerTemplate" not in template:
        raise Invalid("spec.leaderWorkerTemplate.workerTemplate: Required value")
    size = template.get("size", 1)
    if not isinstance(size, int) or size < 1:
        raise Invalid(f"spec.leaderWorkerTemplate.size: Invalid value: {size!r}: must be >= 1")


def _validate_configmap(obj: dict) -> None:
    for key, value in (obj.get("data") or {}).items():
        if not isinstance(value, str):
            raise Invalid(f"data[{key}]: Invalid value: must be a string")


def _validate_node(obj: dict) -> None:
    spec = obj.get("spec") or {}
    if not isinstance(spec.get("unschedulable", False), bool):
        raise Invalid("spec.unschedulable: Invalid value: must be a boolean")
    for i, taint in enumerate(spec.get("taints") or []):
        if taint.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise Invalid(f"spec.taints[{i}].effect: Unsupported value: {taint.get('effect')!r}")
        if not taint.get("key"):
            raise Invalid(f"spec.taints[{i}].key: Required value")


def new_cluster() -> ObjectStore:
    """A store holding the initial objects (pods are created by the fleet controller)."""
    store = ObjectStore(validators={LWS: _validate_lws, CONFIGMAPS: _validate_configmap,
                                    NODES: _validate_node})  # fmt: skip
    for i in range(NODE_COUNT):
        store.create(NODES, node(i), actor="bootstrap")
    for name, (groups, size, extra) in POOLS.items():
        store.create(LWS, leaderworkerset(name, groups, size, extra), actor="bootstrap")
    store.create(CONFIGMAPS, router_config(), actor="bootstrap")
    store.create(CONFIGMAPS, gateway_config(), actor="bootstrap")
    return store
