"""Realistic Alertmanager webhook v4 bodies for tests (shapes from real captures)."""

import copy
from datetime import UTC, datetime, timedelta

from incidents.ingest.parse import labels_fingerprint

GO_ZERO = "0001-01-01T00:00:00Z"
BASE = datetime(2026, 11, 29, 8, 0, 0, tzinfo=UTC)


def rfc3339(dt: datetime, nanos: int = 0) -> str:
    text = dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{dt.microsecond:06d}{nanos:03d}Z"


def alert(
    *,
    pod: str = "vllm-chat-0",
    status: str = "firing",
    alertname: str = "VLLMHighTTFT",
    severity: str = "critical",
    runbook: str = "ttft-spike",
    starts_at: datetime = BASE,
    ends_at: datetime | None = None,
    fingerprint: str | None = None,
    extra_labels: dict | None = None,
) -> dict:
    labels = {
        "alertname": alertname,
        "severity": severity,
        "runbook": runbook,
        "namespace": "llm-serving",
        "lws": "vllm-chat",
        "pod": pod,
        "model_name": "meta-llama/Llama-3.1-70B-Instruct",
    }
    labels.update(extra_labels or {})
    body = {
        "status": status,
        "labels": labels,
        "annotations": {
            "summary": "TTFT p99 above 2s on vllm-chat",
            "description": f"TTFT p99 on {pod} is 9.8s (threshold 2s).",
            "runbook_url": f"http://console.example/runbooks/{runbook}",
        },
        "startsAt": rfc3339(starts_at, 123),
        "endsAt": rfc3339(ends_at) if ends_at else GO_ZERO,
        "generatorURL": "http://prometheus:9090/graph?g0.expr=vllm%3Atime_to_first_token",
    }
    if fingerprint is not None:
        body["fingerprint"] = fingerprint
    return body


def notification(
    alerts: list[dict],
    *,
    group_key: str = '{}/{runbook=~".+"}:{alertname="VLLMHighTTFT", lws="vllm-chat"}',
    alertname: str = "VLLMHighTTFT",
    legacy: bool = False,
    newest: bool = False,
) -> dict:
    """A v4 body. legacy=True: as Alertmanager < 0.19 sent it (no fingerprint, no
    truncatedAlerts); newest=True: v0.34 with notification_reason and routeLabels."""
    alerts = copy.deepcopy(alerts)
    status = "firing" if any(a["status"] == "firing" for a in alerts) else "resolved"
    body = {
        "receiver": "incident\\-console",
        "status": status,
        "alerts": alerts,
        "groupLabels": {"alertname": alertname, "lws": "vllm-chat"},
        "commonLabels": {"alertname": alertname, "namespace": "llm-serving"},
        "commonAnnotations": {"summary": "TTFT p99 above 2s on vllm-chat"},
        "externalURL": "http://alertmanager:9093",
        "version": "4",
        "groupKey": group_key,
        "truncatedAlerts": 0,
    }
    if legacy:
        del body["truncatedAlerts"]
        for a in body["alerts"]:
            a.pop("fingerprint", None)
    else:
        for a in body["alerts"]:
            a.setdefault("fingerprint", labels_fingerprint(a["labels"]))
    if newest:
        body["notification_reason"] = "first notification"
        body["routeLabels"] = {"team": "llm-serving"}
        body["somethingFromTheFuture"] = {"x": 1}
    return body


def resolved(a: dict, after: timedelta = timedelta(minutes=5)) -> dict:
    out = copy.deepcopy(a)
    out["status"] = "resolved"
    start = datetime.fromisoformat(out["startsAt"][:26] + "+00:00")
    out["endsAt"] = rfc3339(start + after)
    return out


def stalled_engine_alert(pod: str, starts: datetime, ends: datetime | None = None) -> dict:
    """One alert as Prometheus posts it to Alertmanager's /api/v2/alerts: startsAt is
    when the rule began firing, endsAt (if given) how long it stays valid without a
    resend, or when it resolved."""
    posted = {
        "labels": {
            "alertname": "VLLMEngineStalled", "severity": "critical", "runbook": "nccl-hang",
            "namespace": "llm-serving", "lws": "vllm-chat", "pod": pod,
        },
        "annotations": {"summary": "Running requests but no tokens generated"},
        "startsAt": starts.isoformat(),
        "generatorURL": "http://prometheus:9090/graph?g0.expr=vllm%3Anum_requests_running",
    }  # fmt: skip
    if ends is not None:
        posted["endsAt"] = ends.isoformat()
    return posted
