"""Per-group vLLM engine dynamics: a fluid queue with a KV-cache-bounded batch.

The model, per LWS group (one vLLM engine spread over the group's pods), each tick:
- arrivals join `waiting`; the scheduler admits waiting requests into `running` while KV
  slots are free: slots = min(max_num_seqs, 0.985 * kv_tokens / kv tokens per request);
- each running request finishes after its service time S = prefill + output_len * ITL,
  so completions per second = running / S and capacity = slots / S (Little's law);
- KV usage = running * kv tokens per request / kv_tokens; above 0.95 the scheduler
  preempts (2 % of running per second) and ITL degrades a little (+30 % at 100 %);
- waiting requests older than the gateway timeout leave (FIFO: waiting <= rate * timeout);
- TTFT = queue wait (waiting / capacity) + prefill; prefill cost falls with prefix-cache hits.
Latency histograms are filled by sampling each completed request from those distributions
with the fleet's seeded RNG, so runs are deterministic for a seed.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from dataclasses import dataclass, field

# Bucket sets verbatim from vllm/v1/metrics/loggers.py.
TTFT_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
)
ITL_BUCKETS = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
E2E_BUCKETS = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
)
# vllm:request_prompt_tokens uses 1-2-5 buckets up to max_model_len (here 128k).
PROMPT_BUCKETS = tuple(float(m * 10**e) for e in range(6) for m in (1, 2, 5))[:16]

GATEWAY_TIMEOUT_S = 30.0
PREFILL_TOKENS_PER_S = 20_000.0  # uncached prompt tokens one group prefills per second
PREFILL_FIXED_S = 0.12  # scheduling + first decode step
EAGER_SLOWDOWN = 1.25  # no CUDA graphs: decode steps ~25 % slower (~20 % less throughput)


@dataclass(frozen=True)
class PoolProfile:
    kv_tokens: float  # KV-cache capacity of one group, in tokens
    itl_s: float  # decode step time at normal load
    max_num_seqs: int = 256


PROFILES = {
    "vllm-chat": PoolProfile(kv_tokens=221_000, itl_s=0.035),
    "vllm-long": PoolProfile(kv_tokens=1_600_000, itl_s=0.045),
}


@dataclass(frozen=True)
class Component:
    """A slice of a pool's traffic: rate and mean request shape."""

    rps: float
    prompt: float  # mean prompt tokens
    out_mean: float  # mean output tokens before the max_tokens cap
    hit: float  # prefix-cache hit ratio (tokens)


@dataclass
class Mix:
    """Rate-weighted averages of a pool's traffic, given the gateway's max_tokens cap."""

    components: list[Component]
    cap: float
    itl_s: float
    prefill_x: float = 1.0  # a throttled GPU prefills this many times slower
    rps: float = 0.0
    service_s: float = 1.0
    kv_per_req: float = 1.0
    prompt: float = 0.0
    hit_tokens: float = 0.0
    out: float = 0.0
    length_frac: float = 0.0

    def __post_init__(self) -> None:
        self.rps = sum(c.rps for c in self.components)
        if self.rps <= 0:
            self.components = [Component(1e-9, 2000, 500, 0.8)]
            self.rps = 1e-9
        w = [c.rps / self.rps for c in self.components]
        # mean of min(Exp(m), cap) = m * (1 - e^(-cap/m)); P(hit the cap) = e^(-cap/m)
        outs = [c.out_mean * (1 - math.exp(-self.cap / c.out_mean)) for c in self.components]
        self.out = sum(wi * o for wi, o in zip(w, outs, strict=True))
        self.length_frac = sum(
            wi * math.exp(-self.cap / c.out_mean) for wi, c in zip(w, self.components, strict=True)
        )
        self.prompt = sum(wi * c.prompt for wi, c in zip(w, self.components, strict=True))
        self.kv_per_req = sum(
            wi * (c.prompt + o / 2) for wi, c, o in zip(w, self.components, outs, strict=True)
        )
        self.service_s = sum(
            wi * (prefill_s(c, self.prefill_x) + o * self.itl_s)
            for wi, c, o in zip(w, self.components, outs, strict=True)
        )
        tokens = sum(wi * c.prompt for wi, c in zip(w, self.components, strict=True))
        self.hit_tokens = (
            sum(wi * c.prompt * c.hit for wi, c in zip(w, self.components, strict=True)) / tokens
        )


def prefill_s(c: Component, slower: float = 1.0) -> float:
    return (PREFILL_FIXED_S + c.prompt * (1 - c.hit) / PREFILL_TOKENS_PER_S) * slower


class Histogram:
    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # last = +Inf
        self.total = 0.0

    def observe(self, value: float, n: int = 1) -> None:
        self.counts[bisect_left(self.bounds, value)] += n
        self.total += value * n

    def cumulative(self) -> list[tuple[float, int]]:
        out, acc = [], 0
        for bound, count in zip((*self.bounds, math.inf), self.counts, strict=True):
            acc += count
            out.append((bound, acc))
        return out

    @property
    def count(self) -> int:
        return sum(self.counts)


@dataclass
class EngineCounters:
    """Cumulative values of one vLLM process (a restart starts them from 0, as in reality)."""

    prompt_tokens: float = 0.0
    generation_tokens: float = 0.0
    preemptions: float = 0.0
    prefix_queries: float = 0.0
    prefix_hits: float = 0.0
    success: dict = field(default_factory=lambda: {"stop": 0.0, "length": 0.0, "abort": 0.0})
    ttft: Histogram = field(default_factory=lambda: Histogram(TTFT_BUCKETS))
    itl: Histogram = field(default_factory=lambda: Histogram(ITL_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram(E2E_BUCKETS))
    prompt: Histogram = field(default_factory=lambda: Histogram(PROMPT_BUCKETS))


@dataclass
class EngineState:
    running: float = 0.0
    waiting: float = 0.0
    kv_usage: float = 0.0
    itl_s: float = 0.0
    wait_s: float = 0.0
    gpu_util: float = 0.0
    preempt_rps: float = 0.0
    done_carry: float = 0.0
    counters: EngineCounters = field(default_factory=EngineCounters)

    def reset(self) -> float:
        """The process restarted: in-flight requests are lost. Returns how many."""
        lost = self.running + self.waiting
        self.__init__()  # type: ignore[misc]
        return lost


@dataclass
class StepResult:
    completed: float = 0.0
    timed_out: float = 0.0
    samples: list = field(default_factory=list)  # TTFT samples, for status p50/p99


def step(
    eng: EngineState,
    profile: PoolProfile,
    mix: Mix,
    rps: float,
    dt: float,
    rng: random.Random,
    *,
    hung: bool = False,
    eager: bool = False,
) -> StepResult:
    res = StepResult()
    c = eng.counters
    slots = min(profile.max_num_seqs, 0.985 * profile.kv_tokens / mix.kv_per_req)
    eng.waiting += rps * dt
    if hung:
        # NCCL hang: the engine loop is stuck in a collective; nothing is admitted or
        # finished, KV stays allocated, the HTTP server (and /health) still answers.
        done = 0.0
    else:
        done = min(eng.running, eng.running * dt / mix.service_s)
        eng.running -= done
        admitted = min(eng.waiting, max(0.0, slots - eng.running))
        eng.waiting -= admitted
        eng.running += admitted
        c.prompt_tokens += admitted * mix.prompt
        c.prefix_queries += admitted * mix.prompt
        c.prefix_hits += admitted * mix.prompt * mix.hit_tokens
        eng.kv_usage = min(0.99, eng.running * mix.kv_per_req / profile.kv_tokens)
    # FIFO queue with a client/gateway timeout: nothing older than the timeout is left.
    res.timed_out = max(0.0, eng.waiting - rps * GATEWAY_TIMEOUT_S)
    eng.waiting -= res.timed_out
    c.success["abort"] += res.timed_out
    eng.preempt_rps = 0.02 * eng.running if eng.kv_usage > 0.95 and not hung else 0.0
    c.preemptions += eng.preempt_rps * dt
    base_itl = mix.itl_s * (EAGER_SLOWDOWN if eager else 1.0)
    eng.itl_s = base_itl * (1 + 3 * max(0.0, eng.kv_usage - 0.9))
    capacity = slots / mix.service_s
    eng.wait_s = eng.waiting / capacity if capacity > 0 else 0.0
    occupancy = min(1.0, eng.running / slots) if slots else 0.0
    # Prefill of uncached tokens is compute-heavy: a poor cache hit ratio costs GPU time.
    eng.gpu_util = (
        100.0 if hung else min(100.0, (20 + 60 * occupancy) * (1.45 - 0.45 * mix.hit_tokens))
    )
    if done:
        c.generation_tokens += done * mix.out
        c.success["length"] += done * mix.length_frac
        c.success["stop"] += done * (1 - mix.length_frac)
    res.completed = done
    eng.done_carry += done
    n = int(eng.done_carry)
    eng.done_carry -= n
    weights = [comp.rps for comp in mix.components]
    for _ in range(n):
        comp = rng.choices(mix.components, weights)[0]
        prefill = prefill_s(comp, mix.prefill_x)
        ttft = eng.wait_s * rng.lognormvariate(0, 0.25) + prefill * rng.lognormvariate(0, 0.45)
        out = max(1, min(int(mix.cap), int(rng.expovariate(1 / comp.out_mean)) + 1))
        itl = eng.itl_s * rng.lognormvariate(0, 0.15)
        c.ttft.observe(ttft)
        c.itl.observe(itl, out)  # vLLM observes every inter-token gap
        c.e2e.observe(ttft + out * itl)
        c.prompt.observe(round(comp.prompt * rng.uniform(0.5, 1.5)))
        res.samples.append(ttft)
    return res
