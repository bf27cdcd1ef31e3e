"""The fleet a year happens on, as plain data (no database): clusters, teams, ~50
namespaces, ~400 LeaderWorkerSets with their pods, ~2,000 GPU nodes, and the kinds of
failure from the runbook catalogue. Deterministic for a seed."""

from __future__ import annotations

import random
from dataclasses import dataclass

from runbooks.catalog import load_catalog

CLUSTERS = (
    "gpu-prod-us-east-1",
    "gpu-prod-us-west-2",
    "gpu-prod-eu-west-1",
    "gpu-prod-ap-southeast-1",
    "gpu-staging-us-east-1",
)
TEAMS = (
    "inference-platform",
    "chat-serving",
    "search-ranking",
    "code-assist",
    "agents",
    "voice",
    "vision",
    "batch-inference",
    "embeddings",
    "safety",
    "evals",
    "ads-ml",
)
PRODUCTS = (
    "chat",
    "assist",
    "search",
    "code",
    "agents",
    "voice",
    "vision",
    "batch",
    "embed",
    "safety",
    "evals",
    "ads",
    "docs",
    "translate",
    "summarize",
    "rag",
    "tools",
    "moderation",
    "playground",
    "enterprise",
    "edu",
    "api",
    "mobile",
    "partner",
    "research",
)
STAGES = ("prod", "canary")
MODELS = (
    "llama3-8b",
    "llama3-70b",
    "llama31-405b",
    "qwen25-7b",
    "qwen25-72b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "deepseek-v3",
    "deepseek-r1",
    "gemma2-27b",
    "mistral-large",
    "phi3-medium",
    "command-r",
    "yi-34b",
    "qwen25-coder-32b",
    "llama32-vision-11b",
    "dbrx",
    "granite-34b",
    "internlm2-20b",
    "glm4-9b",
)
VARIANTS = (
    "chat",
    "long",
    "batch",
    "canary",
    "shadow",
    "eu",
    "us",
    "apac",
    "blue",
    "green",
    "rag",
    "tools",
    "fast",
    "priority",
    "free",
    "pro",
    "embed",
    "moderation",
    "draft",
    "eval",
)
NODES_PER_CLUSTER = 400

# How often each runbook's failure happens, relative (a runbook the table does not name,
# added to the catalogue later, gets DEFAULT_WEIGHT).
KIND_WEIGHTS = {
    "ttft-spike": 30,
    "long-context-kv": 22,
    "prefix-cache-drop": 14,
    "nccl-hang": 10,
    "ecc-errors": 8,
    "retry-storm": 6,
    "cuda-graph-capture": 6,
    "garbage-output": 4,
}
DEFAULT_WEIGHT = 5
# Used when the catalogue cannot be read: (slug, alertname, category, title).
FALLBACK_KINDS = (
    ("ttft-spike", "VLLMHighTTFT", "scheduling", "Time to first token spikes"),
    ("long-context-kv", "VLLMKVCachePressure", "scheduling", "KV cache pressure"),
    ("prefix-cache-drop", "VLLMPrefixCacheHitRateDrop", "upstream", "Prefix-cache drop"),
    ("nccl-hang", "VLLMEngineStalled", "communication", "NCCL hang"),
    ("ecc-errors", "GPUECCErrors", "resource", "GPU ECC errors"),
    ("retry-storm", "VLLMRetryStorm", "upstream", "Client retry storm"),
    ("cuda-graph-capture", "VLLMCrashLooping", "framework", "CUDA graph capture crash"),
    ("garbage-output", "VLLMOutputQualityRegression", "model", "Garbage output"),
)
# Failures of one pod or GPU carry the node label; pool-wide ones mostly do not.
NODE_KINDS = frozenset({"nccl-hang", "ecc-errors", "cuda-graph-capture", "garbage-output"})


@dataclass(frozen=True)
class Kind:
    slug: str
    alertname: str
    category: str
    title: str
    weight: int
    leads_over: tuple[str, ...] = ()


@dataclass(frozen=True)
class Lws:
    name: str
    namespace: str
    cluster: str
    team: str
    pods: tuple[str, ...]
    nodes: tuple[str, ...]  # the node of each pod


@dataclass(frozen=True)
class Fleet:
    kinds: tuple[Kind, ...]
    lws: tuple[Lws, ...]
    namespaces: tuple[str, ...]
    node_count: int

    def group_key(self, group: int) -> str:
        """Alertmanager's groupKey for group_by [alertname, namespace, lws]."""
        kind, lws = self.kinds[group % len(self.kinds)], self.lws[group // len(self.kinds)]
        return (
            f'{{}}/{{runbook=~".+"}}:{{alertname="{kind.alertname}", lws="{lws.name}", '
            f'namespace="{lws.namespace}"}}'
        )


def catalogue_kinds() -> tuple[Kind, ...]:
    """Runbooks and their first alert name, from the real catalogue (sorted by slug)."""
    try:
        runbooks = load_catalog().english.all()
    except Exception:  # a broken catalogue must not stop a bench: the fixed list
        runbooks = ()
    kinds = tuple(
        Kind(
            rb.slug,
            rb.alerts[0],
            rb.category,
            rb.title,
            KIND_WEIGHTS.get(rb.slug, DEFAULT_WEIGHT),
            tuple(rb.leads_over),
        )
        for rb in runbooks
        if rb.alerts
    )
    if kinds:
        return kinds
    return tuple(
        Kind(s, a, c, t, KIND_WEIGHTS.get(s, DEFAULT_WEIGHT)) for s, a, c, t in FALLBACK_KINDS
    )


def fleet_build(seed: int, kinds: tuple[Kind, ...] | None = None) -> Fleet:
    rng = random.Random(f"fleet:{seed}")  # noqa: S311 (a reproducible fleet, not a secret)
    namespaces = []
    homes = {}
    for i, product in enumerate(PRODUCTS):
        for stage in STAGES:
            ns = f"{product}-{stage}"
            namespaces.append(ns)
            cluster = CLUSTERS[-1] if stage == "canary" and i % 5 == 0 else CLUSTERS[i % 4]
            homes[ns] = (cluster, TEAMS[i % len(TEAMS)])
    names = [f"vllm-{m}-{v}" for m in MODELS for v in VARIANTS]
    rng.shuffle(names)
    lws = []
    for i, name in enumerate(names):
        ns = namespaces[i % len(namespaces)]
        cluster, team = homes[ns]
        groups, size = rng.choice((2, 4, 4, 8, 8, 12, 16, 24)), rng.choice((1, 2, 2, 4))
        pods = tuple(
            f"{name}-{g}" if w == 0 else f"{name}-{g}-{w}"
            for g in range(groups)
            for w in range(size)
        )
        base, prefix = CLUSTERS.index(cluster) * NODES_PER_CLUSTER, cluster.removeprefix("gpu-")
        first = rng.randrange(NODES_PER_CLUSTER)
        # Consecutive nodes from a random start: a group's pods share a rack, as usual.
        nodes = tuple(
            f"{prefix}-gpu-{base + (first + p // 2) % NODES_PER_CLUSTER:04d}"
            for p in range(len(pods))
        )
        lws.append(Lws(name, ns, cluster, team, pods, nodes))
    return Fleet(
        kinds=kinds if kinds is not None else catalogue_kinds(),
        lws=tuple(lws),
        namespaces=tuple(namespaces),
        node_count=len(CLUSTERS) * NODES_PER_CLUSTER,
    )
