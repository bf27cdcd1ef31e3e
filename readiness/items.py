"""The chapter's 15-point pre-launch checklist, in its order.

`source` says where the console gets the answer: "kubernetes" (the LeaderWorkerSet or the
namespace's router/gateway ConfigMaps), "prometheus", "catalogue" (runbooks vs alert
rules), "drills" (the drill history), or "person" (a commander signs it off, with a note
and an expiry, because no API can tell).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_noop

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


# Titles and explanations stay English in the data (the API answers in English); the pages
# translate them when they render, so they are only marked for the catalogue here.
ITEMS: tuple[Item, ...] = (
    Item("autoscaling", gettext_noop("HPA/KEDA with enough cooldown"), PERSON,
         gettext_noop("Scale-down cooldown longer than a model load, or the pool flaps.")),
    Item("drain", gettext_noop("Endpoint drain and SIGTERM semantics verified"), KUBERNETES,
         gettext_noop("A preStop hook and a grace period let in-flight requests finish.")),
    Item("readiness_probe", gettext_noop("readinessProbe after model load"), KUBERNETES,
         gettext_noop("Traffic only reaches a leader once the model is loaded.")),
    Item("nccl_watchdog", gettext_noop("NCCL watchdog timeout"), KUBERNETES,
         gettext_noop("A hung collective fails fast instead of stalling the group.")),
    Item("dcgm", gettext_noop("DCGM monitoring"), PROMETHEUS,
         gettext_noop("GPU health (XID, ECC, utilisation) is scraped for the pool.")),
    Item("oom_restart", gettext_noop("OOM auto-restart"), KUBERNETES,
         gettext_noop("An OOM-killed pod brings its whole group back.")),
    Item("router_fallback", gettext_noop("Router falls back to round-robin"), KUBERNETES,
         gettext_noop("When the smart routing logic fails, requests still spread.")),
    Item("gateway_limits",
         gettext_noop("Gateway limits on RPS, tokens and concurrency"), KUBERNETES,
         gettext_noop("A retry storm or one heavy client cannot take the pool down.")),
    Item("max_tokens_cap", gettext_noop("A max_tokens cap"), KUBERNETES,
         gettext_noop("One request cannot hold the KV cache for minutes.")),
    Item("client_retries", gettext_noop("Client retries with backoff and jitter"), PERSON,
         gettext_noop("Clients back off instead of multiplying load during an outage.")),
    Item("canary", gettext_noop("Canary with rollback thresholds"), PERSON,
         gettext_noop("A bad model or config version is rolled back automatically.")),
    Item("chaos_drill", gettext_noop("Chaos drill passed"), DRILLS,
         gettext_noop("A drill against this deployment passed in the last 90 days.")),
    Item("zone_spread", gettext_noop("Spread across zones"), KUBERNETES,
         gettext_noop("Losing one zone does not take every group.")),
    Item("runbooks", gettext_noop("Runbooks written"), CATALOGUE,
         gettext_noop("Every alert in the rules has a runbook in the catalogue.")),
    Item("oncall_trained", gettext_noop("On-call trained"), PERSON,
         gettext_noop("The people paged for this deployment have practised the runbooks.")),
)  # fmt: skip

BY_KEY: dict[str, Item] = {item.key: item for item in ITEMS}
SIGN_OFF_KEYS: tuple[str, ...] = tuple(i.key for i in ITEMS if not i.verified_by_console)
VERIFIED_KEYS: tuple[str, ...] = tuple(i.key for i in ITEMS if i.verified_by_console)
