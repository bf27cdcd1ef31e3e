"""A confirmed breach: undo the change (a new run through the same request service a
person's undo uses, so the same audit and approval rules) or, where it cannot be undone,
page the commander. Every step lands on the incident's timeline.

The guard acts as its own service account (console/service_accounts.py, settings
GUARD_USERNAME): it holds only the permission to request runs, never to approve them, so
an undo that needs approval waits for a commander.
"""

from __future__ import annotations

import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction

from actions.guard.models import GuardOutcome, GuardWatch
from actions.guard.start import label, timeline
from actions.guard.wording import stored_msg
from actions.kinds import kind_for
from actions.models import ActionRun, ActionRunStatus, ConfigRevision
from actions.services import action_run_request, action_run_undo
from console.errors import DomainError
from console.outgoing import OutgoingRefused, user_request
from console.service_accounts import GUARD, service_account_user
from console.texts import Msg, msg
from incidents.models import IncidentStatus


def guard_user() -> User:
    """The guard's own account (console.service_accounts.GUARD), made by the migrations:
    looked up, never created, so nobody can sign in first under its name and become it.
    Missing (a database not migrated), it is a DomainError: the undo is refused with the
    reason and the commander paged."""
    user: User = service_account_user(GUARD)
    return user


def remedy(watch_id: int) -> GuardWatch:
    """Undo the change, or page when it cannot be undone. Outside any transaction: the
    undo request previews against Kubernetes, like a person's click."""
    watch = GuardWatch.objects.select_related("run", "incident__commander").get(pk=watch_id)
    if watch.outcome:
        return watch
    undo, why = None, None
    if watch.incident.status == IncidentStatus.RESOLVED:
        # People declared it over: the guard does not change the fleet from a closed
        # incident on its own (the regression may be the next failure); a person decides.
        why = msg("guard.remedy.resolved", incident=watch.incident_id)
    else:
        try:
            undo = _request_undo(watch)
        except (DomainError, PermissionDenied) as exc:
            # The refusal's own words, in English (an error's message has no id here).
            why = msg("guard.remedy.refused", detail=str(exc))
    if undo is None:
        return _page(watch, why or _not_undoable(watch))
    with transaction.atomic():
        locked = GuardWatch.objects.select_for_update().get(pk=watch.pk)
        if locked.outcome:
            return locked
        locked.outcome, locked.undo_run = GuardOutcome.UNDO_REQUESTED, undo
        locked.save(update_fields=["outcome", "undo_run", "updated_at"])
        words = {"label": label(locked), "run": undo.pk}
        if undo.status == ActionRunStatus.AWAITING_APPROVAL:
            reason = stored_msg((undo.texts or {}).get("approval_reason"), undo.approval_reason)
            line = msg("guard.remedy.undo_waits", reason=reason, **words)
        else:
            line = msg("guard.remedy.undo", **words)
        timeline(locked, line, undo_run=undo.pk)
    return locked


def _not_undoable(watch: GuardWatch) -> Msg:
    if watch.run is not None:
        return msg("guard.remedy.not_undoable", kind=watch.run.kind)
    return msg("guard.remedy.no_revision")


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


def _page(watch: GuardWatch, why: Msg) -> GuardWatch:
    commander = watch.incident.commander
    words = {
        "label": label(watch),
        "reason": stored_msg((watch.texts or {}).get("verdict_reason"), watch.verdict_reason),
        "why": why,
        "incident": watch.incident_id,
    }
    if commander is not None:
        text = msg("guard.remedy.page", commander=commander.get_username(), **words)
    else:
        text = msg("guard.remedy.page_nobody", **words)
    # The webhook gets English: it has no reader whose language the console knows.
    delivered = _deliver(text.english)
    with transaction.atomic():
        locked = GuardWatch.objects.select_for_update().get(pk=watch.pk)
        if locked.outcome:
            return locked
        locked.outcome = GuardOutcome.PAGED
        locked.save(update_fields=["outcome", "updated_at"])
        timeline(locked, text + delivered if delivered else text, paged=True)
    return locked


def _deliver(text: str) -> Msg | None:
    """POST {"text": ...} to GUARD_PAGE_WEBHOOK_URL (Slack-compatible), when set; what
    became of it, for the timeline (None: no webhook)."""
    url = settings.GUARD_PAGE_WEBHOOK_URL
    if not url:
        return None
    timeout = float(settings.GUARD_PAGE_TIMEOUT_SECONDS)
    try:
        # Guarded like a notification target's URL (console/outgoing), with an overall
        # deadline: a slow webhook must not hold the guard's worker.
        response = user_request("POST", url, json={"text": text}, deadline=timeout)
    except OutgoingRefused as exc:
        return msg("guard.page.refused", detail=str(exc))
    except requests.RequestException as exc:
        return msg("guard.page.failed", error=type(exc).__name__)
    if response.status_code >= 300:
        return msg("guard.page.answered", status=response.status_code)
    return msg("guard.page.sent")
