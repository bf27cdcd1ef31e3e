"""What a silence made from an incident may cover: the incident's alerts and nothing else.

A group silence is scoped by alertname and namespace, always, plus the labels every alert
of the incident shares (Alertmanager's commonLabels, which include the group's own
groupLabels). Alertmanager's matchers are independent of each other, so one silence with
`alertname=~"A|B"` and `namespace=~"x|y"` also matches (A, y) and (B, x); an incident
whose alerts are (A, x) and (B, y) would silence two pairs it does not have. So the
group becomes one silence per "rectangle": alertnames that fire in exactly the same set
of namespaces share one silence, whose matchers then match exactly those pairs. Several
values are an anchored regex of escaped literals (Alertmanager anchors every regex); one
value is an equality.

Before a silence is created, every other open incident's firing alerts are matched
against it (two queries whatever their number); one it would cover is a refusal naming
those incidents. Expiring a silence that the console did not make from this incident, or
one that reaches beyond it, takes an explicit confirmation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

from console.errors import DomainError
from incidents.models import OPEN_STATUSES, Alert, AlertStatus, Incident
from incidents.silences.client import Matcher, Silence

SCOPE_LABELS = ("alertname", "namespace")
# An incident whose alerts need more silences than this is a storm; one by one is clearer.
MAX_GROUP_SILENCES = 10
OTHERS_NAMED = 5  # other incidents named in a refusal
# Regex metacharacters of Go's RE2 and Python's re; a backslash before any of them is a
# literal in both (re.escape would also escape spaces, which RE2 refuses).
_SPECIAL = frozenset("\\.+*?()|[]{}^$")
_ALERTNAME_CHARS = 200  # Alert.alertname's length: the column holds the label cut there

COVERS_OTHERS = "covers_other_incidents"
CONFIRMATION_REQUIRED = "confirmation_required"
NOT_CREATED_HERE = "not_created_here"
BROADER = "broader_than_incident"


class CoversOtherIncidents(DomainError):
    """The proposed silence would also silence another open incident's firing alerts."""

    code = COVERS_OTHERS

    def __init__(self, *, incident_id: int, others: list[tuple[int, str]], more: bool):
        named = ", ".join(f"#{pk} {title}" for pk, title in others) + (", …" if more else "")
        super().__init__(
            gettext_noop(
                "This silence would also silence firing alerts of other open incidents "
                "(%(others)s), not only incident #%(id)s's; silence one alert instead, "
                "or silence those incidents from their own pages."
            ),
            params={"others": named, "id": incident_id},
        )
        self.others = others


class ConfirmationRequired(DomainError):
    """Expiring this silence needs `confirm`: it is not plainly this incident's."""

    code = CONFIRMATION_REQUIRED

    def __init__(self, *, silence: Silence, reasons: list[str]):
        if reasons == [NOT_CREATED_HERE]:
            message = gettext_noop(
                "Silence %(id)s (%(matchers)s) was not created from this incident in the "
                "console (created by %(author)s); confirm to expire it."
            )
        elif reasons == [BROADER]:
            message = gettext_noop(
                "Silence %(id)s (%(matchers)s, created by %(author)s) matches alerts "
                "outside this incident; confirm to expire it."
            )
        else:
            message = gettext_noop(
                "Silence %(id)s (%(matchers)s) was not created from this incident in the "
                "console (created by %(author)s) and matches alerts outside it; confirm "
                "to expire it."
            )
        super().__init__(
            message,
            params={
                "id": silence.id,
                "matchers": silence.matchers_text()[:600],
                "author": silence.created_by or "nobody named",
            },
        )
        self.silence, self.reasons = silence, reasons


@dataclass
class IncidentScope:
    """The incident's alerts as silences see them: their (alertname, namespace) pairs and
    the labels they all share. A missing label is "" (Alertmanager's rule)."""

    pairs: set[tuple[str, str]] = field(default_factory=set)
    common: dict[str, str] = field(default_factory=dict)

    @property
    def alertnames(self) -> set[str]:
        return {name for name, _ in self.pairs}

    @property
    def namespaces(self) -> set[str]:
        return {ns for _, ns in self.pairs}


def incident_scope(*, incident_id: int) -> IncidentScope:
    """The scope of every alert of the incident, firing or resolved (one query)."""
    scope, first = IncidentScope(), True
    rows = Alert.objects.filter(incident_id=incident_id).values_list("labels", flat=True)
    for raw in rows.iterator(chunk_size=500):
        labels = {str(k): str(v) for k, v in (raw or {}).items()}
        scope.pairs.add((labels.get("alertname", ""), labels.get("namespace", "")))
        if first:
            scope.common, first = labels, False
        elif scope.common:
            scope.common = {k: v for k, v in scope.common.items() if labels.get(k) == v}
    return scope


def escape(value: str) -> str:
    return "".join("\\" + c if c in _SPECIAL else c for c in value)


def one_of(name: str, values: Iterable[str]) -> Matcher:
    """`name="v"` for one value, `name=~"a|b\\.c"` (escaped literals) for several."""
    ordered = sorted(set(values))
    if len(ordered) == 1:
        return Matcher.equal(name, ordered[0])
    return Matcher(name=name, value="|".join(escape(v) for v in ordered), is_regex=True)


def group_silences(scope: IncidentScope) -> list[tuple[Matcher, ...]]:
    """The silences that cover exactly the incident's (alertname, namespace) pairs, each
    narrowed by the labels all its alerts share; see the module's docstring."""
    namespaces_of: dict[str, set[str]] = {}
    for name, ns in scope.pairs:
        namespaces_of.setdefault(name, set()).add(ns)
    names_in: dict[frozenset[str], list[str]] = {}
    for name, nss in namespaces_of.items():
        names_in.setdefault(frozenset(nss), []).append(name)
    shared = [
        Matcher.equal(k, v) for k, v in sorted(scope.common.items()) if k not in SCOPE_LABELS and v
    ]
    found = [
        (one_of("alertname", names), one_of("namespace", nss), *shared)
        for nss, names in names_in.items()
    ]
    return sorted(found, key=lambda ms: (ms[0].value, ms[1].value))


def literal_values(matchers: Sequence[Matcher], name: str) -> set[str] | None:
    """The only values of label `name` the matchers admit, when a positive matcher on it is
    a literal (an equality, or a regex of escaped literals); None when unbounded."""
    admitted: set[str] | None = None
    for m in matchers:
        if m.name != name or not m.is_equal:
            continue
        values = _alternatives(m.value) if m.is_regex else {m.value}
        if values is not None:
            admitted = values if admitted is None else admitted & values
    return admitted


def _alternatives(pattern: str) -> set[str] | None:
    """`a|b\\.c` -> {"a", "b.c"}; None for a pattern that is more than literals."""
    found, current, i = set(), [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in _SPECIAL:
                return None  # \d, \w...: a class, not a literal
            current.append(pattern[i + 1])
            i += 2
            continue
        if c == "|":
            found.add("".join(current))
            current = []
        elif c in _SPECIAL:
            return None
        else:
            current.append(c)
        i += 1
    found.add("".join(current))
    return found


def within(matchers: Sequence[Matcher], scope: IncidentScope) -> bool:
    """Whether the matchers admit only the incident's alertnames and namespaces."""
    names = literal_values(matchers, "alertname")
    namespaces = literal_values(matchers, "namespace")
    if names is None or namespaces is None:
        return False
    return names <= scope.alertnames and namespaces <= scope.namespaces


def other_incidents_covered(
    matcher_sets: Sequence[Sequence[Matcher]], *, incident_id: int, limit: int = OTHERS_NAMED
) -> tuple[list[tuple[int, str]], bool]:
    """Other open incidents with a firing alert one of the matcher sets matches: up to
    `limit` of them as (id, title), and whether there are more. Two queries at most."""
    rows = Alert.objects.filter(
        status=AlertStatus.FIRING, incident__status__in=OPEN_STATUSES
    ).exclude(incident_id=incident_id)
    # Every console silence names its alertnames; narrowing on them keeps the scan to
    # the alerts that could match (a silence without one is checked against all).
    names: set[str] = set()
    for matchers in matcher_sets:
        literal = literal_values(matchers, "alertname")
        if literal is None:
            break
        names |= {n[:_ALERTNAME_CHARS] for n in literal}
    else:
        rows = rows.filter(alertname__in=names)
    hits: list[int] = []
    for pk, raw in rows.values_list("incident_id", "labels").iterator(chunk_size=500):
        if pk in hits:
            continue
        labels = {str(k): str(v) for k, v in (raw or {}).items()}
        if any(ms and all(m.matches(labels) for m in ms) for ms in matcher_sets):
            hits.append(pk)
            if len(hits) > limit:
                break
    if not hits:
        return [], False
    titles = dict(Incident.objects.filter(pk__in=hits[:limit]).values_list("pk", "title"))
    return [(pk, titles.get(pk, "")) for pk in sorted(hits[:limit])], len(hits) > limit


def covers_another_incident(matchers: Sequence[Matcher], *, incident_id: int) -> bool:
    """Whether the matchers match a firing alert of another open incident (one query)."""
    return other_incidents_covered([matchers], incident_id=incident_id, limit=0)[1]
