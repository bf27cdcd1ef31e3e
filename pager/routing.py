"""Which team owns an incident, and which escalation policy pages for it.

An incident's labels, as ownership sees them (pager.models.teams.OWNERSHIP_LABELS):
namespace (the incident's own), lws and node_pool (group labels, else its alerts'),
model (label `model_name` or `model`, group labels first, else its alerts') and
runbook (the incident's). A group label `team=<slug>` names the team outright (the
console's own heartbeat alerts carry it; a declared incident may be declared with it).
Otherwise every Ownership whose labels all match (shell patterns: `llm-prod-*`) is a
candidate and the one that sets the most labels wins (ties: the older claim); no
match: the default team. The policy is the team's, else the default policy.

A fixed number of queries whatever the number of teams, claims or alerts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from django.utils.translation import gettext

from console.texts import Msg
from incidents.models import Alert, Incident
from incidents.services.declare import GROUPING_PREFIX as DECLARED_PREFIX
from pager.models import EscalationPolicy, Ownership, Team
from pager.models.teams import OWNERSHIP_LABELS
from pager.texts import WHY, pager_msg

# Where each ownership label is found on alerts (first name present wins).
_ALERT_LABELS = {
    "lws": ("lws",),
    "model": ("model_name", "model"),
    "node_pool": ("node_pool",),
}
# The alerts read for their labels: a group is one model and pool in practice; this
# bounds the read for a group of thousands of alerts.
ALERTS_READ = 200


@dataclass(frozen=True)
class Route:
    team: Team | None
    policy: EscalationPolicy | None
    reason: str  # a key of WHY
    params: dict[str, str] = field(default_factory=dict)
    default_policy: bool = False  # the team has none: the default policy pages

    @property
    def why(self) -> str:
        """Why, in the active language."""
        text = gettext(WHY[self.reason]) % self.params
        if self.default_policy:
            text = gettext(WHY["route.default_policy"]) % {"why": text}
        return text

    def why_parts(self) -> Msg:
        """Why, as a phrase of the pager's texts (pager/texts.py)."""
        why = pager_msg(self.reason, **self.params)
        return pager_msg("route.default_policy", why=why) if self.default_policy else why


def incident_labels(incident: Incident) -> dict[str, set[str]]:
    """Every value each ownership label has on the incident (a group may span several
    models or pools: a claim matching any of them matches). One query at most."""
    group = incident.group_labels if isinstance(incident.group_labels, dict) else {}
    values: dict[str, set[str]] = {label: set() for label in OWNERSHIP_LABELS}
    if incident.namespace:
        values["namespace"].add(incident.namespace)
    if incident.runbook:
        values["runbook"].add(incident.runbook)
    missing = []
    for label, names in _ALERT_LABELS.items():
        found = _first(group, names)
        if found:
            values[label].add(found)
        else:
            missing.append(label)
    if missing and incident.pk is not None:
        rows = Alert.objects.filter(incident_id=incident.pk).order_by("pk")[:ALERTS_READ]
        for labels in rows.values_list("labels", flat=True):
            if not isinstance(labels, dict):
                continue
            for label in missing:
                found = _first(labels, _ALERT_LABELS[label])
                if found:
                    values[label].add(found)
    return values


def _first(labels: dict[str, object], names: Iterable[str]) -> str:
    for name in names:
        value = labels.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _claim_matches(ownership: Ownership, values: dict[str, set[str]]) -> int:
    """How many labels the claim sets when all of them match the incident; 0 if not."""
    claimed = ownership.labels()
    for label, pattern in claimed.items():
        if not any(fnmatchcase(value, pattern) for value in values.get(label, ())):
            return 0
    return len(claimed)


def route(incident: Incident) -> Route:
    """The owning team, its policy and why, in a fixed number of queries (at most five:
    the alerts' labels, the named team, the claims, the default team, the default
    policy)."""
    group = incident.group_labels if isinstance(incident.group_labels, dict) else {}
    named = group.get("team")
    if isinstance(named, str) and named:
        team = Team.objects.select_related("escalation_policy").filter(slug=named).first()
        if team is not None:
            # A declared incident's labels are its own, not an alert's.
            declared = (incident.grouping_key or "").startswith(DECLARED_PREFIX)
            reason = "route.named_declared" if declared else "route.named"
            return _with_policy(team, reason, {"slug": named})
    values = incident_labels(incident)
    best: tuple[int, Ownership] | None = None
    claims = Ownership.objects.select_related("team__escalation_policy").order_by("pk")
    for ownership in claims:
        matched = _claim_matches(ownership, values)
        if matched and (best is None or matched > best[0]):
            best = (matched, ownership)
    if best is not None:
        ownership = best[1]
        shown = ", ".join(f"{label}={pattern}" for label, pattern in ownership.labels().items())
        return _with_policy(ownership.team, "route.owns", {"labels": shown})
    default = Team.objects.select_related("escalation_policy").filter(is_default=True).first()
    if default is not None:
        return _with_policy(default, "route.default_team", {})
    policy = EscalationPolicy.objects.filter(is_default=True).first()
    return Route(team=None, policy=policy, reason="route.nobody")


def _with_policy(team: Team, reason: str, params: dict[str, str]) -> Route:
    if team.escalation_policy is not None:
        return Route(team=team, policy=team.escalation_policy, reason=reason, params=params)
    policy = EscalationPolicy.objects.filter(is_default=True).first()
    return Route(
        team=team, policy=policy, reason=reason, params=params, default_policy=policy is not None
    )
