"""Every write to action runs made on a person's behalf: request, approve or reject (one
decision), cancel, undo; the status moves each may make are in transitions.py. The
read-only preview (and the approval decision, made again here at every request) lives in
actions/preview.py; the worker's side in actions/execution.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from actions import policy
from actions.audit import run_record
from actions.dispatch import ACTION_RUN_EXECUTE, task_send
from actions.kinds import ActionError, Snapshot, kind_for, said
from actions.models import ActionRun, ActionRunStatus
from actions.permissions import REQUEST_ACTION
from actions.preview import (
    BUSY,
    Preview,
    action_run_preview,
    busy_params,
    busy_run,
    domain_error,
    incident_for,
    refusal,
    run_status_word,
)
from actions.transitions import check_move
from console.errors import DomainError, NotAllowed
from console.permissions import require
from console.texts import Msg, msg
from incidents.models import IncidentStatus
from incidents.permissions import ACKNOWLEDGE
from incidents.services import incident_acknowledge

__all__ = ["Preview", "action_run_preview"]  # re-exported: the pages and API preview here

KEY_RE = re.compile(r"[A-Za-z0-9_.:-]{8,100}")
# "Your role does not allow you to request actions." in the page's language.
REQUEST_ACTIONS = gettext_lazy("request actions")
NOTE_MAX = 500


def _check_key(key: str) -> str:
    key = (key or "").strip()
    if not KEY_RE.fullmatch(key):
        raise DomainError(
            "idempotency_key: 8 to 100 characters of letters, digits and _.:- "
            "(the console sends a fresh one with each confirmation).",
            code="invalid",
        )
    return key


def _replay(actor: User, key: str, kind: str, params: dict[str, Any]) -> ActionRun | None:
    """The run this key already made, if any (a double click or a retried API call)."""
    run = ActionRun.objects.filter(requested_by=actor, idempotency_key=key).first()
    if run is None:
        return None
    if run.kind != kind or run.params != params:
        raise DomainError(
            gettext_noop(
                "idempotency_key was already used for run #%(id)s (%(kind)s) with other "
                "parameters; send a new key for a new request."
            ),
            code="conflict",
            params={"id": run.pk, "kind": run.kind},
        )
    return run


def action_run_request(
    *,
    incident_id: int,
    actor: User,
    kind: str,
    params: dict[str, Any],
    idempotency_key: str,
    runbook: str = "",
    undo_of: ActionRun | None = None,
) -> tuple[ActionRun, bool]:
    """Ask for a run. Returns (run, created): created is False when the same person sends
    the same key again and gets the run that key made (the API answers 200, not 201).
    Queued at once (and enqueued when the transaction commits) unless the policy wants a
    second person's approval."""
    require(actor, REQUEST_ACTION, REQUEST_ACTIONS)
    key = _check_key(idempotency_key)
    if ActionRun.objects.filter(requested_by=actor, idempotency_key=key).exists():
        try:  # a repeat: answer the run it made, without asking Kubernetes again
            action = kind_for(kind)
            existing = _replay(actor, key, action.name, action.clean(dict(params or {})))
        except ActionError as exc:
            raise domain_error(exc) from exc
        if existing is not None:
            return existing, False
    incident = incident_for(incident_id)
    preview = action_run_preview(
        incident_id=incident_id, actor=actor, kind=kind, params=params, incident=incident
    )
    if incident.status == IncidentStatus.RESOLVED:
        raise DomainError(
            gettext_noop(
                "Incident #%(id)s is resolved; reopen it before changing the fleet from it."
            ),
            code="invalid_state",
            params={"id": incident.pk},
        )
    if preview.busy_with is not None:
        # The run keeping the target busy may be this very request's twin (a double click
        # that committed while this one was previewing): answer it, not "busy".
        existing = _replay(actor, key, preview.kind, preview.params)
        if existing is not None:
            return existing, False
        raise DomainError(BUSY, code="busy", params=busy_params(preview.busy_with))
    now = timezone.now()
    reason = said(preview.approval_reason_msg, preview.approval_reason)
    try:
        with transaction.atomic():
            run = ActionRun.objects.create(
                incident=incident,
                kind=preview.kind,
                target=preview.target,
                params=preview.params,
                idempotency_key=key,
                status=ActionRunStatus.AWAITING_APPROVAL
                if preview.requires_approval
                else ActionRunStatus.QUEUED,
                requested_by=actor,
                requested_at=now,
                requires_approval=preview.requires_approval,
                approval_reason=preview.approval_reason[:300],
                texts={"approval_reason": reason.stored} if preview.requires_approval else None,
                queued_at=None if preview.requires_approval else now,
                preview=preview.as_dict(),
                undo_of=undo_of,
                runbook=runbook[:100],
            )
            message = _requested(run, preview, undo_of)
            if preview.requires_approval:
                message += msg("actions.run.needs_approval", reason=reason)
            run_record(run, message=message, actor=actor, payload={"params": run.params})
            if not preview.requires_approval:
                _enqueue_on_commit(run)
            if incident.status == IncidentStatus.TRIGGERED and actor.has_perm(ACKNOWLEDGE):
                # Reaching for a fix is engaging with the incident: it counts as the
                # acknowledgement (so MTTA measures the first human response).
                incident_acknowledge(incident_id=incident.pk, actor=actor)
    except IntegrityError:
        # Lost a race: the same key from a parallel click, or another run took the target.
        existing = _replay(actor, key, preview.kind, preview.params)
        if existing is not None:
            return existing, False
        busy = busy_run(preview.target)
        if busy is not None:
            raise DomainError(BUSY, code="busy", params=busy_params(busy)) from None
        raise
    return run, True


def _requested(run: ActionRun, preview: Preview, undo_of: ActionRun | None) -> Msg:
    plan = preview.plan or {}
    summary = (
        said(plan.get("summary_msg"), plan["summary"])
        if plan.get("summary")
        else msg("actions.run.params", kind=run.kind, params=str(run.params))
    )
    if undo_of is not None:
        return msg("actions.run.undo_requested", summary=summary, undo_of=undo_of.pk)
    return msg("actions.run.requested", summary=summary)


def _enqueue_on_commit(run: ActionRun) -> None:
    run_id = run.pk
    transaction.on_commit(lambda: task_send(ACTION_RUN_EXECUTE, run_id))


def _locked(run_id: int) -> ActionRun:
    run = ActionRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise DomainError(f"Action run #{run_id} does not exist.", code="not_found")
    return run


def _note(note: str) -> str:
    note = " ".join((note or "").split())
    if len(note) > NOTE_MAX:
        raise DomainError(
            gettext_noop("The note is longer than %(limit)s characters."),
            code="invalid",
            params={"limit": NOTE_MAX},
        )
    return note


@dataclass(frozen=True)
class Verdict:
    """What an approval or a rejection does; the rest of a decision is the same."""

    to: str  # the status it moves the run to
    said: str  # the audit and timeline message's id ("<id>_note" with a note)
    stamp: str  # the timestamp field it sets to the decision's time
    enqueue: bool  # hand the run to the worker when the transaction commits

    def message(self, note: str) -> Msg:
        return msg(f"{self.said}_note", note=note) if note else msg(self.said)


VERDICTS = {
    "approve": Verdict(ActionRunStatus.QUEUED, "actions.run.approved", "queued_at", enqueue=True),
    "reject": Verdict(
        ActionRunStatus.REJECTED, "actions.run.rejected", "finished_at", enqueue=False
    ),
}


@transaction.atomic
def action_run_decide(*, run_id: int, actor: User, verdict: str, note: str = "") -> ActionRun:
    """A second person approves or rejects a run awaiting approval."""
    decision = VERDICTS.get(verdict)
    if decision is None:
        raise DomainError(f"verdict: one of {', '.join(VERDICTS)}.", code="invalid_params")
    run = _locked(run_id)
    ok, why = policy.can_decide(actor, run)
    if not ok:
        raise NotAllowed(why)  # policy marks its reasons with gettext_noop
    check_move(run, decision.to, hint=gettext_lazy("it is not awaiting approval"))
    note = _note(note)
    run.decided_by, run.decided_at, run.decision_note = actor, timezone.now(), note
    setattr(run, decision.stamp, run.decided_at)
    run_record(
        run,
        to=decision.to,
        actor=actor,
        message=decision.message(note),
        fields=("decided_by", "decided_at", "decision_note", decision.stamp),
    )
    if decision.enqueue:
        _enqueue_on_commit(run)
    return run


def action_run_approve(*, run_id: int, actor: User, note: str = "") -> ActionRun:
    return action_run_decide(run_id=run_id, actor=actor, verdict="approve", note=note)


def action_run_reject(*, run_id: int, actor: User, note: str = "") -> ActionRun:
    return action_run_decide(run_id=run_id, actor=actor, verdict="reject", note=note)


@transaction.atomic
def action_run_cancel(*, run_id: int, actor: User, note: str = "") -> ActionRun:
    """Withdraw a run that has not started. A running write is not interrupted: stopping
    half way would leave the object in a state nobody planned."""
    run = _locked(run_id)
    if not policy.can_cancel(actor, run):
        raise NotAllowed(gettext_noop("Only the requester or a commander can cancel a run."))
    check_move(
        run,
        ActionRunStatus.CANCELLED,
        hint=gettext_lazy("only a run that has not started can be cancelled"),
    )
    note = _note(note)
    run.finished_at = timezone.now()
    run_record(
        run,
        to=ActionRunStatus.CANCELLED,
        actor=actor,
        message=msg("actions.run.cancelled_note", note=note)
        if note
        else msg("actions.run.cancelled"),
        fields=("finished_at",),
    )
    return run


def action_run_undo(*, run_id: int, actor: User, idempotency_key: str) -> ActionRun:
    """Request a new run of the same kind that restores the state saved before `run`."""
    require(actor, REQUEST_ACTION, REQUEST_ACTIONS)
    run = ActionRun.objects.filter(pk=run_id).first()
    if run is None:
        raise DomainError(f"Action run #{run_id} does not exist.", code="not_found")
    if run.status != ActionRunStatus.SUCCEEDED or not run.before:
        raise DomainError(
            gettext_noop("Run #%(id)s is %(status)s; only a run that succeeded can be undone."),
            code="invalid_state",
            params={"id": run.pk, "status": run_status_word(run.status)},
        )
    existing = ActionRun.objects.filter(requested_by=actor, idempotency_key=idempotency_key).first()
    if existing is not None and existing.undo_of_id == run.pk:
        return existing
    done = run.blocking_undo()
    if done is not None:
        raise DomainError(
            gettext_noop("Run #%(id)s is already being undone or was undone by run #%(undo)s."),
            code="invalid_state",
            params={"id": run.pk, "undo": done.pk},
        )
    try:
        params = kind_for(run.kind).undo_params(run.params, Snapshot.from_dict(run.before))
    except ActionError as exc:
        raise refusal(exc.said, "invalid_state") from exc
    undo, _created = action_run_request(
        incident_id=run.incident_id,
        actor=actor,
        kind=run.kind,
        params=params,
        idempotency_key=idempotency_key,
        runbook=run.runbook,
        undo_of=run,
    )
    return undo
