"""Pure rules for turning alerts into incidents: grouping key, severity, title, slug."""

import re

from django.conf import settings
from django.utils.translation import gettext_noop

from incidents.alertmanager import ParsedAlert, ParsedPayload
from incidents.models import Severity

_SEVERITY_RANK = {s: i for i, s in enumerate(Severity.values)}  # SEV1 = 0 = worst
# The one rule for a runbook's name, wherever one arrives: an alert's `runbook` label, a
# responder's choice on the incident, a catalogue file's `slug`.
RUNBOOK_SLUG_RE = re.compile(r"[a-z0-9-]{1,100}")
RUNBOOK_SLUG_RULE = gettext_noop("lowercase letters, digits and dashes, at most 100")


def is_runbook_slug(value: str) -> bool:
    return bool(RUNBOOK_SLUG_RE.fullmatch(value))


def grouping_key_for(alert: ParsedAlert, payload: ParsedPayload) -> str:
    """Alertmanager's groupKey, or the configured label set (INCIDENT_GROUP_BY)."""
    group_by = settings.INCIDENT_GROUP_BY
    if not group_by:
        return payload.group_key[:1000]
    return ("labels:" + ",".join(f"{k}={alert.labels.get(k, '')}" for k in group_by))[:1000]


def group_labels_for(alert: ParsedAlert, payload: ParsedPayload) -> dict[str, str]:
    if settings.INCIDENT_GROUP_BY:
        return {k: alert.labels.get(k, "") for k in settings.INCIDENT_GROUP_BY}
    return dict(payload.group_labels)


def severity_for(alert_severity: str) -> str:
    """Alert `severity` label -> SEV1..SEV4 (INCIDENT_SEVERITY_MAP)."""
    mapping = {k.lower(): v for k, v in settings.INCIDENT_SEVERITY_MAP.items()}
    found = mapping.get((alert_severity or "").strip().lower())
    return found if found in _SEVERITY_RANK else settings.INCIDENT_DEFAULT_SEVERITY


def is_worse(candidate: str, current: str) -> bool:
    return _SEVERITY_RANK.get(candidate, 99) < _SEVERITY_RANK.get(current, 99)


def merge_duplicates(alerts: list[ParsedAlert]) -> dict[tuple, ParsedAlert]:
    """One entry per (fingerprint, startsAt); resolved wins over firing."""
    merged: dict[tuple, ParsedAlert] = {}
    for alert in alerts:
        prev = merged.get(alert.key)
        if prev is None or (prev.status == "firing" and alert.status == "resolved"):
            merged[alert.key] = alert
    return merged


def title_for(alert: ParsedAlert, payload: ParsedPayload) -> str:
    summary = alert.annotations.get("summary") or payload.common_annotations.get("summary")
    name = alert.alertname or "Alert"
    where = "/".join(v for v in (alert.labels.get("namespace"), alert.labels.get("lws")) if v)
    if summary:
        # Summaries often name the alert already; don't say it twice.
        return (summary if name.lower() in summary.lower() else f"{name}: {summary}")[:300]
    return (f"{name} on {where}" if where else name)[:300]


def runbook_slug(alert: ParsedAlert) -> str:
    """The alert's `runbook` label, when it is a runbook name ("" otherwise)."""
    slug = alert.labels.get("runbook", "").strip().lower()
    return slug if is_runbook_slug(slug) else ""


def alert_ref(alert) -> dict:
    """How the timeline names an alert (works for ParsedAlert and Alert rows)."""
    labels = alert.labels
    return {
        "fingerprint": alert.fingerprint,
        "alertname": labels.get("alertname", ""),
        "pod": labels.get("pod", ""),
        "node": labels.get("node", ""),
        "starts_at": alert.starts_at.isoformat(),
    }
