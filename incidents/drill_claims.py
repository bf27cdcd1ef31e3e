"""Is a new incident a drill? Asked while ingest opens it, so it opens as one.

A drill's incident used to open as a real one and become a drill when the drill worker
linked it (up to a beat later): by then its "opened" notification had gone to rules that
exclude drills. Now ingest asks, before inserting the incidents it opens, whether a
running drill claims each one (drills registers the check from its AppConfig.ready();
incidents imports no higher app). A claimed incident is inserted with `is_drill` set, in
the same transaction, so every notification of it, the first included, knows.

The check runs inside ingest's transaction: it may read (one query for all the new
incidents of a body), never write or call out. Reopened incidents are not asked: they
were decided when they first opened.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incidents.ingest.group import Groups
    from incidents.models import Incident


@dataclass(frozen=True)
class Opening:
    """What a drill can recognise an incident by, before it has an id."""

    namespace: str
    group_labels: Mapping[str, str]
    alert_labels: tuple[Mapping[str, str], ...]  # the body's alerts of its group
    triggered_at: datetime


# Given the openings, which of them a running drill claims (True at the same index).
DrillClaim = Callable[[Sequence[Opening]], list[bool]]
_claims: dict[str, DrillClaim] = {}


def drill_claim_register(*, key: str, check: DrillClaim) -> None:
    """Called from an app's ready(); registering the same key again replaces it."""
    _claims[key] = check


def drill_claims_registered() -> dict[str, DrillClaim]:
    return dict(_claims)


def new_incidents_claim(new: Sequence[Incident], groups: Groups) -> None:
    """Set `is_drill` on the unsaved incidents a running drill claims."""
    if not new or not _claims:
        return
    labels: dict[str, list[Mapping[str, str]]] = defaultdict(list)
    for key, alert in groups.incoming.items():
        labels[groups.keys_of[key]].append(alert.labels)
    openings = [
        Opening(
            namespace=inc.namespace,
            group_labels=inc.group_labels or {},
            alert_labels=tuple(labels.get(inc.grouping_key, ())),
            triggered_at=inc.triggered_at,
        )
        for inc in new
    ]
    for check in _claims.values():
        for inc, claimed in zip(new, check(openings), strict=True):
            if claimed:
                inc.is_drill = True
