"""Drafting a postmortem from what the console recorded: the timeline (incident events,
alerts, action runs), the impact (times, durations, counts, what was affected), the
runbook's root-cause notes and category, suggested action items from its long-term
improvements, and the golden signals over the incident window, stored.

Small incidents are drafted in the request; big ones (POSTMORTEM_ASYNC_THRESHOLD rows)
in a Celery task, with the postmortem showing "being drafted" until then. The draft's
timeline is built by timeline.py.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError, NotFound
from console.permissions import require
from console.texts import msg
from incidents.models import Alert, Incident, TimelineEvent
from incidents.selectors import incident_get
from incidents.transitions import status_word
from postmortems.markdown.document import duration
from postmortems.models import (
    DraftState,
    MetricSnapshot,
    Postmortem,
    PostmortemEdit,
    PostmortemTimelineEntry,
)
from postmortems.permissions import DRAFT, ready_to_draft
from postmortems.services.drafting.timeline import BATCH, timeline_entries
from postmortems.services.incident_timeline import listed, postmortem_event
from postmortems.services.revisions import content_changed
from postmortems.transitions import check_drafting
from runbooks.catalog import load_catalog
from runbooks.charts import incident_charts
from runbooks.triage import incident_runbook

log = logging.getLogger(__name__)
TAIL = timedelta(minutes=15)  # metric snapshots run this long past resolution


def _threshold() -> int:
    return int(settings.POSTMORTEM_ASYNC_THRESHOLD)


def postmortem_draft(*, incident_id: int, actor: User, language: str | None = None) -> Postmortem:
    """Create the incident's postmortem and draft it (now, or on the worker if big), in
    `language` (one of settings.LANGUAGES; default: the asker's active language): its
    sections, generated sentences and the timeline lines copied from the incident.
    An incident has one postmortem: asking again answers the existing one."""
    require(actor, DRAFT, gettext_lazy("draft postmortems"))
    language = draft_language_check(language)
    incident = incident_get(incident_id=incident_id)
    existing = Postmortem.objects.filter(incident=incident).first()
    if existing is not None and existing.draft_state != DraftState.FAILED:
        return existing
    if incident.archived_at is not None and existing is None:
        # Its alerts and timeline are in the archive: a draft now would miss them all.
        raise DomainError(
            gettext_noop(
                "Incident #%(id)s's alerts and timeline are archived; restore it from the "
                "archive first, then draft its postmortem."
            ),
            code="archived",
            params={"id": incident.pk},
        )
    if not ready_to_draft(incident):
        raise DomainError(
            gettext_noop(
                "Incident #%(id)s is %(status)s; draft the postmortem once it is mitigated or "
                "resolved, so the timeline is complete."
            ),
            code="invalid_state",
            params={"id": incident.pk, "status": status_word(incident.status)},
        )
    size = TimelineEvent.objects.filter(incident=incident).count()
    size += Alert.objects.filter(incident=incident).count()
    if existing is not None:
        # A failed draft (e.g. the worker died): try again rather than stay stuck.
        if not _drafting_move(existing, DraftState.FAILED, DraftState.PENDING):
            # someone else retried it already
            return Postmortem.objects.get(pk=existing.pk)
        pm = existing
        # The retry is drafted in the language asked now (nothing was written yet).
        Postmortem.objects.filter(pk=pm.pk).update(language=language, draft_language=language)
        pm.language = pm.draft_language = language
    else:
        try:
            with transaction.atomic():
                with translation.override(language):
                    title = _("Postmortem: %(title)s") % {"title": incident.title}
                pm = Postmortem.objects.create(
                    incident=incident,
                    # `language` is what the worker and every refresh write in.
                    language=language,
                    draft_language=language,
                    title=title[:300],
                    created_by=actor,
                    draft_state=DraftState.PENDING,
                )
        except IntegrityError:  # a parallel click made it first
            return Postmortem.objects.get(incident=incident)
        postmortem_event(pm, actor, msg("postmortems.what.drafted"))
    if size >= _threshold():
        # cycle: postmortems/tasks.py imports these services (its task calls them).
        from postmortems.tasks import postmortem_draft_task

        transaction.on_commit(lambda: postmortem_draft_task.delay(pm.pk))
        return pm
    return postmortem_draft_build(postmortem_id=pm.pk)


def draft_languages() -> list[str]:
    return [code for code, _name in settings.LANGUAGES]


def draft_language_check(language: str | None) -> str:
    """The language to draft in: `language` when the console offers it (a refusal naming
    the field otherwise), else the active language if offered, else the default."""
    offered = draft_languages()
    if language:
        if language not in offered:
            raise DomainError(
                gettext_noop("language: one of %(values)s."),
                code="invalid_params",
                params={"values": ", ".join(offered)},
            )
        return language
    active = translation.get_language() or settings.LANGUAGE_CODE
    return active if active in offered else settings.LANGUAGE_CODE


def _drafting_move(pm: Postmortem, start: str, to: str, *, error: str = "") -> bool:
    """The one writer of a postmortem's drafting state: the move is checked against
    transitions.py and made only if the row is still in `start` (a parallel retry or a
    redelivered task may have moved it: False). The copy in memory follows the row."""
    check_drafting(pm, start, to)
    values: dict[str, Any] = {"draft_state": to, "draft_error": error[:2000]}
    if to == DraftState.READY:
        values["drafted_at"] = timezone.now()
    if not Postmortem.objects.filter(pk=pm.pk, draft_state=start).update(**values):
        return False
    for field, value in values.items():
        setattr(pm, field, value)
    return True


def postmortem_draft_build(*, postmortem_id: int) -> Postmortem:
    """Fill a pending postmortem. Prometheus is asked outside the transaction; a failure
    marks the draft failed with the reason instead of leaving it pending."""
    pm = Postmortem.objects.select_related("incident").get(pk=postmortem_id)
    if pm.draft_state != DraftState.PENDING:
        return pm  # a redelivered task: drafted, or failed and waiting for a person's retry
    incident = pm.incident
    try:
        with translation.override(pm.language):  # chart titles are the document's too
            snapshots = _snapshots(incident)
        with transaction.atomic(), translation.override(pm.language):
            pm = Postmortem.objects.select_for_update().get(pk=postmortem_id)
            if pm.draft_state != DraftState.PENDING:
                return pm
            _fill(pm, incident)
            PostmortemTimelineEntry.objects.filter(postmortem=pm).delete()
            _timeline(pm, incident)
            MetricSnapshot.objects.filter(postmortem=pm).delete()
            for snap in snapshots:
                snap.postmortem = pm
            MetricSnapshot.objects.bulk_create(snapshots)
            _drafting_move(pm, DraftState.PENDING, DraftState.READY)
            pm.save()
    except Exception as exc:
        log.exception("drafting postmortem %s failed", postmortem_id)
        reason = f"{type(exc).__name__}: {exc}"
        # From pending, whatever the copy says: the transaction rolled back.
        _drafting_move(pm, DraftState.PENDING, DraftState.FAILED, error=reason)
        raise
    return pm


# --- impact ------------------------------------------------------------------------------
def _seconds(a: datetime | None, b: datetime | None) -> int | None:
    return None if a is None or b is None else max(0, int((b - a).total_seconds()))


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def impact_data(incident: Incident) -> dict[str, Any]:
    """Times and durations (seconds) of the incident, its alerts, and what was affected.

    Detect = impact start -> the console opened the incident; acknowledge = opened ->
    acknowledged; mitigate and resolve are measured from impact start."""
    rows = Alert.objects.filter(incident=incident).values_list("alertname", "labels", "starts_at")
    by_name: dict[str, int] = defaultdict(int)
    affected: dict[str, set[str]] = {k: set() for k in ("namespace", "lws", "node", "pod")}
    earliest = None
    for name, labels, starts in rows.iterator(chunk_size=BATCH):
        by_name[name] += 1
        earliest = starts if earliest is None or starts < earliest else earliest
        for key, found in affected.items():
            value = (labels or {}).get(key)
            if value:
                found.add(value)
    start = incident.started_at or earliest or incident.triggered_at
    times = {
        "start": start,
        "detected": incident.triggered_at,
        "acknowledged": incident.acknowledged_at,
        "mitigated": incident.mitigated_at,
        "resolved": incident.resolved_at,
    }
    return {
        "times": {k: _iso(v) for k, v in times.items()},
        "durations": {
            "detect": _seconds(start, incident.triggered_at),
            "acknowledge": _seconds(incident.triggered_at, incident.acknowledged_at),
            "mitigate": _seconds(start, incident.mitigated_at),
            "resolve": _seconds(start, incident.resolved_at),
        },
        "alerts": {"total": sum(by_name.values()), "by_name": dict(sorted(by_name.items()))},
        "affected": {k: sorted(v)[:50] for k, v in affected.items()},
        "affected_counts": {k: len(v) for k, v in affected.items()},
        "severity": incident.severity,
        "reopened": incident.reopen_count,
    }


def _fill(pm: Postmortem, incident: Incident) -> None:
    data = impact_data(incident)
    pm.impact_data = data
    d, a = data["durations"], data["alerts"]
    affected = ", ".join(
        f"{k} {', '.join(v[:5])}{' …' if len(v) > 5 else ''}"
        for k, v in data["affected"].items()
        if v
    )
    pm.summary = pm.summary or (
        _(
            "%(severity)s incident: %(title)s. Detected after %(detect)s, mitigated after "
            "%(mitigate)s."
        )
        % {
            "severity": incident.severity,
            "title": incident.title,
            "detect": duration(d["detect"]),
            "mitigate": duration(d["mitigate"]),
        }
    )
    # The durations and times are tables of their own (page, print, export); the text
    # starts with what they do not say.
    alerts = ", ".join(f"{n} {k}" for k, n in a["by_name"].items())
    pm.impact = pm.impact or "\n".join(
        [
            _("- Alerts: %(total)s (%(alerts)s)") % {"total": a["total"], "alerts": alerts},
            _("- Affected: %(affected)s")
            % {"affected": affected or _("no namespace, LWS, node or pod labels on the alerts")},
            _("- Users: _say who noticed what (errors, latency, wrong answers) and for how long._"),
        ]
    )
    # The same matching as the incident page: its runbook, else its alerts' labels/names.
    runbook = incident_runbook(incident, list(incident.alerts.order_by("-starts_at")[:50]))
    if runbook is not None:
        pm.runbook, pm.category = runbook.slug, runbook.category
        pm.root_cause = pm.root_cause or (
            _(
                "_Starting point from the runbook “%(title)s” (%(category)s); confirm or "
                "replace it with what you found._"
            )
            % {"title": runbook.title, "category": _category_title(runbook.category)}
            + f"\n\n{runbook.root_cause}"
        )
        pm.suggestions = [
            {
                "source": f"runbook:{runbook.slug}:{i}",
                "title": t.title,
                "description": t.description,
                "category": t.category,
                "priority": t.priority,
            }
            for i, t in enumerate(runbook.long_term)
        ]


def _category_title(name: str) -> str:
    """A failure category's title in the active (the draft's) language."""
    category = load_catalog().categories.get(name)
    return category.title if category is not None else name


def _timeline(pm: Postmortem, incident: Incident) -> None:
    PostmortemTimelineEntry.objects.bulk_create(timeline_entries(pm, incident), batch_size=BATCH)


# --- metric snapshots --------------------------------------------------------------------
def _snapshots(incident: Incident) -> list[MetricSnapshot]:
    """The runbook's golden signals over the incident window plus TAIL, as they are now in
    Prometheus (the queries have timeouts; a down Prometheus is recorded per chart)."""
    charts = incident_charts(incident=incident, tail=TAIL)
    now = timezone.now()
    return [
        MetricSnapshot(
            chart_id=c.id,
            title=c.title,
            unit=c.unit,
            promql=c.promql,
            start=charts.start,
            end=charts.end,
            step_seconds=charts.step,
            series=list(c.series),
            error=c.message,
            captured_at=now,
        )
        for c in charts.charts
    ]


def _key(entry: PostmortemTimelineEntry) -> tuple[object, ...]:
    return (entry.source, entry.source_id, entry.kind, entry.occurred_at)


def postmortem_refresh(*, postmortem_id: int, actor: User) -> Postmortem:
    """Bring the facts up to date with the incident (it may have been resolved since the
    draft): the impact figures, timeline lines for what happened since (lines already
    there, and their edits, stay), and the stored charts over the now longer window. The
    text the authors wrote is not touched. A published postmortem is left as published."""
    require(actor, DRAFT, gettext_lazy("refresh postmortems"))
    pm = Postmortem.objects.select_related("incident").filter(pk=postmortem_id).first()
    if pm is None:
        raise NotFound(
            gettext_noop("Postmortem #%(id)s does not exist."), params={"id": postmortem_id}
        )
    if pm.status == "published":
        raise DomainError(
            gettext_noop("A published postmortem is not refreshed."), code="invalid_state"
        )
    if pm.draft_state != DraftState.READY:
        raise DomainError(
            gettext_noop("The postmortem is still being drafted."), code="invalid_state"
        )
    incident = pm.incident
    with translation.override(pm.language):  # Prometheus first, outside the transaction
        snapshots = _snapshots(incident)
    # New and updated lines in the draft's language, whoever refreshes: a line nobody
    # reworded is compared with the fresh one, and a language change is not news.
    with transaction.atomic(), translation.override(pm.language):
        pm = Postmortem.objects.select_for_update().get(pk=postmortem_id)
        facts = impact_data(incident)
        impact_changed = facts != pm.impact_data
        pm.impact_data = facts
        have = {_key(e): e for e in PostmortemTimelineEntry.objects.filter(postmortem=pm)}
        fresh, updated = [], []
        for entry in timeline_entries(pm, incident):
            old = have.get(_key(entry))
            if old is None:
                fresh.append(entry)
            elif old.text == old.original_text and old.original_text != entry.text:
                # A line nobody reworded follows the facts (a run that has finished since).
                old.text = old.original_text = entry.text
                updated.append(old)
        PostmortemTimelineEntry.objects.bulk_create(fresh, batch_size=BATCH)
        PostmortemTimelineEntry.objects.bulk_update(updated, ["text", "original_text"])
        MetricSnapshot.objects.filter(postmortem=pm).delete()
        for snap in snapshots:
            snap.postmortem = pm
        MetricSnapshot.objects.bulk_create(snapshots)
        # The charts are re-measured on every refresh and are not part of the revision
        # (an incident still mitigated has a window ending now); the figures and lines are.
        what = [
            *([msg("postmortems.change.impact_figures")] if impact_changed else []),
            *([msg("postmortems.change.new_lines", count=len(fresh))] if fresh else []),
            *([msg("postmortems.change.updated_lines", count=len(updated))] if updated else []),
        ]
        if what:
            content_changed(pm, actor=actor, what=listed(what), refreshed=True)
        pm.drafted_at = timezone.now()
        pm.save()
        PostmortemEdit.objects.create(
            postmortem=pm, editor=actor, at=pm.drafted_at, field="refresh",
            new=f"facts refreshed from incident #{incident.pk}; {len(fresh)} new timeline line(s)",
        )  # fmt: skip
    return pm
