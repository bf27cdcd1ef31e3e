"""The incident-timeline kinds runbooks writes (runbooks, actions/, drills/),
registered with incidents from RunbooksConfig.ready(). The values are stored data."""

from django.utils.translation import gettext_lazy as _

DIAGNOSIS_CONFIRMED = "diagnosis_confirmed"
RUNBOOK_STEP = "runbook_step"
ACTION = "action"  # actions/: an action run's request, decision and outcome
DRILL = "drill"  # drills/: a drill's steps, once it has its incident
AUTO_TRIAGE = "auto_triage"  # runbooks/auto_triage: a triage result the worker posted

LABELS = {
    DIAGNOSIS_CONFIRMED: _("Diagnosis confirmed"),
    RUNBOOK_STEP: _("Runbook step done"),
    ACTION: _("Action"),
    DRILL: _("Drill"),
    AUTO_TRIAGE: _("Auto-triage"),
}
