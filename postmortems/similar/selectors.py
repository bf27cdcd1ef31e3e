"""Selector: earlier incidents like this one, for the incident page's panel and the API.

"Like this one": the same runbook (the one recorded on the incident, from its alerts'
`runbook` label or a responder's choice), or alerts about the same LeaderWorkerSet
(namespace and lws labels) or the same node. Earlier: opened before it (a lower id).
Each comes with how long it lasted, what fixed it (its succeeded action runs), its
postmortem and the action items still open, newest first.

A constant number of queries, whatever the number of incidents, alerts or matches: the
incident's own label values (one query), the candidate ids (one statement: per runbook,
LWS or node, the newest few ids through an index that returns them in id order, so each
stops early), then the incidents with their postmortem, runs and open items (three).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import Prefetch, QuerySet, Value

from actions.models import ActionRun, ActionRunStatus
from incidents.models import Alert, Incident
from postmortems.models import OPEN_ITEM_STATUSES, ActionItem, Postmortem
from runbooks.triage import incident_runbook

# A query of (incident id, reason) rows, over incidents or over alerts.
Arm = QuerySet[Any, tuple[int, str]]
LIMIT = 10  # similar incidents shown
MAX_LWS = 3  # LWS and nodes of this incident looked for (its most recent alerts first)
MAX_NODES = 3
_LABEL_ROWS = 50  # alerts of this incident read for those


@dataclass(frozen=True)
class Similar:
    incident: Incident
    reasons: tuple[str, ...]  # "same runbook ttft-spike", "same LWS ns/name", "same node n"
    fixes: list[ActionRun]  # its succeeded action runs, in the order they finished
    postmortem: Postmortem | None
    open_items: list[ActionItem]  # open or in progress, soonest due first

    @property
    def duration(self) -> timedelta | None:
        """Opened to resolved; None while it is not resolved."""
        end = self.incident.resolved_at
        return end - self.incident.triggered_at if end else None


@dataclass(frozen=True)
class SimilarIncidents:
    runbook: str  # "" when no runbook matches this incident
    lws: tuple[tuple[str, str], ...]  # (namespace, lws) looked for
    nodes: tuple[str, ...]
    items: list[Similar] = field(default_factory=list)

    @property
    def fix_not_done(self) -> list[Similar]:
        """The similar incidents whose action items are still open: seen before, and the
        fix is not done."""
        return [s for s in self.items if s.open_items]


def _labels_of(incident: Incident) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    rows = list(
        Alert.objects.filter(incident=incident)
        .order_by("-starts_at", "-id")
        .only("labels", "status", "starts_at")[:_LABEL_ROWS]
    )
    runbook = incident_runbook(incident, rows)
    lws: dict[tuple[str, str], None] = {}
    nodes: dict[str, None] = {}
    for alert in rows:
        labels = alert.labels or {}
        namespace = str(labels.get("namespace") or incident.namespace or "")
        if labels.get("lws") and namespace:
            lws.setdefault((namespace, str(labels["lws"])), None)
        if labels.get("node"):
            nodes.setdefault(str(labels["node"]), None)
    return (
        runbook.slug if runbook else "",
        tuple(list(lws)[:MAX_LWS]),
        tuple(list(nodes)[:MAX_NODES]),
    )


def _arms(
    incident: Incident,
    runbook: str,
    lws: tuple[tuple[str, str], ...],
    nodes: tuple[str, ...],
    limit: int,
) -> list[Arm]:
    """Per match, a query of (incident id, reason) for at most `limit` earlier incidents,
    newest first."""
    arms: list[Arm] = []
    if runbook:
        # The (runbook, -id) index (incidents) answers it in id order.
        reason = Value(f"same runbook {runbook}")
        same_runbook = Incident.objects.filter(runbook=runbook, pk__lt=incident.pk)
        arms.append(same_runbook.order_by("-pk").values_list("pk", reason)[:limit])
    alerts = Alert.objects.filter(incident_id__lt=incident.pk)
    for namespace, name in lws:
        # labels->'key' = '"value"': the expressions (and condition) of the partial
        # alert_label_lws and alert_label_node indexes (incidents).
        same_lws = alerts.filter(
            labels__has_key="lws", labels__namespace=namespace, labels__lws=name
        )
        arms.append(_newest(same_lws, f"same LWS {namespace}/{name}", limit))
    for node in nodes:
        same_node = alerts.filter(labels__has_key="node", labels__node=node)
        arms.append(_newest(same_node, f"same node {node}", limit))
    return arms


def _newest(alerts: QuerySet[Alert], reason: str, limit: int) -> Arm:
    ids = alerts.order_by("-incident_id").values_list("incident_id", Value(reason))
    return ids.distinct()[:limit]


def _candidates(arms: list[Arm]) -> dict[int, list[str]]:
    """Every arm in one statement: UNION ALL of the arms, each as a subquery (SQLite takes
    a member's ORDER BY and LIMIT only there)."""
    if not arms:
        return {}
    parts: list[str] = []
    params: list[Any] = []
    for i, query in enumerate(arms):
        sql, arm_params = query.query.sql_with_params()
        parts.append(f"SELECT * FROM ({sql}) AS arm{i}")  # noqa: S608 (Django's SQL)
        params.extend(arm_params)
    found: dict[int, list[str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        for incident_id, reason in cursor.fetchall():
            found.setdefault(int(incident_id), []).append(str(reason))
    return found


def incident_similar(*, incident: Incident, limit: int = LIMIT) -> SimilarIncidents:
    """Earlier incidents like `incident`, newest first (at most `limit`). Five queries."""
    runbook, lws, nodes = _labels_of(incident)
    found = _candidates(_arms(incident, runbook, lws, nodes, limit))
    similar = SimilarIncidents(runbook=runbook, lws=lws, nodes=nodes)
    if not found:
        return similar
    incidents = (
        Incident.objects.filter(pk__in=list(found))
        .select_related("postmortem")
        .prefetch_related(
            Prefetch(
                "action_runs",
                queryset=ActionRun.objects.filter(status=ActionRunStatus.SUCCEEDED).order_by(
                    "finished_at", "pk"
                ),
                to_attr="fixes",
            ),
            Prefetch(
                "action_items",
                queryset=ActionItem.objects.filter(status__in=OPEN_ITEM_STATUSES)
                .select_related("owner")
                .order_by("due_date", "pk"),
                to_attr="open_items",
            ),
        )
        .order_by("-triggered_at", "-pk")[:limit]
    )
    for inc in incidents:
        similar.items.append(
            Similar(
                incident=inc,
                reasons=tuple(found[inc.pk]),
                fixes=inc.fixes,
                postmortem=_postmortem(inc),
                open_items=inc.open_items,
            )
        )
    return similar


def _postmortem(incident: Incident) -> Postmortem | None:
    try:
        return incident.postmortem
    except Postmortem.DoesNotExist:
        return None
