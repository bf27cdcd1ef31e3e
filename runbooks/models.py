"""Django finds an app's models here; the action runs live in runbooks/actions/models.py,
the drills in runbooks/drills/models.py."""

from runbooks.actions.guard_models import GuardWatch  # noqa: F401
from runbooks.actions.models import (  # noqa: F401
    ActionRun,
    ActionRunEvent,
    ActionRunStatus,
    ConfigRevision,
)
from runbooks.drills.models import DrillPlan, DrillRun, DrillRunEvent  # noqa: F401
