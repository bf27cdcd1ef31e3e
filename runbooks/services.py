"""Writes a responder makes from the runbook on the incident page: change the runbook,
confirm the diagnosis, check off the stepper's steps. Each lands on the incident's
timeline through incidents' own services (runbooks imports incidents, never the reverse).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from console.texts import msg
from incidents.models import Incident, TimelineEvent
from incidents.selectors import incident_for_update, incident_get
from incidents.services import incident_event_add, incident_runbook_set
from runbooks.catalog import load_catalog
from runbooks.permissions import RESPOND
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED, RUNBOOK_STEP
from runbooks.timeline_text import first_sentence
from runbooks.triage import incident_alerts_firing_first, incident_runbook, incident_triage

# Stepper steps as the service and URLs name them -> the words on the timeline.
RUNBOOK_STEPS = {
    "symptom": "Symptom",
    "triage": "Triage",
    "root_cause": "Root cause",
    "fix": "Fix",
    "long_term": "Long-term",
}
# The same steps as pages name them (a refusal's params say them in the page's language).
RUNBOOK_STEP_LABELS = {
    "symptom": gettext_lazy("Symptom"),
    "triage": gettext_lazy("Triage"),
    "root_cause": gettext_lazy("Root cause"),
    "fix": gettext_lazy("Fix"),
    "long_term": gettext_lazy("Long-term"),
}
# What a refusal says the actor may not do ("Your role does not allow you to ...").
CHANGE_RUNBOOK = gettext_lazy("change the incident's runbook")
CONFIRM_DIAGNOSIS = gettext_lazy("confirm a diagnosis")
CHECK_OFF_STEPS = gettext_lazy("check off runbook steps")


@transaction.atomic
def runbook_change(*, incident_id: int, actor: User, slug: str) -> Incident:
    """Point the incident at a catalogue runbook; the change goes on the timeline."""
    require(actor, RESPOND, CHANGE_RUNBOOK)
    slug = (slug or "").strip()
    catalog = load_catalog()
    if catalog.get(slug) is None:
        names = ", ".join(rb.slug for rb in catalog.all())
        raise DomainError(
            gettext_noop("There is no runbook named %(slug)s; the catalogue has: %(names)s."),
            code="invalid",
            params={"slug": repr(slug[:120]), "names": names},
        )
    return incident_runbook_set(incident_id=incident_id, actor=actor, slug=slug)


def diagnosis_confirm(*, incident_id: int, actor: User) -> TimelineEvent:
    """Run the triage now and record its branch and every check's value on the timeline.

    Not one transaction around the whole: the triage asks Prometheus over the network
    (with a timeout), and no row lock or transaction should wait on that. The write
    itself is one atomic service call.
    """
    require(actor, RESPOND, CONFIRM_DIAGNOSIS)
    # The timeline is written in one language (English), whoever confirms: the branch's
    # diagnosis comes from the English catalogue.
    with translation.override(settings.LANGUAGE_CODE):
        result = incident_triage(incident=incident_get(incident_id=incident_id))
    if not result.runbook_slug:
        raise DomainError(
            gettext_noop(
                "No runbook matches this incident, so there is no diagnosis to confirm; "
                "pick a runbook first."
            ),
            code="invalid",
        )
    checks = [{"id": c.id, "value": c.value, "state": c.state} for c in result.checks]
    message = f"Diagnosis confirmed: {result.branch_id} — {first_sentence(result.diagnosis)}"
    return incident_event_add(
        incident_id=incident_id,
        actor=actor,
        kind=DIAGNOSIS_CONFIRMED,
        message=message,
        payload={"runbook": result.runbook_slug, "branch": result.branch_id, "checks": checks},
        perm=RESPOND,
        what=CONFIRM_DIAGNOSIS,
    )


@transaction.atomic
def runbook_step_check(*, incident_id: int, actor: User, step: str) -> TimelineEvent:
    """Check off one stepper step of the incident's current runbook, once."""
    require(actor, RESPOND, CHECK_OFF_STEPS)
    if step not in RUNBOOK_STEPS:
        raise DomainError(
            gettext_noop("%(step)s is not a runbook step; the steps are: %(steps)s."),
            code="invalid",
            params={"step": repr(step[:60]), "steps": ", ".join(RUNBOOK_STEPS)},
        )
    incident = incident_for_update(incident_id=incident_id)  # serialises concurrent check-offs
    runbook = incident_runbook(incident, incident_alerts_firing_first(incident))
    if runbook is None:
        raise DomainError(gettext_noop("No runbook matches this incident; pick a runbook first."))
    done = TimelineEvent.objects.filter(
        incident=incident,
        kind=RUNBOOK_STEP,
        payload__runbook=runbook.slug,
        payload__step=step,
    ).exists()
    if done:
        raise DomainError(
            gettext_noop("%(step)s is already checked off for %(runbook)s."),
            code="unchanged",
            params={"step": RUNBOOK_STEP_LABELS[step], "runbook": runbook.slug},
        )
    return incident_event_add(
        incident_id=incident_id,
        actor=actor,
        kind=RUNBOOK_STEP,
        message=msg("runbooks.step.done", step=msg(f"runbooks.step.{step}")),
        payload={"runbook": runbook.slug, "step": step},
        perm=RESPOND,
        what=CHECK_OFF_STEPS,
    )
