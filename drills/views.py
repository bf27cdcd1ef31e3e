"""Drill pages: the plans and recent runs, one plan (start), one run (live card with the
stop button and the scorecard). Views authorise, call one service or selector, render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.errors import DomainError, page_message
from console.http import AuthedRequest
from console.texts import render as text_render
from console.web import console_view, denied, forbidden, refused
from drills import selectors, services
from drills.forms import DrillPlanForm
from drills.permissions import RUN_DRILL, VIEW_DRILLS
from runbooks.catalog import load_catalog
from runbooks.schema import Runbook

POLL_SECONDS = 2


def _can_run(request: AuthedRequest) -> bool:
    return request.user.has_perm(RUN_DRILL)


def runbook_drills_section(request: AuthedRequest, runbook: Runbook) -> dict[str, Any]:
    """The runbook page's drill section (DrillsConfig.ready() registers it with runbooks):
    the runbook's last passed drill, its last run and its plans. Three queries."""
    return {"drills": selectors.runbook_drill_summary(runbook=runbook.slug)}


def _list_page(request: AuthedRequest, form, status=200):
    context = {
        "plans": selectors.drill_plans(),
        "runs": selectors.drill_runs(limit=20),
        "form": form,
        "can_run": _can_run(request),
        "branches": {rb.slug: [b.id for b in rb.decision_tree] for rb in load_catalog().all()},
    }
    return render(request, "drills/list.html", context, status=status)


@require_http_methods(["GET", "POST"])
@console_view(VIEW_DRILLS)
def drill_list(request: AuthedRequest):
    if request.method == "GET":
        initial = {"runbook": request.GET.get("runbook", ""), "fault": request.GET.get("runbook")}
        return _list_page(request, DrillPlanForm(initial=initial))
    if not _can_run(request):
        return forbidden(request, _("Your role does not allow you to plan drills."))
    form = DrillPlanForm(request.POST)
    if not form.is_valid():
        return _list_page(request, form, status=400)
    try:
        plan = services.drill_plan_create(actor=request.user, **form.cleaned_data)
    except (PermissionDenied, DomainError) as exc:
        if (response := denied(request, exc)) is not None:
            return response
        form.add_error(None, page_message(exc))
        unavailable = isinstance(exc, DomainError) and exc.code == "unavailable"
        return _list_page(request, form, status=409 if unavailable else 400)
    messages.success(request, _("Planned: %(title)s.") % {"title": plan.title})
    return redirect("drills:drill-plan", plan_id=plan.pk)


@require_GET
@console_view(VIEW_DRILLS)
def drill_plan_page(request: AuthedRequest, plan_id: int):
    plan = selectors.drill_plan_get(plan_id=plan_id)
    if plan is None:
        raise Http404(f"Drill plan #{plan_id} does not exist.")
    context = {
        "plan": plan,
        "runs": selectors.drill_runs(plan_id=plan.pk),
        "can_run": _can_run(request),
    }
    return render(request, "drills/plan.html", context)


@require_POST
@console_view(VIEW_DRILLS)
def drill_plan_start(request: AuthedRequest, plan_id: int):
    try:
        run = services.drill_start(plan_id=plan_id, actor=request.user)
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=reverse("drills:drill-plan", args=[plan_id]))
    return redirect("drills:drill-run", run_id=run.pk)


def _run_context(request: AuthedRequest, run_id: int) -> dict:
    run = selectors.drill_run_get(run_id=run_id)
    if run is None:
        raise Http404(f"Drill run #{run_id} does not exist.")
    return {
        "run": run,
        "criteria": _criteria_shown(run),
        "can_run": _can_run(request),
        "poll_seconds": POLL_SECONDS,
    }


def _criteria_shown(run) -> list[dict]:
    """The scorecard's criteria with their titles in the viewer's language: from their
    parts (`title_msg`), or, for a scorecard stored before it had parts, worded again
    from the plan. The evidence is worded by the template (`evidence_msg`)."""
    plan = run.plan_snapshot or {}
    titles = {
        "detected": _("An alert opened the incident within %(seconds)s s")
        % {"seconds": plan.get("detect_within_seconds")},
        "acknowledged": _("Acknowledged within %(seconds)s s")
        % {"seconds": plan.get("acknowledge_within_seconds")},
        "runbook": _("The incident carries runbook %(runbook)s") % {"runbook": plan.get("runbook")},
        "branch": _("Diagnosis confirmed on branch %(branch)s")
        % {"branch": plan.get("expected_branch") or _("(any of the runbook)")},
        "fix_applied": _("A recommended fix ran and succeeded"),
        "recovered": _("Recovered (alert resolved) within %(seconds)s s")
        % {"seconds": plan.get("recover_within_seconds")},
        "no_undo": _("No action needed undoing"),
    }
    criteria = (run.scorecard or {}).get("criteria") or []
    return [
        {**c, "title": text_render(
            c.get("title_msg"), fallback=titles.get(c.get("id"), c.get("title", ""))
        )}
        for c in criteria
    ]  # fmt: skip


@require_GET
@console_view(VIEW_DRILLS)
def drill_run_page(request: AuthedRequest, run_id: int):
    return render(request, "drills/run.html", _run_context(request, run_id))


@require_GET
@console_view(VIEW_DRILLS)
def drill_run_card(request: AuthedRequest, run_id: int):
    return render(request, "drills/_run_card.html", _run_context(request, run_id))


@require_POST
@console_view(VIEW_DRILLS)
def drill_run_stop(request: AuthedRequest, run_id: int):
    try:
        services.drill_stop(
            run_id=run_id, actor=request.user, reason=request.POST.get("reason", "")
        )
    except (PermissionDenied, DomainError) as exc:
        if (response := denied(request, exc)) is not None:
            return response
        # E.g. it had already ended: the card below shows how the run stands now.
        messages.error(request, page_message(exc))
    if request.htmx:
        return render(request, "drills/_run_card.html", _run_context(request, run_id))
    return redirect("drills:drill-run", run_id=run_id)
