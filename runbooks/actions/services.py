"""Every write to action runs made on a person's behalf: request (with preview), approve,
reject, cancel, undo. The worker's side lives in runbooks/actions/execution.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from console.errors import DomainError
from incidents.models import Incident, IncidentStatus
from incidents.services import incident_acknowledge
from runbooks.actions import policy
from runbooks.actions.audit import run_record
from runbooks.actions.kinds import (
    KINDS,
    ActionError,
    Conflict,
    Context,
    NotConfigured,
    ParamError,
    Snapshot,
    TargetNotFound,
    Transient,
    kind_for,
)
from runbooks.actions.models import ACTIVE_STATUSES, ActionRun, ActionRunStatus
from runbooks.actions.revisions import CONFIGMAP_KINDS, config_seen, revision_lookup

ACKNOWLEDGE = "incidents.acknowledge_incident"
KEY_RE = re.compile(r"[A-Za-z0-9_.:-]{8,100}")
NOTE_MAX = 500


@dataclass(frozen=True)
class Preview:
    kind: str
    params: dict
    target: str
    current: dict | None  # Snapshot.as_dict()
    plan: dict | None  # Plan.as_dict()
    dry_run: str
    error: str  # why there is no plan (Kubernetes unreachable); "" when there is one
    requires_approval: bool
    approval_reason: str
    busy_with: ActionRun | None

    def as_dict(self) -> dict:
        return {
            "current": self.current,
            "plan": self.plan,
            "dry_run": self.dry_run,
            "error": self.error,
        }


def _domain(exc: ActionError) -> DomainError:
    if isinstance(exc, TargetNotFound):
        return DomainError(exc.message, code="target_not_found")
    if isinstance(exc, ParamError):  # its message starts with the field's name
        return DomainError(exc.message, code="invalid_params")
    return DomainError(exc.message, code="refused")


def _incident(incident_id: int) -> Incident:
    incident = Incident.objects.filter(pk=incident_id).first()
    if incident is None:
        raise DomainError(f"Incident #{incident_id} does not exist.", code="not_found")
    return incident


def _context(incident: Incident) -> Context:
    return Context(incident_started_at=incident.started_at, revision_lookup=revision_lookup)


def _busy(target: str) -> ActionRun | None:
    return (
        ActionRun.objects.filter(target=target, status__in=ACTIVE_STATUSES)
        .select_related("requested_by")
        .first()
    )


def _busy_message(run: ActionRun) -> str:
    return (
        f"{run.target} already has an active run: #{run.pk} {run.kind}, "
        f"{run.get_status_display().lower()}, requested by {run.requested_by.get_username()}. "
        "Wait for it to finish, or cancel it, before asking for another change."
    )


def _plan_now(action, clean: dict, incident: Incident) -> tuple[dict, dict, str]:
    """Read, plan and dry-run; an object that changes under the preview is read again."""
    from runbooks.actions.k8s import kube_api

    api = kube_api()
    for attempt in range(3):
        snap = action.read(api, clean)
        if action.name in CONFIGMAP_KINDS:
            config_seen(api, clean, reason=f"seen at preview of {action.name}", snap=snap)
        planned = action.plan(snap, clean, _context(incident))
        try:
            dry_run = action.dry_run(api, clean, snap, planned)
        except Conflict:
            if attempt == 2:
                raise
            continue
        return snap.as_dict(), planned.as_dict(), dry_run
    raise AssertionError("unreachable")


def action_run_preview(
    *, incident_id: int, actor, kind: str, params: dict, incident: Incident | None = None
) -> Preview:
    """What a run would do now: current state -> desired, the server's dry run, whether it
    needs approval and whether the target is busy. Reads Kubernetes (with timeouts); a
    guardrail, a missing object or a refused dry run raises DomainError; an unreachable API
    gives a preview with `error` set, so a request can still be queued for the worker."""
    policy.require(actor, policy.REQUEST, "request actions")
    incident = incident or _incident(incident_id)
    try:
        action = kind_for(kind)
        clean = action.clean(dict(params or {}))
    except ActionError as exc:
        raise _domain(exc) from exc
    target = action.target(clean)
    needs, why = policy.approval_required(kind=action, kinds=KINDS, severity=incident.severity)
    current = plan = None
    dry_run = error = ""
    try:
        current, plan, dry_run = _plan_now(action, clean, incident)
    except Transient as exc:
        error = f"Kubernetes did not answer ({exc.message}); the worker will retry."
    except NotConfigured as exc:
        error = exc.message
    except ActionError as exc:
        raise _domain(exc) from exc
    return Preview(
        kind=action.name,
        params=clean,
        target=target,
        current=current,
        plan=plan,
        dry_run=dry_run,
        error=error,
        requires_approval=needs,
        approval_reason=why,
        busy_with=_busy(target),
    )


def _check_key(key: str) -> str:
    key = (key or "").strip()
    if not KEY_RE.fullmatch(key):
        raise DomainError(
            "idempotency_key: 8 to 100 characters of letters, digits and _.:- "
            "(the console sends a fresh one with each confirmation).",
            code="invalid",
        )
    return key


def _replay(actor, key: str, kind: str, params: dict) -> ActionRun | None:
    """The run this key already made, if any (a double click or a retried API call)."""
    run = ActionRun.objects.filter(requested_by=actor, idempotency_key=key).first()
    if run is None:
        return None
    if run.kind != kind or run.params != params:
        raise DomainError(
            f"idempotency_key was already used for run #{run.pk} ({run.kind}) with other "
            "parameters; send a new key for a new request.",
            code="conflict",
        )
    return run


def action_run_request(
    *,
    incident_id: int,
    actor,
    kind: str,
    params: dict,
    idempotency_key: str,
    runbook: str = "",
    undo_of: ActionRun | None = None,
) -> ActionRun:
    """Ask for a run. Returns the existing run when the same person sends the same key
    again. Queued at once (and enqueued when the transaction commits) unless the policy
    wants a second person's approval."""
    policy.require(actor, policy.REQUEST, "request actions")
    key = _check_key(idempotency_key)
    if ActionRun.objects.filter(requested_by=actor, idempotency_key=key).exists():
        try:  # a repeat: answer the run it made, without asking Kubernetes again
            action = kind_for(kind)
            existing = _replay(actor, key, action.name, action.clean(dict(params or {})))
        except ActionError as exc:
            raise _domain(exc) from exc
        if existing is not None:
            return existing
    incident = _incident(incident_id)
    preview = action_run_preview(
        incident_id=incident_id, actor=actor, kind=kind, params=params, incident=incident
    )
    if incident.status == IncidentStatus.RESOLVED:
        raise DomainError(
            f"Incident #{incident.pk} is resolved; reopen it before changing the fleet from it.",
            code="invalid_state",
        )
    if preview.busy_with is not None:
        # The run keeping the target busy may be this very request's twin (a double click
        # that committed while this one was previewing): answer it, not "busy".
        existing = _replay(actor, key, preview.kind, preview.params)
        if existing is not None:
            return existing
        raise DomainError(_busy_message(preview.busy_with), code="busy")
    now = timezone.now()
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
                queued_at=None if preview.requires_approval else now,
                preview=preview.as_dict(),
                undo_of=undo_of,
                runbook=runbook[:100],
            )
            summary = (preview.plan or {}).get("summary") or f"{run.kind} {run.params}"
            verb = "Undo requested" if undo_of else "Requested"
            message = f"{verb}: {summary}" + (f" (undoes #{undo_of.pk})" if undo_of else "")
            if preview.requires_approval:
                message += f". Needs approval: {preview.approval_reason}"
            run_record(run, message=message, actor=actor, payload={"params": run.params})
            if not preview.requires_approval:
                _enqueue_on_commit(run)
            if incident.status == IncidentStatus.TRIGGERED and actor.has_perm(ACKNOWLEDGE):
                # Reaching for a fix is engaging with the incident: it counts as the
                # acknowledgement (so MTTA measures the first human response).
                incident_acknowledge(incident_id=incident.pk, actor=actor)
            run.just_created = True  # the API answers 201 rather than 200 (a repeat)
    except IntegrityError:
        # Lost a race: the same key from a parallel click, or another run took the target.
        existing = _replay(actor, key, preview.kind, preview.params)
        if existing is not None:
            return existing
        busy = _busy(preview.target)
        if busy is not None:
            raise DomainError(_busy_message(busy), code="busy") from None
        raise
    return run


def _enqueue_on_commit(run: ActionRun) -> None:
    from runbooks.tasks import action_run_execute_task

    run_id = run.pk
    transaction.on_commit(lambda: action_run_execute_task.delay(run_id))


def _locked(run_id: int) -> ActionRun:
    run = ActionRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise DomainError(f"Action run #{run_id} does not exist.", code="not_found")
    return run


def _note(note: str) -> str:
    note = " ".join((note or "").split())
    if len(note) > NOTE_MAX:
        raise DomainError(f"The note is longer than {NOTE_MAX} characters.", code="invalid")
    return note


@transaction.atomic
def action_run_approve(*, run_id: int, actor, note: str = "") -> ActionRun:
    run = _locked(run_id)
    ok, why = policy.can_decide(actor, run)
    if not ok:
        raise PermissionDenied(why)
    if run.status != ActionRunStatus.AWAITING_APPROVAL:
        raise DomainError(
            f"Run #{run.pk} is {run.get_status_display().lower()}, not awaiting approval.",
            code="invalid_state",
        )
    note = _note(note)
    run.decided_by, run.decided_at, run.decision_note = actor, timezone.now(), note
    run.queued_at = run.decided_at
    run_record(
        run,
        to=ActionRunStatus.QUEUED,
        actor=actor,
        message="Approved" + (f": {note}" if note else ""),
        fields=("decided_by", "decided_at", "decision_note", "queued_at"),
    )
    _enqueue_on_commit(run)
    return run


@transaction.atomic
def action_run_reject(*, run_id: int, actor, note: str = "") -> ActionRun:
    run = _locked(run_id)
    ok, why = policy.can_decide(actor, run)
    if not ok:
        raise PermissionDenied(why)
    if run.status != ActionRunStatus.AWAITING_APPROVAL:
        raise DomainError(
            f"Run #{run.pk} is {run.get_status_display().lower()}, not awaiting approval.",
            code="invalid_state",
        )
    note = _note(note)
    run.decided_by, run.decided_at, run.decision_note = actor, timezone.now(), note
    run.finished_at = run.decided_at
    run_record(
        run,
        to=ActionRunStatus.REJECTED,
        actor=actor,
        message="Rejected" + (f": {note}" if note else ""),
        fields=("decided_by", "decided_at", "decision_note", "finished_at"),
    )
    return run


@transaction.atomic
def action_run_cancel(*, run_id: int, actor, note: str = "") -> ActionRun:
    """Withdraw a run that has not started. A running write is not interrupted: stopping
    half way would leave the object in a state nobody planned."""
    run = _locked(run_id)
    if not policy.can_cancel(actor, run):
        raise PermissionDenied("Only the requester or a commander can cancel a run.")
    if run.status not in (ActionRunStatus.AWAITING_APPROVAL, ActionRunStatus.QUEUED):
        raise DomainError(
            f"Run #{run.pk} is {run.get_status_display().lower()}; only a run that has not "
            "started can be cancelled.",
            code="invalid_state",
        )
    note = _note(note)
    run.finished_at = timezone.now()
    run_record(
        run,
        to=ActionRunStatus.CANCELLED,
        actor=actor,
        message="Cancelled" + (f": {note}" if note else ""),
        fields=("finished_at",),
    )
    return run


def action_run_undo(*, run_id: int, actor, idempotency_key: str) -> ActionRun:
    """Request a new run of the same kind that restores the state saved before `run`."""
    policy.require(actor, policy.REQUEST, "request actions")
    run = ActionRun.objects.filter(pk=run_id).first()
    if run is None:
        raise DomainError(f"Action run #{run_id} does not exist.", code="not_found")
    if run.status != ActionRunStatus.SUCCEEDED or not run.before:
        raise DomainError(
            f"Run #{run.pk} is {run.get_status_display().lower()}; only a run that succeeded "
            "can be undone.",
            code="invalid_state",
        )
    existing = ActionRun.objects.filter(requested_by=actor, idempotency_key=idempotency_key).first()
    if existing is not None and existing.undo_of_id == run.pk:
        return existing
    done = run.blocking_undo()
    if done is not None:
        raise DomainError(
            f"Run #{run.pk} is already being undone or was undone by run #{done.pk}.",
            code="invalid_state",
        )
    try:
        params = kind_for(run.kind).undo_params(run.params, Snapshot.from_dict(run.before))
    except ActionError as exc:
        raise DomainError(exc.message, code="invalid_state") from exc
    return action_run_request(
        incident_id=run.incident_id,
        actor=actor,
        kind=run.kind,
        params=params,
        idempotency_key=idempotency_key,
        runbook=run.runbook,
        undo_of=run,
    )
