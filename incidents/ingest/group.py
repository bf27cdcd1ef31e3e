"""Stage 3, group: which alerts the body says something about, and which group each
belongs to. No database access.

One entry per alert episode, keyed by (fingerprint, startsAt), "resolved" winning over
"firing" for the same key, so duplicated or reordered deliveries converge
(tests/unit/incidents/test_ingest_properties.py). A group is Alertmanager's groupKey, or
the labels in INCIDENT_GROUP_BY. Each group's digest and worst firing severity are what
the repeat fast path compares with its incident (write_postgres.repeat_apply).
"""

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from incidents.ingest.parse import ParsedAlert, ParsedPayload
from incidents.rules import SEVERITY_RANK, is_worse

AlertKey = tuple[str, datetime]  # (fingerprint, startsAt): one alert occurrence


@dataclass
class Groups:
    """The body's alerts, merged and grouped: computed once per body, not per attempt."""

    incoming: dict[AlertKey, ParsedAlert]  # one per key; resolved wins over firing
    # Keys delivered as firing at least once in this body, even if a copy also says
    # resolved: the same facts split over two deliveries must end the same way.
    fired: set[AlertKey]
    keys_of: dict[AlertKey, str]  # alert -> its group
    digests: dict[str, str]  # group -> alerts_digest of its alerts
    specs: list[dict[str, object]]  # per group, what the repeat fast path checks
    # Severity label -> level (INCIDENT_SEVERITY_MAP), once per label: a 50-alert body
    # has one or two.
    levels: dict[str, str]


def groups_of(payload: ParsedPayload) -> Groups:
    incoming = merge_duplicates(payload.alerts)
    fired = {a.key for a in payload.alerts if a.status == "firing"}
    keys_of = {key: grouping_key_for(alert, payload) for key, alert in incoming.items()}
    members: dict[str, list[ParsedAlert]] = defaultdict(list)
    for key, alert in incoming.items():
        members[keys_of[key]].append(alert)
    levels: dict[str, str] = {}
    for alert in incoming.values():
        label = alert.labels.get("severity", "")
        if label not in levels:
            levels[label] = severity_for(label)
    digests, specs = {}, []
    for group, alerts in members.items():
        digests[group] = alerts_digest(alerts, fired)
        worst = ""  # the most severe level a firing alert of the group escalates to
        for alert in alerts:
            if alert.key not in fired:
                continue
            level = levels[alert.labels.get("severity", "")]
            if not worst or is_worse(level, worst):
                worst = level
        specs.append(
            {"grouping_key": group, "digest": digests[group], "alerts": len(alerts),
             "severity": worst or "~"}  # "~" sorts after every level: nothing escalates
        )  # fmt: skip
    return Groups(incoming, fired, keys_of, digests, specs, levels)


def merge_duplicates(alerts: list[ParsedAlert]) -> dict[AlertKey, ParsedAlert]:
    """One entry per (fingerprint, startsAt); resolved wins over firing."""
    merged: dict[AlertKey, ParsedAlert] = {}
    for alert in alerts:
        prev = merged.get(alert.key)
        if prev is None or (prev.status == "firing" and alert.status == "resolved"):
            merged[alert.key] = alert
    return merged


def grouping_key_for(alert: ParsedAlert, payload: ParsedPayload) -> str:
    """Alertmanager's groupKey, or the configured label set (INCIDENT_GROUP_BY)."""
    group_by = settings.INCIDENT_GROUP_BY
    if not group_by:
        return payload.group_key[:1000]
    return ("labels:" + ",".join(f"{k}={alert.labels.get(k, '')}" for k in group_by))[:1000]


def severity_for(alert_severity: str) -> str:
    """Alert `severity` label -> SEV1..SEV4 (INCIDENT_SEVERITY_MAP)."""
    mapping: dict[str, str] = {k.lower(): v for k, v in settings.INCIDENT_SEVERITY_MAP.items()}
    found = mapping.get((alert_severity or "").strip().lower())
    default: str = settings.INCIDENT_DEFAULT_SEVERITY
    return found if found in SEVERITY_RANK else default


def alerts_digest(alerts: Iterable[ParsedAlert], fired: set[AlertKey]) -> str:
    """What a notification says about its (merged) alerts, as 32 hex digits: two
    notifications with the same digest have the same effect on the alerts they carry,
    receive bookkeeping aside. The alert keys are unique, so sorting never compares
    the label dicts."""
    items = sorted(
        (
            a.fingerprint,
            a.starts_at.isoformat(),
            a.status,
            a.key in fired,
            a.ends_at.isoformat() if a.ends_at else "",
            a.generator_url,
            a.labels,
            a.annotations,
        )
        for a in alerts
    )
    text = json.dumps(items, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
