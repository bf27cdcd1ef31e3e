"""The demo history's rows carry their texts as parts, with the ids the real code uses,
so a seeded console reads Chinese for a Chinese reader: every timeline line, a run's
audit events and texts, a drill's events and scorecard."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.utils import translation

from actions.models import ActionRun, ActionRunEvent
from console.texts import english, render
from drills.models import DrillPlan, DrillRun, DrillRunEvent
from incidents.models import Incident, TimelineEvent
from incidents.timeline_text import timeline_text
from postmortems.models import ActionItem
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED
from tests.english_words import english_words
from tests.unit.demo.test_seed_demo import _isolated, seed  # noqa: F401

pytestmark = pytest.mark.django_db


def names() -> set[str]:
    """What stays as written: people, titles' alert names, runbooks, fleet names, kinds."""
    found = set(User.objects.values_list("username", flat=True))
    for incident in Incident.objects.all():
        found.update(re.findall(r"[A-Za-z][\w-]*", incident.title))
        found.update(str(v) for v in (incident.group_labels or {}).values())
        found.update({incident.runbook, incident.namespace})
    found.update(ActionRun.objects.values_list("kind", flat=True))
    # A run's parameters (names and values) are shown as the request gave them.
    for params in ActionRun.objects.values_list("params", flat=True):
        for key, value in (params or {}).items():
            found.update(re.split(r"[-_]", f"{key}-{value}"))
    # Action item titles are a person's words, quoted in the item's lines as typed.
    for title in ActionItem.objects.values_list("title", flat=True):
        found.update(re.findall(r"[A-Za-z][\w'-]*", title))
    found.update(DrillPlan.objects.values_list("fault", flat=True))
    found.update(DrillPlan.objects.values_list("adapter", flat=True))
    # Runbook branches are ids too (the diagnosis line names its branch).
    for payload in TimelineEvent.objects.filter(kind=DIAGNOSIS_CONFIRMED).values_list(
        "payload", flat=True
    ):
        found.add(str(payload.get("branch", "")))
    # A hyphenated id (ttft-spike, vllm-chat) is read as one name, whichever part shows.
    return found | {part for name in found for part in re.split(r"[-_/.]", name)}


def test_every_demo_timeline_line_is_stored_as_parts_and_reads_chinese():
    seed()
    allowed = names()
    events = TimelineEvent.objects.filter(incident__is_demo=True)
    assert events.count() > 100
    english_left = set()
    for event in events:
        if event.kind == DIAGNOSIS_CONFIRMED:
            # As runbooks writes it: worded from the catalogue in the reader's language
            # (runbooks/timeline_text.py), its payload says which runbook and branch.
            assert "msg" not in event.payload
        else:
            assert event.payload.get("msg"), (event.kind, event.message)
            assert english(event.payload["msg"]) == event.message
        with translation.override("zh-hans"):
            shown = timeline_text(event.kind, event.message, event.payload)
        if shown == event.message or english_words(shown, allowed):
            english_left.add((event.kind, shown))
    assert not english_left, (sorted({k for k, _ in english_left}), sorted(english_left)[:8])


def test_demo_runs_and_drills_read_chinese():
    seed()
    allowed = names()

    def chinese(parts, fallback: str = "") -> None:
        assert parts, fallback
        shown = render(parts, language="zh-hans")
        assert english_words(shown, allowed) == [], shown

    for run in ActionRun.objects.filter(incident__is_demo=True):
        chinese(run.texts.get("verification"), run.verification)
        if run.requires_approval:
            chinese(run.texts.get("approval_reason"), run.approval_reason)
    for event in ActionRunEvent.objects.filter(run__incident__is_demo=True):
        chinese(event.payload.get("msg"), event.message)
    for event in DrillRunEvent.objects.filter(run__is_demo=True):
        chinese(event.payload.get("msg"), event.message)
    for run in DrillRun.objects.filter(is_demo=True):
        assert run.outcome in ("passed", "failed")
    for plan in DrillPlan.objects.filter(is_demo=True):
        assert english_words(plan.title, allowed) == [], plan.title
