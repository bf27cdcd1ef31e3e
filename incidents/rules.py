"""Two rules every way into an incident shares (the webhook, a person's buttons, the
runbook catalogue, notifications): which severity is worse, and what a runbook's name
looks like."""

import re

from django.utils.translation import gettext_noop

from incidents.models import Severity

SEVERITY_RANK = {s: i for i, s in enumerate(Severity.values)}  # SEV1 = 0 = worst
# The one rule for a runbook's name, wherever one arrives: an alert's `runbook` label, a
# responder's choice on the incident, a catalogue file's `slug`.
RUNBOOK_SLUG_RE = re.compile(r"[a-z0-9-]{1,100}")
RUNBOOK_SLUG_RULE = gettext_noop("lowercase letters, digits and dashes, at most 100")


def is_worse(candidate: str, current: str) -> bool:
    return SEVERITY_RANK.get(candidate, 99) < SEVERITY_RANK.get(current, 99)


def is_runbook_slug(value: str) -> bool:
    return bool(RUNBOOK_SLUG_RE.fullmatch(value))
