"""Django finds an app's models here; auto-triage's queue lives in
runbooks/auto_triage/models.py."""

from runbooks.auto_triage.models import AutoTriageDue  # noqa: F401
