"""The incident-timeline kinds runbooks writes (runbooks, runbooks/actions, runbooks/drills),
registered with incidents from RunbooksConfig.ready(). The values are stored data."""

DIAGNOSIS_CONFIRMED = "diagnosis_confirmed"
RUNBOOK_STEP = "runbook_step"
ACTION = "action"  # runbooks/actions: an action run's request, decision and outcome
DRILL = "drill"  # runbooks/drills: a drill's steps, once it has its incident
AUTO_TRIAGE = "auto_triage"  # runbooks/auto_triage: a triage result the worker posted

LABELS = {
    DIAGNOSIS_CONFIRMED: "Diagnosis confirmed",
    RUNBOOK_STEP: "Runbook step done",
    ACTION: "Action",
    DRILL: "Drill",
    AUTO_TRIAGE: "Auto-triage",
}
