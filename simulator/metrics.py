"""`/metrics`: the fleet's state in the Prometheus text format, with the real exporters'
names, types and labels (vLLM v1 metrics, DCGM exporter,
kube-state-metrics) plus the gateway's and router's own series.

One scrape target stands in for many real ones, so the labels a real Prometheus would add
per target are written here directly:
- `namespace`, `pod`: what kubernetes_sd / PodMonitor target labels give every series;
- `lws`: a relabel of the pod label `leaderworkerset.sigs.k8s.io/name`
  (`labelmap`/`replacement` in the scrape config), on vLLM, DCGM and kube-state series;
- `node`: the node name from kubernetes_sd, on DCGM series.
vLLM engine series come from leader pods only (the API server and engine run on the
leader; workers are Ray actors) and only while the engine is up; a restarted engine
starts its counters from zero. DCGM series of a GPU carry `namespace`, `pod`,
`container`, `lws` while a pod holds that GPU (dcgm-exporter's Kubernetes pod mapping),
so alerts that require those labels follow the workload, not the hardware.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Sequence

import prometheus_client
from prometheus_client.core import HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.utils import floatToGoString

from simulator import objects
from simulator.fleet import Fleet
from simulator.store import NODES

CONTENT_TYPE = prometheus_client.CONTENT_TYPE_LATEST
NS = objects.NAMESPACE
ENGINE_LABELS = ["namespace", "pod", "model_name", "engine", "lws"]


def gpu_uuid(node: str, gpu: int) -> str:
    digest = hashlib.sha256(f"{node}/{gpu}".encode()).digest()[:16]
    return f"GPU-{uuid.UUID(bytes=digest)}"


def _metric(name: str, doc: str, typ: str, samples: Sequence[tuple[dict, float]]) -> Metric:
    m = Metric(name, doc, typ)
    sample_name = name + "_total" if typ == "counter" else name
    for labels, value in samples:
        m.add_sample(sample_name, labels, value)
    return m


class FleetCollector(Collector):
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    def collect(self):
        hidden = self.fleet.hidden_metrics  # families a scrape config drops (a scenario)
        for family in (*self._engine(), *self._dcgm(), *self._kube_state(), *self._gateway()):
            if family.name not in hidden:
                yield family

    def _engine(self):
        f = self.fleet
        rows = []  # (labels, group)
        for pool in sorted(f.cluster.groups):
            for index in sorted(f.groups(pool)):
                g = f.groups(pool)[index]
                if f.cluster.group_ready(g):
                    rows.append(
                        (
                            {
                                "namespace": NS,
                                "pod": g.leader.name,
                                "lws": pool,
                                "model_name": objects.MODEL,
                                "engine": "0",
                            },
                            g,
                        )
                    )
        gauges = (
            (
                "vllm:num_requests_running",
                "Number of requests in model execution batches.",
                lambda e: round(e.running),
            ),
            (
                "vllm:num_requests_waiting",
                "Number of requests waiting to be processed.",
                lambda e: round(e.waiting),
            ),
            (
                "vllm:kv_cache_usage_perc",
                "KV-cache usage. 1 means 100 percent usage.",
                lambda e: round(e.kv_usage, 4),
            ),
        )
        for name, doc, value in gauges:
            yield _metric(name, doc, "gauge", [(lb, value(g.engine)) for lb, g in rows])
        counters = (
            (
                "vllm:num_preemptions",
                "Cumulative number of preemption from the engine.",
                lambda c: c.preemptions,
            ),
            (
                "vllm:prompt_tokens",
                "Number of prefill tokens processed.",
                lambda c: c.prompt_tokens,
            ),
            (
                "vllm:generation_tokens",
                "Number of generation tokens processed.",
                lambda c: c.generation_tokens,
            ),
            (
                "vllm:prefix_cache_queries",
                "Prefix cache queries, in terms of number of queried tokens.",
                lambda c: c.prefix_queries,
            ),
            (
                "vllm:prefix_cache_hits",
                "Prefix cache hits, in terms of number of cached tokens.",
                lambda c: c.prefix_hits,
            ),
        )
        for name, doc, value in counters:
            samples = [(lb, math.floor(value(g.engine.counters))) for lb, g in rows]
            yield _metric(name, doc, "counter", samples)
        success = [
            ({**lb, "finished_reason": reason}, math.floor(n))
            for lb, g in rows
            for reason, n in g.engine.counters.success.items()
        ]
        yield _metric(
            "vllm:request_success", "Count of successfully processed requests.", "counter", success
        )
        for name, doc, attr in (
            (
                "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.",
                "ttft",
            ),
            (
                "vllm:inter_token_latency_seconds",
                "Histogram of inter-token latency in seconds.",
                "itl",
            ),
            (
                "vllm:e2e_request_latency_seconds",
                "Histogram of e2e request latency in seconds.",
                "e2e",
            ),
            (
                "vllm:request_prompt_tokens",
                "Number of prefill tokens processed.",
                "prompt",
            ),
        ):
            fam = HistogramMetricFamily(name, doc, labels=ENGINE_LABELS)
            for lb, g in rows:
                h = getattr(g.engine.counters, attr)
                buckets = [(floatToGoString(b), n) for b, n in h.cumulative()]
                fam.add_metric([lb[k] for k in ENGINE_LABELS], buckets, h.total)
            yield fam

    def _gpu_rows(self):
        f = self.fleet
        on_node = {p.node: (g, p) for g, p in f.cluster.all_pods() if p.node}
        for node in sorted(f.store.list(NODES), key=lambda n: _index(n["metadata"]["name"])):
            name = node["metadata"]["name"]
            for gpu in range(objects.GPUS_PER_NODE):
                labels = {
                    "gpu": str(gpu),
                    "UUID": gpu_uuid(name, gpu),
                    "device": f"nvidia{gpu}",
                    "modelName": "NVIDIA H100 80GB HBM3",
                    "Hostname": name,
                    "node": name,
                }
                g = p = None
                if name in on_node:
                    g, p = on_node[name]
                    labels.update(namespace=NS, pod=p.name, container="vllm", lws=g.lws)
                yield labels, g, name, gpu

    def _dcgm(self):
        f = self.fleet
        util, fb, xid = [], [], []
        for labels, g, node, gpu in self._gpu_rows():
            xid.append((labels, f.xid.get((node, gpu), 0)))
            up = g is not None and f.cluster.group_ready(g)
            util.append((labels, round(g.engine.gpu_util if up else 0.0)))
            # weights (~65 GB per node for a 70B model in bf16 over 16 GPUs... plus KV blocks)
            fb.append((labels, round(52_000 + 26_000 * g.engine.kv_usage) if up else 0))
        yield _metric("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge", util)
        yield _metric("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "gauge", fb)
        yield _metric("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
                      "gauge", xid)  # fmt: skip

    def total_text(self) -> str:
        """DCGM counters whose field names already end in _TOTAL: prometheus_client would
        append another `_total`, so these families are written by hand exactly as
        dcgm-exporter writes them."""
        f = self.fleet
        lines = []
        for name, doc, counts in (
            ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
             "Total number of double-bit volatile ECC errors.", f.ecc_dbe),
            ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
             "Total number of NVLink flow-control CRC errors.", f.nvlink_crc),
        ):  # fmt: skip
            lines += [f"# HELP {name} {doc}", f"# TYPE {name} counter"]
            for labels, _, node, gpu in self._gpu_rows():
                body = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
                lines.append(f"{name}{{{body}}} {math.floor(counts.get((node, gpu), 0.0))}")
        return "\n".join(lines) + "\n"

    def _kube_state(self):
        f = self.fleet
        restarts, ready, waiting, pod_labels, pod_info = [], [], [], [], []
        for g, p in f.cluster.all_pods():
            base = {"namespace": NS, "pod": p.name, "lws": g.lws}
            # kube-state-metrics exports pod labels as label_<sanitised name>; alert rules
            # join on it to learn a pod's LeaderWorkerSet, and the runbooks count the
            # template revisions of a pool to see a rollout in progress.
            pod_labels.append(
                ({"namespace": NS, "pod": p.name,
                  "label_leaderworkerset_sigs_k8s_io_name": g.lws,
                  "label_leaderworkerset_sigs_k8s_io_template_revision_hash": g.revision}, 1)
            )  # fmt: skip
            pod_info.append(({"namespace": NS, "pod": p.name, "node": p.node or ""}, 1))
            restarts.append(({**base, "container": "vllm"}, p.restarts))
            is_ready = f.cluster.pod_ready(p, g)
            for cond, on in (("true", is_ready), ("false", not is_ready), ("unknown", False)):
                ready.append(({**base, "condition": cond}, 1 if on else 0))
            crash = f.cluster.waiting_reason(p, g) == "CrashLoopBackOff"
            waiting.append(
                ({**base, "container": "vllm", "reason": "CrashLoopBackOff"}, 1 if crash else 0)
            )
        yield _metric(
            "kube_pod_container_status_restarts",
            "The number of container restarts per container.",
            "counter",
            restarts,
        )
        yield _metric(
            "kube_pod_status_ready",
            "Describes whether the pod is ready to serve requests.",
            "gauge",
            ready,
        )
        yield _metric(
            "kube_pod_container_status_waiting_reason",
            "Describes the reason the container is currently in waiting state.",
            "gauge",
            waiting,
        )
        yield _metric("kube_pod_labels", "Kubernetes labels converted to Prometheus labels.",
                      "gauge", pod_labels)  # fmt: skip
        yield _metric("kube_pod_info", "Information about pod.", "gauge", pod_info)

    def _gateway(self):
        f = self.fleet
        # `lws`: the pool the gateway routes this traffic to (chat traffic -> vllm-chat).
        ns = {"namespace": NS, "lws": "vllm-chat"}
        yield _metric(
            "llm_gateway_requests",
            "Requests answered by the LLM gateway.",
            "counter",
            [
                ({**ns, "model_version": v, "code": c}, math.floor(n))
                for (v, c), n in f.gw_requests.items()
            ],
        )
        yield _metric(
            "llm_gateway_rejected_requests",
            "Requests the gateway rejected.",
            "counter",
            [({**ns, "reason": r}, math.floor(n)) for r, n in f.gw_rejected.items()],
        )
        yield _metric(
            "llm_gateway_client_retries",
            "Requests that were client retries.",
            "counter",
            [(ns, math.floor(f.gw_retries))],
        )
        yield _metric(
            "llm_gateway_user_feedback",
            "User feedback on responses.",
            "counter",
            [
                ({**ns, "model_version": v, "feedback": fb}, math.floor(n))
                for (v, fb), n in f.gw_feedback.items()
            ],
        )
        yield _metric(
            "llm_gateway_output_format_violations",
            "Responses that failed the output format check (HTTP status unaffected).",
            "counter",
            [({**ns, "model_version": v}, math.floor(n)) for v, n in f.gw_violations.items()],
        )
        logic = str(f.router.get("routing_logic", ""))
        yield _metric(
            "vllm_router_routing_logic_info",
            "Routing logic the router is using.",
            "gauge",
            [({"namespace": NS, "routing_logic": logic}, 1)],
        )


def _index(name: str) -> int:
    digits = "".join(ch for ch in name if ch.isdigit())
    return int(digits) if digits else 0


def render(fleet: Fleet) -> bytes:
    collector = FleetCollector(fleet)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return prometheus_client.generate_latest(registry) + collector.total_text().encode()
