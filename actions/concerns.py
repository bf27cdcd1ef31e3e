"""Selector: the open incidents whose alerts are about what an action run changes (the
approval policy asks it at every preview and request). One query, whatever the number of
incidents or alerts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.db.models import Case, IntegerField, Min, Q, Value, When

from actions.kinds.base import Subject
from incidents.models import OPEN_STATUSES, Alert


@dataclass(frozen=True)
class Concern:
    """An open incident whose alerts are about something a run changes."""

    incident_id: int
    severity: str
    subject: Subject


def _labels_match(labels: dict[str, str]) -> Q:
    # Key lookups (labels->'lws' = '"x"') work on PostgreSQL and SQLite alike, unlike
    # JSON containment, which SQLite lacks; the join below is driven by the few open
    # incidents at an approval severity, so no index on the labels is needed.
    return Q(**{f"labels__{key}": value for key, value in labels.items()})


def open_incidents_about(
    *,
    subjects: list[Subject],
    severities: list[str] | tuple[str, ...],
    exclude_incident_id: int | None = None,
    limit: int = 20,
) -> list[Concern]:
    """Open incidents at one of `severities` with an alert about one of `subjects`, worst
    severity first, each with the most specific subject its alerts match. One query."""
    if not subjects or not severities:
        return []
    matches = [_labels_match(subject.labels) for subject in subjects]
    first_match = Min(
        Case(
            *(When(match, then=Value(i)) for i, match in enumerate(matches)),
            default=Value(len(matches)),
            output_field=IntegerField(),
        )
    )
    alerts = Alert.objects.filter(
        incident__status__in=OPEN_STATUSES, incident__severity__in=severities
    )
    if exclude_incident_id is not None:
        alerts = alerts.exclude(incident_id=exclude_incident_id)
    rows = (
        alerts.filter(reduce(or_, matches))
        .values("incident_id", "incident__severity")
        .annotate(subject=first_match)
        .order_by("incident__severity", "incident_id")[:limit]
    )
    return [
        Concern(row["incident_id"], row["incident__severity"], subjects[row["subject"]])
        for row in rows
    ]
