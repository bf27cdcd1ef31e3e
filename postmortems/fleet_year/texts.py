"""The words of the generated year: alert summaries as the Prometheus rules write them
(deploy/prometheus/rules/vllm-incidents.yml), what responders type, postmortem prose and
action items. English only, like what people type; the console's own lines are stored
as message ids (incidents/texts.py) so each reader sees them in their language.

No string here but the postmortem prose (escaped where it is written) holds a quote, a
backslash, a tab or a newline: alert rows and their JSON are written as COPY text without
escaping."""

from __future__ import annotations

# The English of the message ids the generator stores (incidents/texts.py, related
# rules); the tests compare each with console.texts' own rendering.
EN: dict[str, str] = {
    "incidents.opened": "Incident opened: %(title)s",
    "incidents.status.acknowledged": "Incident acknowledged.",
    "incidents.status.resolved": "Incident resolved.",
    "incidents.status.resolved.reason": "Incident resolved: %(reason)s",
    "incidents.status.no_commander": "(resolved with nobody in command, confirmed)",
    "incidents.status.all_resolved": "All alerts resolved; mitigated until a person resolves it.",
    "incidents.status.firing_again": "Alerts are firing again.",
    "incidents.status.reopened_by_alert": (
        "Reopened: %(alert)s fired again within %(minutes)s min of resolution."
    ),
    "incidents.commander.took_by_ack": (
        "%(actor)s took command by acknowledging: %(from)s → %(to)s."
    ),
    "incidents.word.nobody": "nobody",
    "incidents.related.part_of": "Part of #%(lead)s (%(runbook)s): %(why)s.",
    "incidents.related.leads": "Leads #%(id)s (%(runbook)s): %(why)s.",
    "incidents.related.why.runbook": "runbook %(lead)s leads over %(other)s",
    "incidents.related.why.severity": "%(higher)s is more severe than %(lower)s",
    "incidents.related.why.first": "opened first at the same severity",
}

# Plural ids: (one, many) by `count`.
PLURAL: dict[str, tuple[str, str]] = {
    "incidents.alerts.firing": (
        "%(count)s alert firing: %(names)s",
        "%(count)s alerts firing: %(names)s",
    ),
    "incidents.alerts.resolved": (
        "%(count)s alert resolved: %(names)s",
        "%(count)s alerts resolved: %(names)s",
    ),
}

SUMMARY = {
    "VLLMHighTTFT": "TTFT p99 of {ns}/{lws} is {secs}s",
    "VLLMEngineStalled": "vLLM engine {pod} in {ns}/{lws} is stalled",
    "VLLMPrefixCacheHitRateDrop": "Prefix-cache hit rate of {ns}/{lws} is {pct}%",
    "VLLMRetryStorm": "Retry storm on {ns}/{lws}",
    "VLLMOutputQualityRegression": (
        "Output quality regression of model version v{ver} on {ns}/{lws}"
    ),
    "GPUECCErrors": "Double-bit ECC errors on GPU {gpu} of node {node}",
    "VLLMCrashLooping": "vLLM pod {pod} in {ns}/{lws} is crash-looping",
    "VLLMKVCachePressure": "KV cache of {ns}/{lws} is {pct}% full",
}
SUMMARY_OTHER = "{alertname} on {ns}/{lws}"

# What responders write on the timeline (placeholders from the incident).
NOTES = (
    "Looking at it now.",
    "Checking the {lws} dashboards.",
    "Queue depth on {lws} is climbing; checking KV-cache usage.",
    "Paged the {team} team.",
    "Customer impact: slower answers for {ns} users in {cluster}.",
    "Restarted {pod}.",
    "Cordoned {node} and drained its pods.",
    "Scaled {lws} out by 4 groups.",
    "Rolled back the canary on {lws}; watching the error rate.",
    "Router back on prefix-aware routing.",
    "Rate limit lowered for the retrying client; 5xx falling.",
    "Same pattern as last week, following the runbook.",
    "Back to normal for 10 minutes, keeping it open a bit longer.",
    "Opened a ticket with the GPU vendor for {node}.",
    "Prometheus gap between 2 and 4 minutes in; numbers before that are fine.",
    "Handing over to the next on-call, nothing else pending.",
)
RESOLVE_REASONS = (
    "Back to normal after the rollback.",
    "Load shed; TTFT p99 under 1s again.",
    "Faulty GPU drained; the group is serving again.",
    "Recovered on its own after the traffic spike.",
    "False alarm: metrics gap during a Prometheus restart.",
    "Restarted the stuck group; tokens flowing.",
    "Router fixed; cache hit rate back above 80%.",
)

POSTMORTEM = {
    "summary": "{title}. {lws} in {ns} ({cluster}) was degraded for {minutes} minutes.",
    "impact": (
        "About {pct}% of requests to {lws} were slow or failed while the alerts fired; "
        "{alerts} alerts over {pods} pods."
    ),
    "root_cause": (
        "{kind_title}. The runbook {slug} diagnosis was confirmed by the on-call engineer."
    ),
    "contributing_factors": (
        "- Alerting fired {detect} seconds after the impact began.\n"
        "- The pool ran close to capacity."
    ),
    "lessons_learned": (
        "- The runbook steps worked as written.\n- Capacity headroom for {lws} was too thin."
    ),
}
# (category, priority, title) for action items.
ACTION_ITEMS = (
    ("monitoring", "P2", "Alert on {lws} queue depth before TTFT degrades"),
    ("monitoring", "P3", "Add a dashboard panel for {kind} on {ns}"),
    ("automation", "P1", "Automate the {slug} emergency action for {ns}"),
    ("automation", "P2", "Auto-cordon nodes reporting ECC errors"),
    ("drill", "P3", "Run a chaos drill of {slug} on {lws}"),
    ("config", "P2", "Pin the router policy for {lws} to prefix-aware"),
    ("config", "P3", "Lower max-num-seqs on {lws} for long prompts"),
    ("capacity", "P1", "Add 4 groups of headroom to {lws}"),
    ("capacity", "P3", "Move {lws} to the larger GPU pool in {cluster}"),
    ("process", "P4", "Review the {team} on-call handover checklist"),
    ("process", "P2", "Require canary analysis before promoting {lws}"),
)
WONT_DO = "Superseded by the fleet-wide capacity plan."
RECEIVER = "incident-console"
EXTERNAL_URL = "http://alertmanager.monitoring.svc:9093"
