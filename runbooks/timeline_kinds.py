"""The incident-timeline kinds runbooks writes, registered with incidents from
RunbooksConfig.ready(). The values are stored data. (Action runs and drills register
their own: actions/timeline_kinds.py, drills/timeline_kinds.py.)"""

from django.utils.translation import gettext_lazy as _

DIAGNOSIS_CONFIRMED = "diagnosis_confirmed"
RUNBOOK_STEP = "runbook_step"
AUTO_TRIAGE = "auto_triage"  # runbooks/auto_triage: a triage result the worker posted

LABELS = {
    DIAGNOSIS_CONFIRMED: _("Diagnosis confirmed"),
    RUNBOOK_STEP: _("Runbook step done"),
    AUTO_TRIAGE: _("Auto-triage"),
}
