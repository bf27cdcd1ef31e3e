"""Until notifications/events.py, runbooks/parsing/runbook.py and
tests/unit/runbooks/test_slug_rule.py import incidents.rules and incidents.ingest.decide
(then delete this file)."""

from incidents.ingest.decide import runbook_slug
from incidents.rules import RUNBOOK_SLUG_RULE, is_runbook_slug, is_worse

__all__ = ["RUNBOOK_SLUG_RULE", "is_runbook_slug", "is_worse", "runbook_slug"]
