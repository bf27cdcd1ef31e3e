"""Django finds an app's models here; the action runs live in runbooks/actions/models.py."""

from runbooks.actions.models import (  # noqa: F401
    ActionRun,
    ActionRunEvent,
    ActionRunStatus,
    ConfigRevision,
)
