"""The chapter's 15-point pre-launch checklist, in its order.

`source` says where the console gets the answer: "kubernetes" (the LeaderWorkerSet or the
namespace's router/gateway ConfigMaps), "prometheus", "catalogue" (runbooks vs alert
rules), "drills" (the drill history), or "person" (a commander signs it off, with a note
and an expiry, because no API can tell).
"""

from __future__ import annotations

from dataclasses import dataclass

KUBERNETES, PROMETHEUS, CATALOGUE, DRILLS, PERSON = (
    "kubernetes",
    "prometheus",
    "catalogue",
    "drills",
    "person",
)


@dataclass(frozen=True)
class Item:
    key: str
    title: str
    source: str
    why: str

    @property
    def verified_by_console(self) -> bool:
        return self.source != PERSON


ITEMS: tuple[Item, ...] = (
    Item("autoscaling", "HPA/KEDA with enough cooldown", PERSON,
         "Scale-down cooldown longer than a model load, or the pool flaps."),
    Item("drain", "Endpoint drain and SIGTERM semantics verified", KUBERNETES,
         "A preStop hook and a grace period let in-flight requests finish."),
    Item("readiness_probe", "readinessProbe after model load", KUBERNETES,
         "Traffic only reaches a leader once the model is loaded."),
    Item("nccl_watchdog", "NCCL watchdog timeout", KUBERNETES,
         "A hung collective fails fast instead of stalling the group."),
    Item("dcgm", "DCGM monitoring", PROMETHEUS,
         "GPU health (XID, ECC, utilisation) is scraped for the pool."),
    Item("oom_restart", "OOM auto-restart", KUBERNETES,
         "An OOM-killed pod brings its whole group back."),
    Item("router_fallback", "Router falls back to round-robin", KUBERNETES,
         "When the smart routing logic fails, requests still spread."),
    Item("gateway_limits", "Gateway limits on RPS, tokens and concurrency", KUBERNETES,
         "A retry storm or one heavy client cannot take the pool down."),
    Item("max_tokens_cap", "A max_tokens cap", KUBERNETES,
         "One request cannot hold the KV cache for minutes."),
    Item("client_retries", "Client retries with backoff and jitter", PERSON,
         "Clients back off instead of multiplying load during an outage."),
    Item("canary", "Canary with rollback thresholds", PERSON,
         "A bad model or config version is rolled back automatically."),
    Item("chaos_drill", "Chaos drill passed", DRILLS,
         "A drill against this deployment passed in the last 90 days."),
    Item("zone_spread", "Spread across zones", KUBERNETES,
         "Losing one zone does not take every group."),
    Item("runbooks", "Runbooks written", CATALOGUE,
         "Every alert in the rules has a runbook in the catalogue."),
    Item("oncall_trained", "On-call trained", PERSON,
         "The people paged for this deployment have practised the runbooks."),
)  # fmt: skip

BY_KEY: dict[str, Item] = {item.key: item for item in ITEMS}
SIGN_OFF_KEYS: tuple[str, ...] = tuple(i.key for i in ITEMS if not i.verified_by_console)
VERIFIED_KEYS: tuple[str, ...] = tuple(i.key for i in ITEMS if i.verified_by_console)
