"""Writes of guarded changes: start a verification window after a change, record each
evaluation, and on a breach undo the change (a new run through the same request service a
person's undo uses, so the same audit and approval rules) or, where it cannot be undone,
page the commander. Every step lands on the incident's timeline.

The guard acts as its own service account (console/service_accounts.py, settings
GUARD_USERNAME): it holds only the permission to request runs, never to approve them, so
an undo that needs approval waits for a commander.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from actions.dispatch import GUARD_WATCH_EVALUATE, task_send
from actions.guard import judge as guard
from actions.guard.models import GuardOutcome, GuardVerdict, GuardWatch
from actions.kinds import kind_for
from actions.models import ActionRun, ActionRunStatus, ConfigRevision
from actions.services import action_run_request, action_run_undo
from actions.timeline_kinds import ACTION
from console.errors import DomainError
from console.outgoing import OutgoingRefused, user_request
from console.service_accounts import GUARD, service_account_user
from incidents.models import OPEN_STATUSES, Alert, Incident
from incidents.services import incident_event_record
from runbooks.catalog import load_catalog
from runbooks.schema import Guard, Runbook
from runbooks.triage import incident_alerts_firing_first, incident_labels, incident_runbook

log = logging.getLogger(__name__)
MESSAGE_MAX = 1_900


def guard_user() -> User:
    """The guard's own account (console.service_accounts.GUARD), made by the migrations:
    looked up, never created, so nobody can sign in first under its name and become it.
    Missing (a database not migrated), it is a DomainError: the undo is refused with the
    reason and the commander paged."""
    user: User = service_account_user(GUARD)
    return user


def _timeline(watch: GuardWatch, message: str, **payload: Any) -> None:
    text = message if len(message) <= MESSAGE_MAX else message[: MESSAGE_MAX - 1] + "…"
    incident_event_record(
        incident_id=watch.incident_id,
        kind=ACTION,
        message=text,
        payload={"guard": watch.pk, "run": watch.run_id, "verdict": watch.verdict, **payload},
        source="worker",
    )


def _label(watch: GuardWatch) -> str:
    if watch.run_id:
        return f"Guard on action #{watch.run_id}"
    return f"Guard on the change to {watch.subject}"


def _schedule(watch: GuardWatch, seconds: float) -> None:
    watch_id, countdown = watch.pk, max(1, round(seconds))
    transaction.on_commit(lambda: task_send(GUARD_WATCH_EVALUATE, watch_id, countdown=countdown))


def _window(runbook_guard: Guard) -> tuple[int, int]:
    # 0 (the default) keeps the runbook's own window and interval.
    window = int(settings.GUARD_WINDOW_SECONDS or runbook_guard.window_seconds)
    interval = int(settings.GUARD_INTERVAL_SECONDS or runbook_guard.interval_seconds)
    return window, min(interval, window)


def _duration(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


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
    window, interval = _window(runbook.guard)
    watch = GuardWatch.objects.create(
        incident=incident,
        run=run,
        revision=revision,
        runbook=runbook.slug,
        subject=subject[:255],
        labels=labels,
        changed_at=changed_at,
        ends_at=timezone.now() + timedelta(seconds=window),
        interval_seconds=interval,
        signals=guard.signal_specs(runbook.guard, labels),
    )
    watched = "; ".join(f"{s['title']} ({guard.threshold_text(s)})" for s in watch.signals)
    _timeline(
        watch,
        f"{_label(watch)}: watching {runbook.slug}'s golden signals for {_duration(window)}: "
        f"{watched}. A regression caused by the change undoes it.",
    )
    _schedule(watch, interval)
    return watch


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
    a deploy pipeline): watch the golden signals of the newest open incident about its
    namespace, as for a run of our own. No open incident: nobody to tell, no watch (the
    revision is still kept and can be rolled back by hand). The first capture of a
    ConfigMap is not a change."""
    if revision.run_id is not None:
        return None  # our own write: its run carries the guard
    earlier = ConfigRevision.objects.filter(
        namespace=revision.namespace, name=revision.name, captured_at__lt=revision.captured_at
    )
    if not earlier.exists():
        return None
    incident = (
        Incident.objects.filter(
            status__in=OPEN_STATUSES, alerts__labels__namespace=revision.namespace
        )
        .order_by("severity", "-pk")
        .first()
    )
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


def _runbook(slug: str, incident: Incident, alerts: list[Alert]) -> Runbook | None:
    return load_catalog().get(slug) if slug else incident_runbook(incident, alerts)


def guard_watch_evaluate(*, watch_id: int) -> GuardWatch | None:
    """One evaluation: Prometheus first (no transaction held), then the verdict under the
    row lock. Called by the watch's own countdown chain and by the beat's recovery."""
    watch = GuardWatch.objects.filter(pk=watch_id).first()
    if watch is None:
        return None
    if watch.verdict == GuardVerdict.BREACHED and not watch.outcome:
        return _remedy(watch.pk)  # a worker died between the verdict and the undo
    if watch.verdict != GuardVerdict.WATCHING:
        return watch
    now = timezone.now()
    recent = watch.last_evaluated_at and (now - watch.last_evaluated_at) < timedelta(
        seconds=watch.interval_seconds / 2
    )
    if recent and now < watch.ends_at:
        return watch  # a duplicate delivery; the chain that evaluated is scheduled
    verdict, specs, error = guard.evaluate(
        watch.signals, watch.changed_at, confirm=settings.GUARD_CONFIRM_CHECKS
    )
    breached = _record(watch.pk, verdict, specs, error)
    return _remedy(watch.pk) if breached else GuardWatch.objects.get(pk=watch.pk)


@transaction.atomic
def _record(watch_id: int, verdict: str, specs: list[dict[str, Any]], error: str) -> bool:
    watch = GuardWatch.objects.select_for_update().get(pk=watch_id)
    if watch.verdict != GuardVerdict.WATCHING:
        return False
    now = timezone.now()
    was_unknown = bool(watch.last_error)
    watch.signals, watch.last_evaluated_at = specs, now
    watch.evaluations += 1
    unknown = [s["message"] for s in specs if s["state"] == guard.UNKNOWN]
    watch.last_error = (error or ("; ".join(unknown) if verdict == guard.UNKNOWN else ""))[:500]
    if verdict == guard.UNKNOWN:
        watch.unknown_evaluations += 1
    if verdict == guard.BREACH:
        crossed = [s for s in specs if s["state"] == guard.BREACH]
        watch.verdict = GuardVerdict.BREACHED
        watch.verdict_reason = "; ".join(s["message"] for s in crossed)[:1000]
        watch.save()
        _timeline(
            watch,
            f"{_label(watch)} breached: {watch.verdict_reason}.",
            signals=[{k: s[k] for k in ("id", "value", "baseline")} for s in crossed],
        )
        return True
    if now >= watch.ends_at:
        _close(watch)
    elif verdict == guard.UNKNOWN and not was_unknown:
        _timeline(
            watch,
            f"{_label(watch)}: cannot judge the change now ({watch.last_error}). "
            "Nothing is undone without data; the window goes on.",
        )
    elif was_unknown and not watch.last_error:
        _timeline(watch, f"{_label(watch)}: the signals can be read again; watching.")
    watch.save()
    if watch.verdict == GuardVerdict.WATCHING:
        _schedule(watch, min(watch.interval_seconds, (watch.ends_at - now).total_seconds()))
    return False


def _close(watch: GuardWatch) -> None:
    pending = [s for s in watch.signals if s["state"] == guard.BREACH]
    if pending:
        # Crossed at the end, but not for long enough to count: a person decides.
        watch.verdict = GuardVerdict.UNKNOWN
        watch.verdict_reason = (
            "The window ended while "
            + "; ".join(s["message"] for s in pending)
            + ". Not confirmed, so nothing was undone: check the golden signals yourself."
        )[:1000]
    elif watch.unknown_evaluations:
        watch.verdict = GuardVerdict.UNKNOWN
        watch.verdict_reason = (
            f"The signals could not be judged at {watch.unknown_evaluations} of "
            f"{watch.evaluations} checks (last: {watch.last_error or 'no data'}); the change "
            "was neither confirmed nor undone. Check the golden signals yourself."
        )[:1000]
    else:
        watch.verdict = GuardVerdict.PASSED
        watch.verdict_reason = f"No regression in {watch.evaluations} checks over the window."
    _timeline(watch, f"{_label(watch)}: verdict {watch.verdict}. {watch.verdict_reason}")


def _remedy(watch_id: int) -> GuardWatch:
    """Undo the change, or page when it cannot be undone. Outside any transaction: the
    undo request previews against Kubernetes, like a person's click."""
    watch = GuardWatch.objects.select_related("run", "incident__commander").get(pk=watch_id)
    if watch.outcome:
        return watch
    undo, why = None, ""
    try:
        undo = _request_undo(watch)
    except (DomainError, PermissionDenied) as exc:
        why = f"the automatic undo was refused: {exc}"
    if undo is None:
        return _page(watch, why or _not_undoable(watch))
    with transaction.atomic():
        locked = GuardWatch.objects.select_for_update().get(pk=watch.pk)
        if locked.outcome:
            return locked
        locked.outcome, locked.undo_run = GuardOutcome.UNDO_REQUESTED, undo
        locked.save(update_fields=["outcome", "undo_run", "updated_at"])
        waits = undo.status == ActionRunStatus.AWAITING_APPROVAL
        _timeline(
            locked,
            f"{_label(locked)}: automatic undo requested as action #{undo.pk}"
            + (f"; it waits for a commander's approval ({undo.approval_reason})" if waits else "")
            + ".",
            undo_run=undo.pk,
        )
    return locked


def _not_undoable(watch: GuardWatch) -> str:
    if watch.run is not None:
        return f"{watch.run.kind} cannot be undone"
    return "the console has no earlier revision to restore"


def _request_undo(watch: GuardWatch) -> ActionRun | None:
    key = f"guard-{watch.pk}-undo"
    if watch.run is not None:
        if not kind_for(watch.run.kind).undoable:
            return None
        done = watch.run.blocking_undo()
        if done is not None:
            return done  # someone was quicker; that undo is the remedy
        return action_run_undo(run_id=watch.run.pk, actor=guard_user(), idempotency_key=key)
    revision = watch.revision
    assert revision is not None  # a watch guards either a run or a ConfigMap revision
    previous = (
        ConfigRevision.objects.filter(
            namespace=revision.namespace,
            name=revision.name,
            captured_at__lt=revision.captured_at,
        )
        .exclude(data=revision.data)
        .first()
    )
    if previous is None:
        return None
    run, _created = action_run_request(
        incident_id=watch.incident_id,
        actor=guard_user(),
        kind="rollback_router_config",
        params={
            "namespace": revision.namespace,
            "configmap": revision.name,
            "revision": str(previous.pk),
        },
        idempotency_key=key,
        runbook=watch.runbook,
    )
    return run


def _page(watch: GuardWatch, why: str) -> GuardWatch:
    commander = watch.incident.commander
    who = f"the commander {commander.get_username()}" if commander else "the commander"
    text = (
        f"{_label(watch)} breached ({watch.verdict_reason}) and {why}: paging {who} "
        f"of incident #{watch.incident_id} to decide."
    )
    if commander is None:
        text += " Nobody commands this incident yet: take command."
    delivered = _deliver(text)
    with transaction.atomic():
        locked = GuardWatch.objects.select_for_update().get(pk=watch.pk)
        if locked.outcome:
            return locked
        locked.outcome = GuardOutcome.PAGED
        locked.save(update_fields=["outcome", "updated_at"])
        _timeline(locked, text + (f" {delivered}" if delivered else ""), paged=True)
    return locked


def _deliver(text: str) -> str:
    """POST {"text": ...} to GUARD_PAGE_WEBHOOK_URL (Slack-compatible), when set."""
    url = settings.GUARD_PAGE_WEBHOOK_URL
    if not url:
        return ""
    timeout = float(settings.GUARD_PAGE_TIMEOUT_SECONDS)
    try:
        # Guarded like a notification target's URL (console/outgoing), with an overall
        # deadline: a slow webhook must not hold the guard's worker.
        response = user_request("POST", url, json={"text": text}, deadline=timeout)
    except OutgoingRefused as exc:
        return f"(The page could not be delivered to the paging webhook: {exc})"
    except requests.RequestException as exc:
        return f"(The page could not be delivered to the paging webhook: {type(exc).__name__}.)"
    if response.status_code >= 300:
        return f"(The paging webhook answered {response.status_code}.)"
    return "(Sent to the paging webhook.)"


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
