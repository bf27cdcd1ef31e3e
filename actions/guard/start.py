"""Starting a guard: the verification window after a change the console made (a run) or
one it only saw (a ConfigMap revision made outside the console), and the timeline words
every guard step shares."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from actions.dispatch import GUARD_WATCH_EVALUATE, task_send
from actions.guard import judge as guard
from actions.guard import pods
from actions.guard.alerts import incident_for_outside_change
from actions.guard.models import GuardWatch
from actions.guard.wording import listed, phrase, threshold_msg, title
from actions.kinds import Plan, Snapshot, kind_for
from actions.models import ActionRun, ConfigRevision
from actions.timeline_kinds import ACTION
from console.texts import Msg, msg
from incidents.models import Alert, Incident
from incidents.services import incident_event_record
from runbooks.catalog import load_catalog
from runbooks.schema import Guard, Runbook
from runbooks.triage import incident_alerts_firing_first, incident_labels, incident_runbook

MESSAGE_MAX = 1_900


def timeline(watch: GuardWatch, message: Msg, **payload: Any) -> None:
    """A line on the incident's timeline: its parts in payload["msg"] (worded in the
    reader's language), its English in `message`, cut when a long breach would not fit."""
    data = {"guard": watch.pk, "run": watch.run_id, "verdict": watch.verdict, **payload}
    text: Msg | str = message
    english = message.english
    if len(english) > MESSAGE_MAX:
        text, data["msg"] = english[: MESSAGE_MAX - 1] + "…", message.stored
    incident_event_record(
        incident_id=watch.incident_id, kind=ACTION, message=text, payload=data, source="worker"
    )


def label(watch: GuardWatch) -> Msg:
    if watch.run_id:
        return msg("guard.label.run", run=watch.run_id)
    return msg("guard.label.change", subject=watch.subject)


def schedule(watch: GuardWatch, seconds: float) -> None:
    watch_id, countdown = watch.pk, max(1, round(seconds))
    transaction.on_commit(lambda: task_send(GUARD_WATCH_EVALUATE, watch_id, countdown=countdown))


def _timings(runbook_guard: Guard) -> tuple[int, int, int]:
    # 0 (the default) keeps the runbook's own window, interval and settling period.
    window = int(settings.GUARD_WINDOW_SECONDS or runbook_guard.window_seconds)
    interval = int(settings.GUARD_INTERVAL_SECONDS or runbook_guard.interval_seconds)
    settle = int(settings.GUARD_SETTLE_SECONDS or runbook_guard.settle_seconds)
    # A compressed window keeps room after settling for the checks that can count.
    return window, min(interval, window), min(settle, window // 2)


def _duration(seconds: int) -> Msg:
    minutes, rest = divmod(seconds, 60)
    if not minutes:
        return msg("guard.duration.seconds", seconds=rest)
    if not rest:
        return msg("guard.duration.minutes", minutes=minutes)
    return msg("guard.duration.minutes_seconds", minutes=minutes, seconds=rest)


def _split(run: ActionRun | None) -> dict:
    """The kind's GuardSplit of this run, as stored; {} for a fleet-wide change."""
    if run is None or not run.before or not run.plan:
        return {}
    kind = kind_for(run.kind)
    found = kind.guard_split(
        run.params or {}, Snapshot.from_dict(run.before), Plan.from_dict(run.plan)
    )
    return found.as_dict() if found is not None else {}


def _start(
    *,
    incident: Incident,
    runbook: Runbook,
    labels: dict[str, Any],
    subject: str,
    changed_at: datetime,
    run: ActionRun | None = None,
    revision: ConfigRevision | None = None,
) -> GuardWatch:
    assert runbook.guard is not None  # the callers start a watch only for a guarded runbook
    window, interval, settle = _timings(runbook.guard)
    now = timezone.now()
    split = _split(run)
    watch = GuardWatch.objects.create(
        incident=incident,
        run=run,
        revision=revision,
        runbook=runbook.slug,
        subject=subject[:255],
        labels=labels,
        changed_at=changed_at,
        settles_at=now + timedelta(seconds=settle),
        ends_at=now + timedelta(seconds=window),
        interval_seconds=interval,
        # A change to some pods also shows their restarts against the others' (built in).
        # Each runbook signal names its runbook: its title is worded from the catalogue's
        # translation wherever the guard's texts name it (guard/wording.title).
        signals=[{**s, "runbook": runbook.slug} for s in guard.signal_specs(runbook.guard, labels)]
        + ([pods.spec()] if split else []),
        split=split,
    )
    watched = listed(
        [
            msg("guard.start.signal", title=title(s), threshold=threshold_msg(s))
            for s in watch.signals
        ]
    )
    words = {
        "label": label(watch),
        "runbook": runbook.slug,
        "window": _duration(window),
        "settle": _duration(settle),
        "signals": watched,
    }
    if split:
        what = phrase(split, "what", "guard.what.changed_pods")
        others = phrase(split, "others", "guard.what.others")
        timeline(watch, msg("guard.start.split", what=what, others=others, **words))
    else:
        timeline(watch, msg("guard.start.trend", **words))
    schedule(watch, interval)
    return watch


def _runbook(slug: str, incident: Incident, alerts: list[Alert]) -> Runbook | None:
    return load_catalog().get(slug) if slug else incident_runbook(incident, alerts)


def guard_watch_start(*, run: ActionRun) -> GuardWatch | None:
    """Called in the worker's transaction when a run succeeds. An undo is not guarded
    (undoing the undo would loop), nor a run that wrote nothing."""
    if run.undo_of_id or not run.before or run.plan is None:
        return None
    if (run.plan or {}).get("desired") == (run.before or {}).get("state"):
        return None  # already in the desired state: nothing changed, nothing to watch
    incident = run.incident
    alerts = incident_alerts_firing_first(incident)
    runbook = _runbook(run.runbook or incident.runbook, incident, alerts)
    if runbook is None or runbook.guard is None:
        return None
    return _start(
        incident=incident,
        runbook=runbook,
        labels=incident_labels(incident, alerts),
        subject=run.target,
        changed_at=run.started_at or timezone.now(),
        run=run,
    )


@transaction.atomic
def guard_watch_start_for_revision(*, revision: ConfigRevision) -> GuardWatch | None:
    """A tracked ConfigMap changed and the console did not change it (a person's kubectl,
    a deploy pipeline, a simulator reset): watch it on the open incident whose alerts are
    live and about that ConfigMap (alerts/incident_for_outside_change). None such: nobody
    to tell, no watch (the revision is still kept and can be rolled back by hand). The
    first capture of a ConfigMap is not a change."""
    if revision.run_id is not None:
        return None  # our own write: its run carries the guard
    earlier = ConfigRevision.objects.filter(
        namespace=revision.namespace, name=revision.name, captured_at__lt=revision.captured_at
    )
    if not earlier.exists():
        return None
    incident = incident_for_outside_change(revision.namespace, revision.name)
    if incident is None:
        return None
    alerts = incident_alerts_firing_first(incident)
    runbook = _runbook(incident.runbook, incident, alerts)
    if runbook is None or runbook.guard is None:
        return None
    return _start(
        incident=incident,
        runbook=runbook,
        labels=incident_labels(incident, alerts),
        subject=f"configmap/{revision.namespace}/{revision.name} (r{revision.pk})",
        changed_at=revision.captured_at,
        revision=revision,
    )
