"""The fleet: a controller over the object store plus seeded traffic/engine dynamics.

Each `tick(dt)`: read the router and gateway ConfigMaps (a broken edit keeps the last good
config, as the production-stack router does), reconcile pods against the LWS objects and
nodes (fleet_cluster), offer traffic through the gateway (rate limit, max_tokens cap,
long-context threshold) to each pool's ready groups, step every engine (fleet_engine), and
account the gateway's responses. Scenarios (scenarios.py) only write to the store the way
a bad release or config push would, or flip a fault that lives below the API (a hung NCCL
collective, a bad GPU, a client retry loop); the fixes go through the store like any
Kubernetes client's change.
"""

from __future__ import annotations

import json
import math
import random
from collections import deque

from simulator import objects
from simulator.fleet_cluster import Cluster, GroupSim
from simulator.fleet_engine import PROFILES, Component, Mix, step
from simulator.store import CONFIGMAPS, NODES, ObjectStore
from simulator.variants import scenario_for

CACHE_AWARE_HIT = {"prefixaware": 0.82, "kvaware": 0.8, "session": 0.75}
ROUNDROBIN_HIT = 0.05
CODES = ("200", "429", "502", "503", "504")
VERSIONS = ("v1", "v2-canary")
# Traffic classes: (rps, prompt tokens uniform min..max, mean output tokens, cache hit).
# A traffic class: requests/s, prompt tokens low and high, output tokens, prefix-cache
# hit rate (None: from the router's routing logic).
TrafficClass = tuple[float, int, int, float, float | None]
CHAT: TrafficClass = (13.0, 500, 3500, 500, None)  # hit from the router's routing logic
DOCS: TrafficClass = (0.15, 40_000, 120_000, 600, 0.5)  # long-context document Q&A
# Per response: P(user leaves feedback), P(thumbs down | feedback), P(format violation).
QUALITY = {"v1": (0.05, 0.12, 0.002), "v2-canary": (0.05, 0.6, 0.25)}
GARBAGE = QUALITY["v2-canary"]  # answers of a checkpoint with broken weights, any version
DAY_S = 600.0  # the traffic curve's period: a compressed day of 10 simulated minutes
WRONG_ANSWER_RATE = 0.01  # answers computed on a GPU with double-bit ECC errors


class Fleet:
    def __init__(self, store: ObjectStore, *, seed: int = 0, startup_delay_s: float = 20.0):
        self.store = store
        self.rng = random.Random(seed)  # noqa: S311 (simulation, not security)
        self.t = 0.0
        self.cluster = Cluster(store, startup_delay_s)
        self.active: dict[str, dict] = {}  # slug -> scenario state
        self.router: dict = {"routing_logic": "prefixaware", "model_versions": {"v1": 100}}
        self.gateway: dict = {
            "max_tokens_cap": 8192,
            "rate_limit_rps": 0,
            "long_context_threshold_tokens": 32768,
        }
        self.retry_multiplier = 1.0
        self.retries_without_budget = False  # clients re-send every failure (retry-storm)
        self.chat_class: TrafficClass = (
            CHAT  # the interactive traffic, as a scenario may reshape it
        )
        self.extra_classes: list[TrafficClass] = []  # traffic a scenario adds
        self.load_factor = 1.0  # traffic multiplier a scenario sets
        # pool -> (prefill, decode) slow-down of throttled GPUs: compute-bound prefill
        # suffers more from a clock drop than memory-bound decoding.
        self.throttle: dict[str, tuple[float, float]] = {}
        self.hidden_metrics: set[str] = set()  # metric families no longer scraped
        self.gw_requests = {(v, c): 0.0 for v in VERSIONS for c in CODES}
        self.gw_rejected = {"rate_limit": 0.0}
        self.gw_retries = 0.0
        self.gw_feedback = {(v, f): 0.0 for v in VERSIONS for f in ("thumbs_up", "thumbs_down")}
        self.gw_violations = dict.fromkeys(VERSIONS, 0.0)
        self.wrong_answers = 0.0
        self.ecc_dbe: dict[tuple[str, int], float] = {}
        self.ecc_node: str | None = None  # node whose GPU 0 is failing (ecc-errors)
        self.nvlink_crc: dict[tuple[str, int], float] = {}  # flit CRC errors (nccl-hang)
        self.xid: dict[tuple[str, int], int] = {}  # last Xid code per GPU (sticky, as DCGM)
        self.pool_stats: dict[str, dict] = {}
        # (time, TTFT seconds) per pool
        self.ttft_samples: dict[str, deque[tuple[float, float]]] = {
            p: deque(maxlen=2000) for p in PROFILES
        }
        self._read_configs()
        self.cluster.reconcile(self.t, initial=True)

    # --- public API -----------------------------------------------------------------------
    def tick(self, dt: float = 1.0) -> None:
        self.t += dt
        self._read_configs()
        self.cluster.reconcile(self.t)
        self._traffic(dt)
        for slug, state in list(self.active.items()):
            scenario = scenario_for(slug, state.get("variant", ""))
            if scenario.tick is not None:
                scenario.tick(self, state)
        if self.ecc_node:
            key = (self.ecc_node, 0)
            self.ecc_dbe[key] = self.ecc_dbe.get(key, 0.0) + 0.5 * dt  # bad HBM keeps failing
            self.xid[key] = 48  # Xid 48: double-bit ECC error
        self._flaky_links(dt)

    def inject(self, slug: str, variant: str = "") -> None:
        """Start a runbook's failure; `variant` picks another way the same runbook's alert
        fires (simulator/variants.py), reaching another branch of its decision tree."""
        scenario = scenario_for(slug, variant)  # ValueError names the valid ones
        if slug in self.active:
            return  # already running: injecting twice is one incident
        state = {"since": self.t, "variant": variant}
        self.active[slug] = state
        scenario.start(self, state)

    def clear(self, slug: str | None = None) -> None:
        if slug is not None:
            scenario_for(slug, "")
        for s in [slug] if slug else list(self.active):
            state = self.active.pop(s, None)
            if state is not None:
                scenario_for(s, state.get("variant", "")).stop(self, state)
        self._read_configs()

    def status(self) -> dict:
        scenarios = []
        for s, st in self.active.items():
            scenario = scenario_for(s, st.get("variant", ""))
            scenarios.append(
                {"slug": s, "variant": st.get("variant", ""), "alert": scenario.alert,
                 "since_s": st["since"], "fixed": scenario.fixed(self, st)}
            )  # fmt: skip
        nodes = {}
        on_node = {p.node: (g, p) for g, p in self.cluster.all_pods() if p.node}
        for n in self.store.list(NODES):
            name = n["metadata"]["name"]
            spec = n.get("spec") or {}
            nodes[name] = {
                "unschedulable": bool(spec.get("unschedulable")),
                "taints": [t.get("key") for t in spec.get("taints") or []],
                "pod": on_node[name][1].name if name in on_node else None,
                "ecc_dbe_total": int(sum(v for (nn, _), v in self.ecc_dbe.items() if nn == name)),
                "gpu_healthy": not (name == self.ecc_node and "ecc-errors" in self.active),
            }
        return {
            "time_s": self.t,
            "active_scenarios": scenarios,
            "autoscaler": "in cooldown (no automatic scaling)"
            if "ttft-spike" in self.active
            else "idle (the simulator never scales by itself)",
            "pools": self.pool_stats,
            "router": self.router,
            "gateway": {**self.gateway, "retry_multiplier": round(self.retry_multiplier, 2)},
            "nodes": nodes,
        }

    # --- helpers for scenarios and metrics ------------------------------------------------
    def groups(self, pool: str) -> dict[int, GroupSim]:
        return self.cluster.groups.get(pool, {})

    def edit_config(self, name: str, key: str, change, *, actor: str) -> None:
        """Read-modify-write a JSON document in a ConfigMap, as a client would (PUT)."""
        cm = self.store.get(CONFIGMAPS, objects.NAMESPACE, name)
        doc = json.loads(cm["data"][key])
        change(doc)
        cm["data"][key] = json.dumps(doc, indent=2)
        self.store.update(CONFIGMAPS, objects.NAMESPACE, name, cm, actor=actor)
        self._read_configs()

    def config_doc(self, name: str, key: str) -> dict:
        return json.loads(self.store.get(CONFIGMAPS, objects.NAMESPACE, name)["data"][key])

    def _read_configs(self) -> None:
        for attr, name, key in (
            ("router", objects.ROUTER_CONFIGMAP, "dynamic_config.json"),
            ("gateway", objects.GATEWAY_CONFIGMAP, "config.json"),
        ):
            try:
                doc = self.config_doc(name, key)
                if isinstance(doc, dict):
                    setattr(self, attr, {**getattr(self, attr), **doc})
            except Exception:  # noqa: S112 (missing or unparsable: keep the last good config)
                continue

    def _flaky_links(self, dt: float) -> None:
        """A hung group's collective waits on a flaky NVLink link of its leader's GPU 0:
        its flit CRC errors keep rising and the driver logged Xid 74 (NVLink error)."""
        for g in self.groups("vllm-chat").values():
            if g.hung and g.link_fault and g.leader.node:
                key = (g.leader.node, 0)
                self.nvlink_crc[key] = self.nvlink_crc.get(key, 0.0) + 3.0 * dt
                self.xid[key] = 74

    # --- traffic ----------------------------------------------------------------------------
    def _num(self, key: str, default: float) -> float:
        try:
            return float(self.gateway.get(key, default))
        except (TypeError, ValueError):
            return default

    def _route(self, load: float) -> dict[str, list[Component]]:
        """Split traffic between pools by prompt length (gateway long-context threshold)."""
        threshold = self._num("long_context_threshold_tokens", 32768)
        logic = str(self.router.get("routing_logic") or "")
        chat_hit = CACHE_AWARE_HIT.get(logic, ROUNDROBIN_HIT)
        pools: dict[str, list[Component]] = {p: [] for p in PROFILES}
        for rps, lo, hi, out, hit in [self.chat_class, DOCS, *self.extra_classes]:
            above = min(1.0, max(0.0, (hi - threshold) / (hi - lo)))
            for frac, mean, pool in (
                (above, (max(lo, threshold) + hi) / 2, "vllm-long"),
                (1 - above, (lo + min(hi, threshold)) / 2, "vllm-chat"),
            ):
                if frac > 0:
                    h = hit if hit is not None else (chat_hit if pool == "vllm-chat" else 0.3)
                    pools[pool].append(Component(rps * load * frac, mean, out, h))
        return pools

    def _traffic(self, dt: float) -> None:
        storm = self.retries_without_budget and self._num("rate_limit_rps", 0) <= 0
        # Clients without a retry budget re-send every failed request: x5 offered traffic.
        # With a rate limit the gateway answers 429 + Retry-After and clients back off.
        target = 5.0 if storm else 1.0
        self.retry_multiplier += (target - self.retry_multiplier) * min(1.0, dt / 5)
        # A compressed "day" plus 2 % noise, so graphs move without alerting.
        diurnal = 1 + 0.05 * math.sin(2 * math.pi * self.t / DAY_S) + self.rng.gauss(0, 0.02)
        base = diurnal * self.load_factor
        offered = base * self.retry_multiplier
        pools = self._route(offered)
        total = sum(c.rps for comps in pools.values() for c in comps)
        limit = self._num("rate_limit_rps", 0)
        accept = min(1.0, limit / total) if limit > 0 and total > 0 else 1.0
        versions = self.router.get("model_versions") or {"v1": 100}
        try:
            w1, w2 = float(versions.get("v1", 0)), float(versions.get("v2-canary", 0))
            canary = w2 / (w1 + w2) if w1 + w2 > 0 else 0.0
        except (TypeError, ValueError, AttributeError):
            canary = 0.0
        codes = dict.fromkeys(CODES, 0.0)
        codes["429"] = total * (1 - accept) * dt
        self.gw_rejected["rate_limit"] += codes["429"]
        wrong = garbage = 0.0
        cap = max(1.0, self._num("max_tokens_cap", 8192))
        for pool, profile in PROFILES.items():
            comps = [Component(c.rps * accept, c.prompt, c.out_mean, c.hit) for c in pools[pool]]
            stats = self._pool(pool, profile, comps, cap, dt, codes)
            wrong += stats.pop("_on_bad_gpu") * WRONG_ANSWER_RATE
            garbage += stats.pop("_garbage")
        codes["502"] += self.cluster.lost_requests
        self.cluster.lost_requests = 0.0
        # Retries are counted among the requests the gateway answered (as its access log
        # tags them), so they can never exceed them: with x5 traffic, 4 in 5 are retries.
        answered = sum(codes.values())
        self.gw_retries += answered * ((self.retry_multiplier - 1) / self.retry_multiplier + 0.003)
        self.wrong_answers += wrong
        for code, n in codes.items():  # the router picks the version before the backend
            self.gw_requests[("v2-canary", code)] += n * canary
            self.gw_requests[("v1", code)] += n * (1 - canary)
        for version, n in (
            ("v1", codes["200"] * (1 - canary)),
            ("v2-canary", codes["200"] * canary),
        ):
            bad = min(1.0, garbage / codes["200"]) if codes["200"] > 0 else 0.0
            fb, down, viol = (
                (1 - bad) * q + bad * g for q, g in zip(QUALITY[version], GARBAGE, strict=True)
            )
            extra_down = wrong * 0.5 if version == "v1" else 0.0
            self.gw_feedback[(version, "thumbs_down")] += n * fb * down + extra_down
            self.gw_feedback[(version, "thumbs_up")] += n * fb * (1 - down)
            self.gw_violations[version] += n * viol

    def _pool(self, pool, profile, comps, cap, dt, codes) -> dict:
        slower, decode_x = self.throttle.get(pool, (1.0, 1.0))
        mix = Mix(comps, cap, profile.itl_s * decode_x, slower)
        groups = self.groups(pool)
        ready = [g for g in groups.values() if self.cluster.group_ready(g)]
        serving = [g for g in ready if not g.out_of_rotation]
        on_bad = garbage = 0.0
        if not serving:
            codes["503"] += mix.rps * dt
        for g in ready:
            res = step(
                g.engine,
                profile,
                mix,
                mix.rps / len(serving) if g in serving else 0.0,
                dt,
                self.rng,
                hung=g.hung,
                eager=g.eager,
            )
            codes["200"] += res.completed
            codes["504"] += res.timed_out
            if self.ecc_node and any(p.node == self.ecc_node for p in g.pods):
                on_bad += res.completed
            if g.bad_weights:
                garbage += res.completed
            self.ttft_samples[pool].extend((self.t, s) for s in res.samples)
        samples = sorted(s for when, s in self.ttft_samples[pool] if when > self.t - 30)
        engines = [g.engine for g in ready]
        capacity = sum(
            0.0
            if g.hung
            else min(profile.max_num_seqs, 0.985 * profile.kv_tokens / mix.kv_per_req)
            / mix.service_s
            for g in ready
        )
        self.pool_stats[pool] = {
            "groups_desired": len(groups),
            "groups_ready": len(ready),
            "offered_rps": round(mix.rps if mix.rps > 1e-6 else 0.0, 2),
            "capacity_rps": round(capacity, 2),
            "running": round(sum(e.running for e in engines), 1),
            "waiting": round(sum(e.waiting for e in engines), 1),
            "waiting_max": round(max((e.waiting for e in engines), default=0.0), 1),
            "kv_usage_max": round(max((e.kv_usage for e in engines), default=0.0), 3),
            "preemptions_per_s": round(sum(e.preempt_rps for e in engines), 2),
            "ttft_p50_s": round(_quantile(samples, 0.5), 3),
            "ttft_p99_s": round(_quantile(samples, 0.99), 3),
            "itl_s": round(max((e.itl_s for e in engines), default=0.0), 4),
            "prefix_hit_rate": round(mix.hit_tokens, 3),
            "gpu_util_max": round(max((e.gpu_util for e in engines), default=0.0), 1),
            "hung_groups": sorted(g.index for g in groups.values() if g.hung),
            "crashlooping_groups": sorted(g.index for g in groups.values() if g.crashing),
            "_on_bad_gpu": on_bad,
            "_garbage": garbage,
        }
        return self.pool_stats[pool]


def _quantile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]
