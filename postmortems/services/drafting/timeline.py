"""The draft's timeline: the incident's own events, its alerts grouped by name and minute
(a storm of 500 pods is one line), and one line per action run, in the draft's language
(the caller activates it). An incident line the console wrote is worded in that language
from its parts (incidents.timeline_text); a person's words are copied as they are. The
lines are stored as text in the draft's language: people edit them afterwards. The
drafting package (__init__.py) stores them."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from actions.models import ActionRun
from actions.timeline_kinds import ACTION
from console.texts import render
from incidents.models import Alert, Incident, TimelineEvent, TimelineEventType
from incidents.timeline_text import timeline_text
from postmortems.models import Postmortem, PostmortemTimelineEntry, TimelineSource
from postmortems.timeline_kinds import ACTION_ITEM, POSTMORTEM

BATCH = 2000
# Event kinds the draft takes from elsewhere: alerts from the alert rows (their real
# start/end times, grouped), actions from the run rows (one line per run).
SKIPPED_KINDS = {
    TimelineEventType.ALERT_FIRED,
    TimelineEventType.ALERT_RESOLVED,
    ACTION,
    # What happened after the fire is not part of the incident's own story.
    POSTMORTEM,
    ACTION_ITEM,
}


def _entry(
    pm: Postmortem,
    at: datetime,
    source: str,
    source_id: int | None,
    kind: str,
    text: str,
    included: bool = True,
) -> PostmortemTimelineEntry:
    return PostmortemTimelineEntry(
        postmortem=pm,
        occurred_at=at,
        source=source,
        source_id=source_id,
        kind=kind,
        original_text=text,
        text=text,
        included=included,
    )


def _alert_entries(pm: Postmortem, incident: Incident) -> list[PostmortemTimelineEntry]:
    """Alerts grouped by name and minute: a storm of 500 pods is one line, not 500."""
    starts: dict[tuple[str, datetime], list[tuple[datetime, int, str]]] = defaultdict(list)
    ends: dict[tuple[str, datetime], list[tuple[datetime, int, str]]] = defaultdict(list)
    rows = Alert.objects.filter(incident=incident).values_list(
        "id", "alertname", "starts_at", "ends_at", "status", "labels"
    )
    for pk, name, started, ended, status, labels in rows.iterator(chunk_size=BATCH):
        where = (labels or {}).get("pod") or (labels or {}).get("node") or ""
        starts[(name, started.replace(second=0, microsecond=0))].append((started, pk, where))
        if status == "resolved" and ended:
            ends[(name, ended.replace(second=0, microsecond=0))].append((ended, pk, where))
    out = []
    for groups, kind in ((starts, "alert_fired"), (ends, "alert_resolved")):
        for (name, _minute), items in groups.items():
            items.sort()
            at, first_id, _where = items[0]
            places = [w for _at, _pk, w in items if w]
            text = _alert_line(kind, name, len(items), places)
            out.append(_entry(pm, at, TimelineSource.ALERT, first_id, kind, text))
    return out


def _alert_line(kind: str, name: str, count: int, places: list[str]) -> str:
    """ "3 x KVCacheFull started firing on pod-a, pod-b", in the draft's language."""
    words = {"name": name, "count": count}
    if kind == "alert_fired":
        line = ngettext("%(name)s started firing", "%(count)s x %(name)s started firing", count)
    else:
        line = ngettext("%(name)s resolved", "%(count)s x %(name)s resolved", count)
    line %= words
    if places:
        where = ", ".join(places[:5])
        if len(places) > 5:
            line += _(" on %(places)s and more") % {"places": where}
        else:
            line += _(" on %(places)s") % {"places": where}
    return line


def _action_entries(pm: Postmortem, incident: Incident) -> list[PostmortemTimelineEntry]:
    out = []
    runs = ActionRun.objects.filter(incident=incident).select_related("requested_by", "decided_by")
    for run in runs:
        summary = _plan_summary(run.plan) or _plan_summary(run.preview.get("plan"))
        names = {"who": run.requested_by.get_username()}
        who = _("requested by %(who)s") % names
        if run.decided_by is not None:
            names["decider"] = run.decided_by.get_username()
            if run.status == "rejected":
                who = _("requested by %(who)s, rejected by %(decider)s") % names
            else:
                who = _("requested by %(who)s, approved by %(decider)s") % names
        text = _("Action #%(id)s %(kind)s on %(target)s: %(status)s (%(who)s)") % {
            "id": run.pk,
            "kind": run.kind,
            "target": run.target,
            "status": str(run.get_status_display()).lower(),
            "who": who,
        }
        if summary:
            text += f". {summary}"
        error = render((run.texts or {}).get("error"), fallback=run.error)
        if error:
            text += _(". Error: %(error)s") % {"error": error[:300]}
        out.append(_entry(pm, run.requested_at, TimelineSource.ACTION, run.pk, "action", text))
    return out


def _plan_summary(plan: dict[str, Any] | None) -> str:
    """A plan's one line in the active language (its parts, when actions kept them)."""
    plan = plan or {}
    return render(plan.get("summary_msg"), fallback=plan.get("summary") or "")


def timeline_entries(pm: Postmortem, incident: Incident) -> list[PostmortemTimelineEntry]:
    entries = _alert_entries(pm, incident) + _action_entries(pm, incident)
    events = (
        TimelineEvent.objects.filter(incident=incident)
        .exclude(kind__in=SKIPPED_KINDS)
        .values_list("id", "occurred_at", "kind", "message", "payload", "actor__username")
    )
    for pk, at, kind, message, payload, username in events.iterator(chunk_size=BATCH):
        said = timeline_text(kind, message, payload if isinstance(payload, dict) else None)
        text = f"{username}: {said}" if username else said
        entries.append(_entry(pm, at, TimelineSource.EVENT, pk, kind, text))
    return entries
