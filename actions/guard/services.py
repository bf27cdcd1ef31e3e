"""Writes of guarded changes: each evaluation of a verification window, its verdict, and
the recovery of lost evaluation chains. Starting a window is in actions/guard/start.py,
the undo or page after a confirmed breach in actions/guard/remedy.py, the judgement in
actions/guard/judge.py (pure) fed by actions/guard/evidence.py (Prometheus) and
actions/guard/alerts.py (which alerts excuse a signal).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from actions.dispatch import GUARD_WATCH_EVALUATE, task_send
from actions.guard import evidence
from actions.guard import judge as guard
from actions.guard.alerts import signal_alerts
from actions.guard.models import GuardOutcome, GuardVerdict, GuardWatch
from actions.guard.remedy import guard_user, remedy
from actions.guard.start import guard_watch_start, guard_watch_start_for_revision, label
from actions.guard.start import schedule as _schedule
from actions.guard.start import timeline as _timeline
from actions.guard.wording import listed, stored_msg
from console.texts import Msg, msg

log = logging.getLogger(__name__)

__all__ = [
    "guard_user",
    "guard_watch_evaluate",
    "guard_watch_start",
    "guard_watch_start_for_revision",
    "guard_watches_recover",
]


def guard_watch_evaluate(*, watch_id: int) -> GuardWatch | None:
    """One evaluation: Prometheus first (no transaction held), then the verdict under the
    row lock. Called by the watch's own countdown chain and by the beat's recovery."""
    watch = GuardWatch.objects.filter(pk=watch_id).first()
    if watch is None:
        return None
    if watch.verdict == GuardVerdict.BREACHED and not watch.outcome:
        return remedy(watch.pk)  # a worker died between the verdict and the undo
    if watch.verdict != GuardVerdict.WATCHING:
        return watch
    now = timezone.now()
    recent = watch.last_evaluated_at and (now - watch.last_evaluated_at) < timedelta(
        seconds=watch.interval_seconds / 2
    )
    if recent and now < watch.ends_at:
        return watch  # a duplicate delivery; the chain that evaluated is scheduled
    settling = watch.settles_at is not None and now < watch.settles_at
    # What the signals' own alerts say: fired before the change (excused), or began
    # after it in another incident (shown, not counted). A read, no lock held.
    excused, others = (
        ({}, {})
        if settling
        else signal_alerts(watch.signals, watch.labels, watch.changed_at, watch.incident_id)
    )
    verdict, specs, error, split = evidence.evaluate(
        watch.signals,
        changed_at=watch.changed_at,
        settling=settling,
        split=watch.split or None,
        labels=watch.labels,
        excuses=excused,
        coincides=others,
        confirm=max(1, int(settings.GUARD_CONFIRM_CHECKS)),
        # Restarts of a split change's groups count from settling on (guard/pods.py).
        restart_range=(now - (watch.settles_at or watch.changed_at)).total_seconds(),
    )
    breached = _record(watch.pk, verdict, specs, error, split)
    return remedy(watch.pk) if breached else GuardWatch.objects.get(pk=watch.pk)


@transaction.atomic
def _record(
    watch_id: int, verdict: str, specs: list[dict[str, Any]], error: str, split: dict[str, Any]
) -> bool:
    watch = GuardWatch.objects.select_for_update().get(pk=watch_id)
    if watch.verdict != GuardVerdict.WATCHING:
        return False
    now = timezone.now()
    was_unknown = bool(watch.last_error)
    watch.signals, watch.last_evaluated_at = specs, now
    if split:
        watch.split = split  # a roll-out's revisions from before the change, once read
    watch.evaluations += 1
    unknown = [_why(s) for s in specs if s["state"] == guard.UNKNOWN]
    if error:
        _set_text(watch, "last_error", msg("guard.error.prometheus", detail=error), 500)
    elif verdict == guard.UNKNOWN and unknown:
        _set_text(watch, "last_error", listed(unknown), 500)
    else:
        _set_text(watch, "last_error", None, 500)
    if verdict == guard.UNKNOWN:
        watch.unknown_evaluations += 1
    if verdict == guard.BREACH:
        crossed = [s for s in specs if s.get("counts")]
        watch.verdict = GuardVerdict.BREACHED
        reason = listed([_why(s) for s in crossed])
        _set_text(watch, "verdict_reason", reason, 1000)
        watch.save()
        shown = [_why(s) for s in specs if s["state"] in (guard.CONTEXT, guard.EXCUSED)]
        line = (
            msg("guard.timeline.breached_not_counted", shown=listed(shown), **_said(watch, reason))
            if shown
            else msg("guard.timeline.breached", **_said(watch, reason))
        )
        _timeline(watch, line, signals=[guard.evidence_text(s) for s in crossed])
        return True
    if now >= watch.ends_at:
        _close(watch)
    elif verdict == guard.UNKNOWN and not was_unknown:
        error_msg = stored_msg((watch.texts or {}).get("last_error"), watch.last_error)
        _timeline(watch, msg("guard.timeline.cannot_judge", label=label(watch), error=error_msg))
    elif was_unknown and not watch.last_error:
        _timeline(watch, msg("guard.timeline.readable", label=label(watch)))
    watch.save()
    if watch.verdict == GuardVerdict.WATCHING:
        _schedule(watch, min(watch.interval_seconds, (watch.ends_at - now).total_seconds()))
    return False


def _why(spec: dict[str, Any]) -> Msg:
    """A signal's state's why as parts (as stored, for a signal evaluated before parts)."""
    return stored_msg(spec.get("message_msg"), spec.get("message") or "")


def _set_text(watch: GuardWatch, field: str, text: Msg | None, limit: int) -> None:
    """A text field in English (cut to its column) and its parts in `texts`."""
    texts = dict(watch.texts or {})
    if text is None:
        setattr(watch, field, "")
        texts.pop(field, None)
    else:
        setattr(watch, field, text.english[:limit])
        texts[field] = text.stored
    watch.texts = texts or None


def _said(watch: GuardWatch, reason: Msg) -> dict[str, Msg]:
    return {"label": label(watch), "reason": reason}


def _close(watch: GuardWatch) -> None:
    late = [_why(s) for s in watch.signals if s["state"] in guard.LEFT_TO_A_PERSON]
    pending = [_why(s) for s in watch.signals if s["state"] in (guard.BREACH, guard.IMPROVING)]
    if late and not pending:
        watch.verdict = GuardVerdict.UNKNOWN
        reason = msg("guard.reason.late", signals=listed(late))
    elif pending:
        # Crossed at the end, but not for long enough to count: a person decides.
        watch.verdict = GuardVerdict.UNKNOWN
        reason = msg("guard.reason.pending", signals=listed(pending))
    elif watch.unknown_evaluations:
        watch.verdict = GuardVerdict.UNKNOWN
        last = (
            stored_msg((watch.texts or {}).get("last_error"), watch.last_error)
            if watch.last_error
            else msg("guard.no_data")
        )
        reason = msg(
            "guard.reason.unknown",
            unknown=watch.unknown_evaluations,
            checks=watch.evaluations,
            last=last,
        )
    else:
        watch.verdict = GuardVerdict.PASSED
        reason = msg("guard.reason.passed", count=watch.evaluations)
    _set_text(watch, "verdict_reason", reason, 1000)
    verdict = msg(f"guard.verdict.{watch.verdict}")
    _timeline(watch, msg("guard.timeline.verdict", verdict=verdict, **_said(watch, reason)))


def guard_watches_recover() -> int:
    """Beat: re-enqueue watches whose countdown chain went missing (a lost message or a
    worker restart) and breaches whose undo or page was never made."""
    now = timezone.now()
    ids = []
    for watch in GuardWatch.objects.filter(verdict=GuardVerdict.WATCHING).only(
        "pk", "interval_seconds", "last_evaluated_at", "changed_at", "created_at"
    ):
        last = watch.last_evaluated_at or watch.created_at
        if now - last > timedelta(seconds=3 * watch.interval_seconds):
            ids.append(watch.pk)
    ids += list(
        GuardWatch.objects.filter(
            verdict=GuardVerdict.BREACHED, outcome=GuardOutcome.NONE
        ).values_list("pk", flat=True)
    )
    for watch_id in ids:
        task_send(GUARD_WATCH_EVALUATE, watch_id)
    return len(ids)
