"""Pure decisions about related incidents: no queries.

The keys: for each configured label set (INCIDENT_RELATED_LABEL_SETS, e.g. namespace+lws,
node), the values an incident has for all of its labels, from its group labels or any of
its alerts. Two incidents sharing a key are about the same target.

Which leads, the order an SRE reads an outage in:
1. a runbook the catalogue declares as leading over the other's (`leads_over:`: the
   alert names a cause, as a stalled NCCL group causes slow first tokens elsewhere);
2. else the higher severity (the symptom users feel most);
3. else the one opened first (the first symptom; the later ones tend to follow from it).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from console.texts import Msg, msg
from incidents.models import Incident
from incidents.related.precedence import runbook_leads_over

Key = tuple[tuple[str, str], ...]  # ((label, value), ...) for one label set


def label_keys(
    label_sets: Sequence[Sequence[str]], labels: Iterable[Mapping[str, Any]]
) -> set[Key]:
    """Every key the label maps give: a set counts only when all its labels have a value
    in one map (group labels, or one alert's labels)."""
    keys: set[Key] = set()
    for found in labels:
        for names in label_sets:
            values = [str(found.get(name) or "") for name in names]
            if names and all(values):
                keys.add(tuple(zip(names, values, strict=True)))
    return keys


@dataclass(frozen=True)
class Lead:
    leads: bool  # whether `a` leads over `b`
    why: Msg  # for the timeline (its English also in the payload)


def compare(a: Incident, b: Incident) -> Lead:
    """Whether `a` leads over `b`, and why."""
    if runbook_leads_over(a.runbook, b.runbook):
        return Lead(True, msg("incidents.related.why.runbook", lead=a.runbook, other=b.runbook))
    if runbook_leads_over(b.runbook, a.runbook):
        return Lead(False, msg("incidents.related.why.runbook", lead=b.runbook, other=a.runbook))
    if a.severity != b.severity:  # SEV1 < SEV2 < ...: the smaller is the more severe
        higher, lower = sorted((a.severity, b.severity))
        why = msg("incidents.related.why.severity", higher=higher, lower=lower)
        return Lead(a.severity == higher, why)
    first = (a.triggered_at, a.pk or 0) <= (b.triggered_at, b.pk or 0)
    return Lead(first, msg("incidents.related.why.first"))


def same_kind(a: Incident, b: Incident) -> bool:
    """Drills link only with drills, demo incidents only with demo incidents."""
    return a.is_drill == b.is_drill and a.is_demo == b.is_demo
