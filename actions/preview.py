"""What a run would do now, before anyone asks for it: the Kubernetes read, plan and
server dry run, whether the target is busy, and whether (and why) a second person must
approve. The request service computes it again on the server; nothing the client saw of
a preview is trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy, gettext_noop

from actions import (
    policy,
    texts,  # noqa: F401  (registry: the ids below)
)
from actions.k8s import kube_api
from actions.kinds import (
    KINDS,
    ActionError,
    Conflict,
    Context,
    NotConfigured,
    ParamError,
    Plan,
    Snapshot,
    TargetNotFound,
    Transient,
    kind_for,
)
from actions.models import ACTIVE_STATUSES, ActionRun, run_status_word
from actions.permissions import REQUEST_ACTION
from actions.revisions import CONFIGMAP_KINDS, config_seen, revision_lookup
from console.errors import DomainError
from console.permissions import require
from console.texts import Msg, StoredParts, msg, render
from incidents.models import Incident
from incidents.selectors import incident_get


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
    approval_reason: str  # English, at most policy.REASON_MAX characters
    busy_with: ActionRun | None
    # The texts above as parts (console/texts/), worded in the reader's language.
    dry_run_msg: StoredParts | None = None
    error_msg: StoredParts | None = None
    approval_reason_msg: StoredParts | None = None

    def as_dict(self) -> dict:
        return {
            "current": self.current,
            "plan": self.plan,
            "dry_run": self.dry_run,
            "dry_run_msg": self.dry_run_msg,
            "error": self.error,
            "error_msg": self.error_msg,
        }


def _words(said: Msg) -> str:
    return render(said.stored, fallback=said.english)


_worded = lazy(_words, str)


def refusal(said: Msg, code: str) -> DomainError:
    """A refusal that is English for the API and the log and in the page's language on a
    page: the parameter is worded when the refusal is (DomainError keeps lazy params)."""
    return DomainError("%(detail)s", code=code, params={"detail": _worded(said)})


def domain_error(exc: ActionError) -> DomainError:
    if isinstance(exc, TargetNotFound):
        return refusal(exc.said, "target_not_found")
    if isinstance(exc, ParamError):  # its message starts with the field's name
        return refusal(exc.said, "invalid_params")
    return refusal(exc.said, "refused")


def incident_for(incident_id: int) -> Incident:
    return incident_get(incident_id=incident_id)


def run_context(incident: Incident) -> Context:
    return Context(incident_started_at=incident.started_at, revision_lookup=revision_lookup)


def busy_run(target: str) -> ActionRun | None:
    return (
        ActionRun.objects.filter(target=target, status__in=ACTIVE_STATUSES)
        .select_related("requested_by")
        .first()
    )


BUSY = gettext_noop(
    "%(target)s already has an active run: #%(id)s %(kind)s, %(status)s, requested by "
    "%(user)s. Wait for it to finish, or cancel it, before asking for another change."
)


def busy_params(run: ActionRun) -> dict:
    """BUSY's params; the status a lazy label, English where the message is (the API)."""
    return {
        "target": run.target,
        "id": run.pk,
        "kind": run.kind,
        "status": run_status_word(run.status),
        "user": run.requested_by.get_username(),
    }


def _plan_now(action, clean: dict, incident: Incident) -> tuple[dict, dict, Msg]:
    """Read, plan and dry-run; an object that changes under the preview is read again."""
    api = kube_api()
    for attempt in range(3):
        snap = action.read(api, clean)
        if action.name in CONFIGMAP_KINDS:
            config_seen(api, clean, reason=f"seen at preview of {action.name}", snap=snap)
        planned = action.plan(snap, clean, run_context(incident))
        try:
            dry_run = action.dry_run(api, clean, snap, planned)
        except Conflict:
            if attempt == 2:
                raise
            continue
        return snap.as_dict(), planned.as_dict(), dry_run
    raise AssertionError("unreachable")


def action_run_preview(
    *, incident_id: int, actor: User, kind: str, params: dict, incident: Incident | None = None
) -> Preview:
    """What a run would do now: current state -> desired, the server's dry run, whether it
    needs approval and whether the target is busy. Reads Kubernetes (with timeouts); a
    guardrail, a missing object or a refused dry run raises DomainError; an unreachable API
    gives a preview with `error` set, so a request can still be queued for the worker."""
    require(actor, REQUEST_ACTION, gettext_lazy("request actions"))
    incident = incident or incident_for(incident_id)
    try:
        action = kind_for(kind)
        clean = action.clean(dict(params or {}))
    except ActionError as exc:
        raise domain_error(exc) from exc
    target = action.target(clean)
    current = plan = None
    dry_run: Msg | None = None
    error: Msg | None = None
    try:
        current, plan, dry_run = _plan_now(action, clean, incident)
    except Transient as exc:
        error = msg("actions.preview.no_answer", detail=exc.said)
    except NotConfigured as exc:
        error = exc.said
    except ActionError as exc:
        raise domain_error(exc) from exc
    # After the read: what the run changes (and how far) decides, not only the incident.
    needs, why = policy.approval_required(
        kind=action,
        kinds=KINDS,
        incident=incident,
        params=clean,
        current=Snapshot.from_dict(current) if current else None,
        plan=Plan.from_dict(plan) if plan else None,
    )
    return Preview(
        kind=action.name,
        params=clean,
        target=target,
        current=current,
        plan=plan,
        dry_run=dry_run.english if dry_run else "",
        error=error.english if error else "",
        requires_approval=needs,
        approval_reason=policy.reason_english(why),
        busy_with=busy_run(target),
        dry_run_msg=dry_run.stored if dry_run else None,
        error_msg=error.stored if error else None,
        approval_reason_msg=why.stored if why else None,
    )
