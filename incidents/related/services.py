"""Writes of related incidents: link (the console, once an incident has opened), merge
and unlink (a responder, with one click). Each locks the incidents it changes, in id
order, and writes a timeline entry on both sides through incidents.services."""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError, NotFound
from console.permissions import require
from console.surface import current_surface
from console.texts import Msg, msg
from incidents import permissions as perms
from incidents.models import (
    OPEN_STATUSES,
    Alert,
    AlertStatus,
    Incident,
    IncidentStatus,
    TimelineEventType,
)
from incidents.related import rules
from incidents.related.timeline import LINKED, MERGED, UNLINKED
from incidents.services import incident_event_record
from incidents.transitions import apply_transition, retrigger_status, status_word

CANDIDATES_MAX = 200  # open incidents looked at per opening (a storm opens many at once)


def _label_names() -> list[str]:
    return sorted({name for names in settings.INCIDENT_RELATED_LABEL_SETS for name in names})


def _keys(incident: Incident) -> set[rules.Key]:
    """The incident's keys from its group labels and its alerts: the database sends only
    the distinct values of the labels the sets name, not every alert's labels."""
    names = _label_names()
    aliases = {f"l{i}": KeyTextTransform(name, "labels") for i, name in enumerate(names)}
    rows = (
        Alert.objects.filter(incident_id=incident.pk)
        .annotate(**aliases)
        .order_by()  # Alert's default ordering would make every row distinct
        .values_list(*aliases)
        .distinct()
    )
    labels = [incident.group_labels or {}]
    labels += [dict(zip(names, row, strict=True)) for row in rows]
    return rules.label_keys(settings.INCIDENT_RELATED_LABEL_SETS, labels)


def _sharing(incident_ids: list[int], keys: set[rules.Key]) -> set[int]:
    """Which of `incident_ids` have an alert with one of `keys`: one query, answered from
    the label indexes, rather than every candidate's alerts read and decoded."""
    names = _label_names()
    aliases = {name: f"l{i}" for i, name in enumerate(names)}
    match = Q()
    for key in keys:
        match |= Q(**{aliases[name]: value for name, value in key})
    found = (
        Alert.objects.filter(incident_id__in=incident_ids)
        .alias(**{alias: KeyTextTransform(name, "labels") for name, alias in aliases.items()})
        .filter(match)
        .order_by()
        .values_list("incident_id", flat=True)
        .distinct()
    )
    return set(found)


def _locked(ids: set[int]) -> dict[int, Incident]:
    """The incidents, locked in id order (two openings never wait on each other in turn)."""
    rows = Incident.objects.select_for_update().filter(pk__in=sorted(ids)).order_by("pk")
    return {inc.pk: inc for inc in rows}


def _record(incident_id: int, kind: str, message: Msg, payload: dict, actor: User | None) -> None:
    incident_event_record(
        incident_id=incident_id,
        kind=kind,
        message=message,
        payload=payload,
        actor=actor,
        source=current_surface() if actor is not None else "system",
    )


def _matches(new: Incident) -> list[Incident]:
    """Open incidents opened within the window before `new` that share a key with it."""
    window = settings.INCIDENT_RELATED_WINDOW_SECONDS
    keys = _keys(new) if settings.INCIDENT_RELATED_LABEL_SETS and window > 0 else set()
    if not keys:
        return []
    # A reopened incident is news again from when it reopened.
    when = max(new.triggered_at, new.reopened_at or new.triggered_at)
    since = when - timedelta(seconds=window)
    nearby = (
        Incident.objects.filter(
            Q(triggered_at__gte=since, triggered_at__lte=when)
            | Q(reopened_at__gte=since, reopened_at__lte=when),
            status__in=OPEN_STATUSES,
            merged_at__isnull=True,
        )
        .exclude(pk=new.pk)
        # Only what the matching reads: 200 whole rows were 2,000 timestamps to decode.
        .only("pk", "is_drill", "is_demo", "group_labels", "related_to_id")
        .order_by("triggered_at", "pk")[:CANDIDATES_MAX]
    )
    candidates = [inc for inc in nearby if rules.same_kind(inc, new)]
    label_sets = settings.INCIDENT_RELATED_LABEL_SETS
    matched = {
        inc.pk
        for inc in candidates
        if keys & rules.label_keys(label_sets, [inc.group_labels or {}])
    }
    rest = [inc.pk for inc in candidates if inc.pk not in matched]
    if rest:
        matched |= _sharing(rest, keys)
    return [inc for inc in candidates if inc.pk in matched]


@transaction.atomic
def incident_related_link(*, incident_id: int) -> Incident | None:
    """Link a just-opened incident to the open incidents about the same target, if any:
    it joins their lead, or leads them when it outranks that lead (rules.compare).
    Returns the lead, or None when nothing was linked. The console acts (no actor)."""
    new = Incident.objects.filter(pk=incident_id).first()
    if new is None or not new.is_open or new.related_to_id is not None:
        return None
    matches = _matches(new)
    if not matches:
        return None
    # The leads the matches belong to (an open lead, or the match itself).
    lead_ids = {m.related_to_id or m.pk for m in matches}
    rows = _locked(lead_ids | {new.pk})
    new = rows[new.pk]
    if new.related_to_id is not None or not new.is_open:
        return None  # linked meanwhile (a concurrent delivery), or resolved
    leads = [
        rows[pk]
        for pk in sorted(lead_ids)
        if pk in rows and rows[pk].is_open and rows[pk].related_to_id is None and rows[pk] != new
    ]
    if not leads:
        return None
    lead = leads[0]
    for other in leads[1:]:  # the best lead among them joins; the others' groups stay
        if rules.compare(other, lead).leads:
            lead = other
    now = timezone.now()
    verdict = rules.compare(new, lead)
    if not verdict.leads:
        _attach(new, lead, now, verdict.why)
        return lead
    # The new incident outranks the lead: it leads the lead and everything it led.
    members = list(
        Incident.objects.select_for_update()
        .filter(related_to=lead, merged_at__isnull=True)
        .order_by("pk")
    )
    for member in [lead, *members]:
        _attach(member, new, now, verdict.why)
    return new


def _attach(incident: Incident, lead: Incident, now, why: Msg) -> None:
    old = incident.related_to_id
    incident.related_to = lead
    incident.linked_at = now
    incident.linked_by = None
    incident.save(update_fields=["related_to", "linked_at", "linked_by", "updated_at"])
    payload = {"lead": lead.pk, "related": incident.pk, "why": why.english, "previous_lead": old}
    no_runbook = msg("incidents.related.no_runbook")
    _record(
        incident.pk,
        LINKED,
        msg("incidents.related.part_of", lead=lead.pk, runbook=lead.runbook or no_runbook, why=why),
        payload,
        None,
    )
    _record(
        lead.pk,
        LINKED,
        msg(
            "incidents.related.leads",
            id=incident.pk,
            runbook=incident.runbook or no_runbook,
            why=why,
        ),
        payload,
        None,
    )


def _linked_pair(incident_id: int) -> tuple[Incident, Incident]:
    """The related incident and its lead, locked; refusals for one that is not linked."""
    found = Incident.objects.filter(pk=incident_id).values_list("related_to_id", flat=True)
    if not found:
        raise NotFound(gettext_noop("Incident #%(id)s does not exist."), params={"id": incident_id})
    lead_id = found[0]
    if lead_id is None:
        raise DomainError(
            gettext_noop("Incident #%(id)s is not part of another incident."),
            code="not_linked",
            params={"id": incident_id},
        )
    rows = _locked({incident_id, lead_id})
    incident = rows[incident_id]
    if incident.related_to_id != lead_id:  # changed between the read and the lock
        raise DomainError(
            gettext_noop("Incident #%(id)s was linked elsewhere meanwhile; look again."),
            code="conflict",
            params={"id": incident_id},
        )
    if incident.merged_at is not None:
        raise DomainError(
            gettext_noop("Incident #%(id)s is already merged into #%(lead)s."),
            code="merged",
            params={"id": incident_id, "lead": lead_id},
        )
    return incident, rows[lead_id]


@transaction.atomic
def incident_related_merge(*, incident_id: int, actor: User) -> Incident:
    """Merge a related incident into its lead: its alerts (and so Alertmanager's later
    notifications of them) go to the lead, it is resolved as "merged into #N". Returns
    the lead."""
    require(actor, perms.ACKNOWLEDGE, gettext_lazy("merge related incidents"))
    incident, lead = _linked_pair(incident_id)
    if not incident.is_open or not lead.is_open:
        raise DomainError(
            gettext_noop(
                "Only an open incident merges into an open lead: #%(id)s is %(status)s, "
                "#%(lead)s is %(lead_status)s. Unlink them instead."
            ),
            code="invalid_transition",
            params={
                "id": incident.pk,
                "status": status_word(incident.status),
                "lead": lead.pk,
                "lead_status": status_word(lead.status),
            },
        )
    now = timezone.now()
    moved = Alert.objects.filter(incident_id=incident.pk)
    firing = moved.filter(status=AlertStatus.FIRING).exists()
    count = moved.update(incident_id=lead.pk)
    text = msg(
        "incidents.related.merged",
        id=incident.pk,
        lead=lead.pk,
        actor=actor.get_username(),
        count=count,
    )
    payload = {"lead": lead.pk, "related": incident.pk, "alerts": count}
    _record(lead.pk, MERGED, text, payload, actor)
    _record(incident.pk, MERGED, text, payload, actor)
    if incident.severity < lead.severity:  # SEV1 < SEV2: the lead takes the worse one
        _record(lead.pk, TimelineEventType.SEVERITY_CHANGED,
                msg("incidents.related.severity", to=incident.severity, id=incident.pk,
                    **{"from": lead.severity}),
                {"from": lead.severity, "to": incident.severity}, actor)  # fmt: skip
        lead.severity = incident.severity
    if firing and lead.status == IncidentStatus.MITIGATED:
        _, event = apply_transition(lead, retrigger_status(lead), at=now, source="console")
        event.save()
    lead.alert_digest = ""  # its alerts changed outside a notification (see the model)
    lead.save()
    _, event = apply_transition(
        incident,
        IncidentStatus.RESOLVED,
        at=now,
        actor=actor,
        reason=msg("incidents.related.merged_into", lead=lead.pk),
    )
    incident.merged_at = now
    incident.alert_digest = ""
    incident.save()
    event.save()
    return lead


@transaction.atomic
def incident_related_unlink(*, incident_id: int, actor: User) -> Incident:
    """Detach a related incident from its lead; each goes on alone. Returns it."""
    require(actor, perms.ACKNOWLEDGE, gettext_lazy("unlink related incidents"))
    incident, lead = _linked_pair(incident_id)
    incident.related_to = None
    incident.linked_at = None
    incident.linked_by = None
    incident.save(update_fields=["related_to", "linked_at", "linked_by", "updated_at"])
    text = msg(
        "incidents.related.unlinked", id=incident.pk, lead=lead.pk, actor=actor.get_username()
    )
    payload = {"lead": lead.pk, "related": incident.pk}
    _record(incident.pk, UNLINKED, text, payload, actor)
    _record(lead.pk, UNLINKED, text, payload, actor)
    return incident


@transaction.atomic
def incident_related_split_kinds(*, incident_id: int) -> int:
    """Unlink what a drill (or demo) mark on `incident_id` made wrong: a drill is never
    part of a real incident, nor leads one. Returns how many links were undone."""
    rows = Incident.objects.filter(pk=incident_id).values_list("related_to_id", flat=True)
    if not rows:
        return 0
    members = set(Incident.objects.filter(related_to_id=incident_id).values_list("pk", flat=True))
    locked = _locked({incident_id, *members, *([rows[0]] if rows[0] else [])})
    incident = locked[incident_id]
    undone = 0
    pairs = [(incident, locked.get(incident.related_to_id or 0))]
    pairs += [(locked[pk], incident) for pk in sorted(members)]
    for related, lead in pairs:
        if lead is None or related.related_to_id != lead.pk or related.merged_at is not None:
            continue
        if rules.same_kind(related, lead):
            continue
        related.related_to = None
        related.linked_at = None
        related.linked_by = None
        related.save(update_fields=["related_to", "linked_at", "linked_by", "updated_at"])
        text = msg("incidents.related.unlinked_kind", id=related.pk, lead=lead.pk)
        payload = {"lead": lead.pk, "related": related.pk}
        _record(related.pk, UNLINKED, text, payload, None)
        _record(lead.pk, UNLINKED, text, payload, None)
        undone += 1
    return undone
