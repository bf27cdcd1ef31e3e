"""Which new incidents a running drill claims, asked by ingest before it inserts them
(incidents/drill_claims.py), so a drill's incident opens as a drill and its first
notification already knows.

The same test the drill worker links by (execution.py `_matching_incident`): a drill
whose fault is injected and that has no incident yet claims an incident opened since the
injection about its target, its namespace and LeaderWorkerSet, by the group's labels or
by an alert's. Inside ingest's transaction: one read, no writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from drills.models import DrillRun, DrillRunStatus
from incidents.drill_claims import Opening

# A drill between injection and its end; STARTING too, once its fault is injected.
CLAIMING = (DrillRunStatus.STARTING, DrillRunStatus.RUNNING)


def _about(opening: Opening, namespace: str, lws: str) -> bool:
    if opening.namespace == namespace and opening.group_labels.get("lws") == lws:
        return True
    return any(_labels_about(labels, namespace, lws) for labels in opening.alert_labels)


def _labels_about(labels: Mapping[str, str], namespace: str, lws: str) -> bool:
    return labels.get("namespace") == namespace and labels.get("lws") == lws


def running_drills_claim(openings: Sequence[Opening]) -> list[bool]:
    """For each opening, whether a running drill claims it."""
    runs: list[tuple[str, str, datetime]] = [
        (namespace, lws, injected)
        for namespace, lws, injected in DrillRun.objects.filter(
            status__in=CLAIMING, injected_at__isnull=False, incident__isnull=True
        ).values_list("namespace", "lws", "injected_at")
        if injected is not None
    ]
    if not runs:
        return [False] * len(openings)
    return [
        any(
            opening.triggered_at >= injected and _about(opening, namespace, lws)
            for namespace, lws, injected in runs
        )
        for opening in openings
    ]
