"""Reads of related incidents for the incident page's panel and the API: two queries
whatever the number of related incidents."""

from dataclasses import dataclass, field

from incidents.models import Incident


@dataclass(frozen=True)
class Related:
    """What the panel shows: the lead this incident is part of (None when it leads or
    stands alone) and the incidents the lead leads (this one excluded)."""

    incident: Incident
    lead: Incident | None = None
    members: list[Incident] = field(default_factory=list)

    @property
    def is_lead(self) -> bool:
        return self.lead is None and bool(self.members)

    @property
    def empty(self) -> bool:
        return self.lead is None and not self.members


_FIELDS = ("id", "title", "status", "severity", "runbook", "related_to_id", "linked_at",
           "merged_at", "triggered_at", "is_drill")  # fmt: skip


def incident_related(*, incident: Incident) -> Related:
    """The lead and the lead's other related incidents, merged ones included (they say
    "merged"), oldest first."""
    lead = None
    if incident.related_to_id is not None:
        lead = Incident.objects.only(*_FIELDS).filter(pk=incident.related_to_id).first()
    head = lead.pk if lead is not None else incident.pk
    members = list(
        Incident.objects.only(*_FIELDS)
        .filter(related_to_id=head)
        .exclude(pk=incident.pk)
        .order_by("triggered_at", "pk")
    )
    return Related(incident=incident, lead=lead, members=members)


def incident_lead(*, incident: Incident) -> Incident | None:
    """The incident that leads this one, or None (one query only when it is linked)."""
    if incident.related_to_id is None:
        return None
    return Incident.objects.filter(pk=incident.related_to_id).first()
