"""What a page may show in English because people or other systems wrote it, read from the
stack's own database (`manage.py shell`): names (users, teams, schedules, policies,
targets, workspaces, heartbeats, runbook slugs), the alerts' labels and annotations
(Prometheus rules' own words), incident and postmortem titles, what people typed
(notes, comments, reasons, action items), and action parameters. The walk strips these
from a page's text before it counts English words; what is left is the console's own.
"""

from __future__ import annotations

import json
import re
from functools import cache

from tests.run_stack import manage

# Runs inside the stack. Every value is a string somebody outside the console's text
# templates wrote (a name, a label, a typed note); `words` are single names.
NAMES = r"""
import json
from django.contrib.auth import get_user_model
from django.apps import apps

def values(label, model, *fields):
    M = next((m for m in apps.get_models() if m.__name__ == model), None)
    if M is None:
        return []
    found = []
    for f in fields:
        if any(x.name == f for x in M._meta.get_fields()):
            found += [v for v in M.objects.values_list(f, flat=True) if v]
    return found

def flat(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from flat(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from flat(v)
    elif value not in (None, ""):
        yield str(value)

words = set(get_user_model().objects.values_list("username", flat=True))
phrases = set()
for label, model, fields in (
    ("pager", "Team", ("slug", "name")), ("pager", "Schedule", ("slug", "name")),
    ("pager", "Rotation", ("name",)), ("pager", "EscalationPolicy", ("name",)),
    ("pager", "Heartbeat", ("slug", "name")), ("pager", "MaintenanceWindow", ("name", "reason")),
    ("pager", "ContactMethod", ("label",)), ("pager", "Override", ("reason",)),
    ("pager", "ShiftSwap", ("note",)), ("pager", "Ownership", ("namespace",)),
    ("notifications", "Target", ("name",)), ("notifications", "Rule", ("name",)),
    ("chatops", "Workspace", ("name",)), ("chatops", "ChatIdentity", ("external_name",)),
    ("incidents", "Incident", ("title", "namespace", "runbook")),
    ("incidents", "Alert", ("alertname",)),
    ("postmortems", "Postmortem", ("title",)), ("postmortems", "ActionItem", ("title",)),
    ("postmortems", "ReviewComment", ("text",)), ("postmortems", "MetricSnapshot", ("title",)),
    ("actions", "ActionRun", ("target", "decision_note", "runbook")),
    ("drills", "DrillPlan", ("title", "namespace", "lws", "adapter")),
    ("actions", "ConfigRevision", ("name",)), ("audit", "AuditEvent", ("user_agent",)),
    ("readiness", "Deployment", ("namespace", "lws")),
):
    phrases.update(values(label, model, *fields))
Alert = apps.get_model("incidents", "Alert")
for labels, annotations in Alert.objects.values_list("labels", "annotations"):
    phrases.update(flat(labels))
    phrases.update(flat(annotations))
for params in apps.get_model("actions", "ActionRun").objects.values_list("params", flat=True):
    phrases.update(flat(params))
# What a drill's fault changed and who changed it since (a field manager's name).
DrillRun = apps.get_model("drills", "DrillRun")
for changes in DrillRun.objects.values_list("fault_changes", "restored"):
    for entry in (e for c in changes for e in (c or []) if isinstance(e, dict)):
        phrases.update(flat([entry.get(k) for k in ("object", "field", "before", "after",
                                                        "now", "changed_by", "by")]))
# ConfigMaps' values (a router's routing_logic "roundrobin"), JSON documents read through.
for data in apps.get_model("actions", "ConfigRevision").objects.values_list("data", flat=True):
    for value in (data or {}).values():
        try:
            phrases.update(flat(json.loads(value)))
        except (TypeError, ValueError):
            phrases.update(flat(value))
TimelineEvent = apps.get_model("incidents", "TimelineEvent")
phrases.update(TimelineEvent.objects.filter(kind="note").values_list("message", flat=True))
print(json.dumps({"words": sorted(words), "phrases": sorted(phrases)}))
"""


def stack_names(stack: dict) -> tuple[set[str], list[str]]:
    """(single names, phrases to strip, longest first) from the stack's database."""
    out = json.loads(manage(stack, "shell", "-c", NAMES).strip().splitlines()[-1])
    words = {w for w in out["words"] if w} | catalogue_ids()
    phrases = {p.strip() for p in [*out["phrases"], *catalogue_params()] if p.strip()}
    words.update(p for p in phrases if " " not in p)
    # Only what has a space is stripped as a whole; a single name is allowed as a word.
    return words, sorted((p for p in phrases if " " in p), key=len, reverse=True)


def catalogue_ids() -> set[str]:
    """The runbook catalogue's ids, shown as they are: slugs, categories, alert names,
    check, branch and signal ids (a drill plan's expected branch, a verdict's signal)."""
    from runbooks.catalog import load_catalog

    ids: set[str] = set()
    for rb in load_catalog().all():
        ids.update((rb.slug, rb.category, *rb.alerts))
        ids.update(c.id for c in rb.triage)
        ids.update(b.id for b in rb.decision_tree)
        ids.update(s.id for s in rb.golden_signals)
        ids.update(s.id for s in (rb.guard.signals if rb.guard else ()))
    return ids


@cache
def _pattern(phrase: str) -> tuple[str, re.Pattern]:
    """The phrase as a whole-words pattern whose numbers may differ (an annotation's
    "restarted 3 times" shown as it read when the alert fired), and its longest part
    without a number, which must be in a text before the pattern is tried."""
    parts = re.split(r"\d+(?:\.\d+)?", phrase)
    body = r"\d+(?:\.\d+)?".join(re.escape(p) for p in parts)
    return max(parts, key=len), re.compile(rf"(?<!\w){body}(?!\w)")


def catalogue_params() -> set[str]:
    """The values of the runbooks' action parameters (a cordon's reason "NCCL hang,
    suspected NVLink fault"), shown with a recommended action before any run has them."""
    from runbooks.catalog import load_catalog

    return {
        str(value)
        for rb in load_catalog().all()
        for action in rb.emergency_actions
        for value in action.params.values()
        if isinstance(value, str) and "{" not in value
    }


def strip_phrases(text: str, phrases: list[str]) -> str:
    """`text` without the data's own strings (longest first, so a title goes before the
    label value inside it), also where a page cut one short ("Output quality regr...")."""
    if "..." in text or "…" in text:  # before the whole ones: they would break the cut one
        for phrase in (p for p in phrases if p[:12] in text):
            for cut in range(len(phrase) - 1, 11, -1):
                for ellipsis in ("...", "…"):
                    if phrase[:cut] + ellipsis in text:
                        text = text.replace(phrase[:cut] + ellipsis, " ")
    for phrase in phrases:
        probe, pattern = _pattern(phrase)
        if probe in text:  # whole words only: "on vllm-chat" is not taken out of "won"
            text = pattern.sub(" ", text)
    return re.sub(r"\s+", " ", text)
