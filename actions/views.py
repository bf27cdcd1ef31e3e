"""Action pages and the htmx partials the incident page composes: the runs panel (each
active run polls its own card until it ends), the confirmation dialog with the preview,
and the audit list. Views authorise, call one service or selector, and render.
"""

from __future__ import annotations

import json
import uuid

from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, trigger_client_event
from django_htmx.http import retarget as retarget_to

from actions import access, policy, selectors, services
from actions.forms import coerce_params, recommended_action
from actions.guard.judge import guard_signal_rows
from actions.kinds import kind_for
from actions.models import ActionRunStatus
from actions.permissions import APPROVE_ACTION, REQUEST_ACTION, VIEW_ACTIONS
from actions.serializers import KIND_CHOICES
from console.errors import DomainError, page_message
from console.http import AuthedRequest
from console.web import CHANGED_EVENT, FLASH_CLEARED, console_view, denied, flash, refused
from incidents.models import Incident
from incidents.selectors import incident_get

RUNS_PER_PAGE = 50
POLL_SECONDS = 2  # a run's card polls this often while it is active
GUARD_POLL_SECONDS = 5  # and this often while its guard watches the signals


def _run(run_id: int):
    run = selectors.action_run_get(run_id=run_id)
    if run is None:
        raise Http404(f"Action run #{run_id} does not exist.")
    return run


def _card_context(request: AuthedRequest, run) -> dict:
    can_decide, decide_why = policy.can_decide(request.user, run)
    guard = selectors.run_guard(run)
    return {
        "run": run,
        "poll_seconds": POLL_SECONDS,
        "guard": guard,
        "guard_signals": guard_signal_rows(guard) if guard else [],
        # Watching, or breached with the undo/page not yet made: news is coming.
        "guard_polls": bool(guard and (guard.is_watching or not guard.outcome)),
        "guard_poll_seconds": GUARD_POLL_SECONDS,
        "can_decide": can_decide and run.status == ActionRunStatus.AWAITING_APPROVAL,
        "decide_why": _(decide_why) if decide_why else "",  # marked in policy.can_decide
        "can_cancel": policy.can_cancel(request.user, run)
        and run.status in (ActionRunStatus.AWAITING_APPROVAL, ActionRunStatus.QUEUED),
        "can_undo": request.user.has_perm(REQUEST_ACTION)
        and run.status == ActionRunStatus.SUCCEEDED
        and bool(run.before)
        and kind_for(run.kind).undoable
        and run.blocking_undo() is None,
        "undo_key": uuid.uuid4().hex,
    }


def _panel(request: AuthedRequest, incident: Incident, *, retarget: bool = False) -> HttpResponse:
    runs = selectors.incident_action_runs(incident_id=incident.pk)
    context = {
        "incident": incident,
        "cards": [_card_context(request, r) for r in runs],
        "can_request": request.user.has_perm(REQUEST_ACTION),
        # Only a result someone already paid for: a poll must not wait on Kubernetes.
        "access": cache.get(access.CACHE_KEY),
    }
    response = render(request, "actions/_panel.html", context)
    if retarget:  # answering a form in the dialog: swap the panel, empty the dialog
        response = reswap(retarget_to(response, "#runbook-actions"), "innerHTML")
        response.write('<div id="action-dialog" hx-swap-oob="innerHTML"></div>')
        response.write(FLASH_CLEARED)
    return trigger_client_event(response, CHANGED_EVENT) if retarget else response


@require_GET
@console_view(VIEW_ACTIONS)
def incident_actions_partial(request: AuthedRequest, pk: int):
    return _panel(request, incident_get(incident_id=pk))


@require_GET
@console_view(VIEW_ACTIONS)
def run_card(request: AuthedRequest, run_id: int):
    run = _run(run_id)
    response = render(request, "actions/_card.html", _card_context(request, run))
    if not run.is_active:
        # The run just ended: the incident's timeline and header have news.
        trigger_client_event(response, CHANGED_EVENT)
    return response


def _dialog(
    request: AuthedRequest,
    incident,
    *,
    kind: str,
    params: dict,
    title: str,
    why: str = "",
    error="",
):
    preview = None
    if not error:
        try:
            preview = services.action_run_preview(
                incident_id=incident.pk, actor=request.user, kind=kind, params=params
            )
        except DomainError as exc:
            error = page_message(exc)
    context = {
        "incident": incident,
        "kind": kind,
        "title": title,
        "why": why,
        "params": params,
        "params_json": json.dumps(params),
        "preview": preview,
        "error": error,
        # One key per rendered confirmation: a double click on "Run" sends it twice and
        # gets one run; editing the parameters renders a new dialog with a new key.
        "idempotency_key": uuid.uuid4().hex,
        "revisions": selectors.config_revisions(
            namespace=str(params.get("namespace") or "llm-serving"),
            name=str(params.get("configmap") or "vllm-router-config"),
        )
        if kind == "rollback_router_config"
        else [],
    }
    return render(request, "actions/_confirm.html", context)


@require_GET
@console_view(REQUEST_ACTION)
def action_confirm(request: AuthedRequest, pk: int):
    """The confirmation for one of the runbook's recommended actions, parameters filled
    from the incident's alert labels on the server (the client only says which one)."""
    incident = incident_get(incident_id=pk)
    try:
        item = recommended_action(incident, request.GET.get("action", ""))
    except DomainError as exc:
        return flash(request, page_message(exc), status=409)
    return _dialog(
        request,
        incident,
        kind=item["kind"],
        params=item["params"],
        title=item["title"],
        why=item["why"],
    )


@require_POST
@console_view(REQUEST_ACTION)
def action_confirm_update(request: AuthedRequest, pk: int):
    """Re-preview with the parameters the responder edited in the dialog."""
    incident = incident_get(incident_id=pk)
    kind = request.POST.get("kind", "")
    if kind not in KIND_CHOICES:
        return flash(
            request, _("Unknown action kind %(kind)s.") % {"kind": repr(kind[:40])}, status=409
        )
    params = coerce_params(request.POST)
    return _dialog(request, incident, kind=kind, params=params, title=request.POST.get("title", ""))


@require_POST
@console_view(REQUEST_ACTION)
def action_request(request: AuthedRequest, pk: int):
    incident = incident_get(incident_id=pk)
    kind = request.POST.get("kind", "")
    params = coerce_params(request.POST)
    try:
        run, _created = services.action_run_request(
            incident_id=incident.pk,
            actor=request.user,
            kind=kind,
            params=params,
            idempotency_key=request.POST.get("idempotency_key", ""),
            runbook=incident.runbook or "",
        )
    except (PermissionDenied, DomainError) as exc:
        if (response := denied(request, exc)) is not None:
            return response
        if not request.htmx:
            raise
        # Keep the dialog and everything typed in it; say what went wrong.
        return _dialog(
            request,
            incident,
            kind=kind,
            params=params,
            title=request.POST.get("title", ""),
            error=page_message(exc),
        )
    if not request.htmx:
        return redirect("actions:action-run", run_id=run.pk)
    return _panel(request, incident, retarget=True)


def _decide(request: AuthedRequest, run_id: int, call, **kwargs):
    try:
        call(run_id=run_id, actor=request.user, **kwargs)
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc)  # the card's buttons are htmx: the message is a flash
    run = _run(run_id)
    if not request.htmx:
        return redirect("actions:action-run", run_id=run.pk)
    response = render(request, "actions/_card.html", _card_context(request, run))
    return trigger_client_event(response, CHANGED_EVENT)


@require_POST
@console_view(APPROVE_ACTION)
def run_approve(request: AuthedRequest, run_id: int):
    return _decide(request, run_id, services.action_run_approve, note=request.POST.get("note", ""))


@require_POST
@console_view(APPROVE_ACTION)
def run_reject(request: AuthedRequest, run_id: int):
    return _decide(request, run_id, services.action_run_reject, note=request.POST.get("note", ""))


@require_POST
@console_view(REQUEST_ACTION)
def run_cancel(request: AuthedRequest, run_id: int):
    return _decide(request, run_id, services.action_run_cancel, note=request.POST.get("note", ""))


@require_POST
@console_view(REQUEST_ACTION)
def run_undo(request: AuthedRequest, run_id: int):
    try:
        undo = services.action_run_undo(
            run_id=run_id,
            actor=request.user,
            idempotency_key=request.POST.get("idempotency_key", ""),
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc)
    if not request.htmx:
        return redirect("actions:action-run", run_id=undo.pk)
    return _panel(request, incident_get(incident_id=undo.incident_id), retarget=True)


@require_GET
@console_view(VIEW_ACTIONS)
def action_list(request: AuthedRequest):
    filters = selectors.RunFilters.from_params(request.GET)
    page = Paginator(selectors.action_run_list(filters=filters), RUNS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "filters": filters,
        "page": page,
        "kinds": KIND_CHOICES,
        "statuses": [
            ("", _("All")),
            ("active", _("Active")),
            *ActionRunStatus.choices,
        ],
        "query": request.GET.urlencode(),
        "access": access.kubernetes_access(),
    }
    return render(request, "actions/list.html", context)


@require_GET
@console_view(VIEW_ACTIONS)
def action_run_page(request: AuthedRequest, run_id: int):
    run = _run(run_id)
    return render(request, "actions/run.html", _card_context(request, run))
