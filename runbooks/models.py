"""Django finds an app's models here; the action runs live in runbooks/actions/models.py,
the drills in runbooks/drills/models.py, auto-triage's queue in
runbooks/auto_triage_models.py."""

from runbooks.actions.guard_models import GuardWatch  # noqa: F401
from runbooks.actions.models import (  # noqa: F401
    ActionRun,
    ActionRunEvent,
    ActionRunStatus,
    ConfigRevision,
)
from runbooks.auto_triage_models import AutoTriageDue  # noqa: F401
from runbooks.drills.models import DrillPlan, DrillRun, DrillRunEvent  # noqa: F401
