"""Runbook pages: the catalogue, the failure categories, one runbook, and the two htmx
partials the incident page composes (live triage, golden-signal charts).

`incidents` never imports this app: its detail template loads these
partials by URL. Views stay thin: authorise, call one read, shape it for the template.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import dateformat, formats, timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from console.errors import DomainError
from console.http import AuthedRequest
from console.web import CHANGED_EVENT, FLASH_CLEARED, console_view, refused
from incidents.models import Incident, TimelineEvent
from incidents.permissions import VIEW
from incidents.selectors import incident_get
from runbooks import services
from runbooks.auto_triage.queue import auto_triage_seen
from runbooks.catalog import load_catalog
from runbooks.charts import incident_charts
from runbooks.permissions import RESPOND
from runbooks.placeholders import fill_command, fill_params, missing
from runbooks.schema import Condition, Runbook
from runbooks.timeline_kinds import RUNBOOK_STEP
from runbooks.triage import NO_DATA, incident_alerts_firing_first, incident_labels, incident_triage


@dataclass(frozen=True)
class StepView:
    anchor: str  # the section's id suffix on the page
    key: str  # the step as services.runbook_step_check and its URL name it
    name: str | Promise  # lazy: read in the viewer's language when the page renders
    done: bool = False


# The stepper's names as the page shows them; the timeline keeps services' English words.
STEP_NAMES = services.RUNBOOK_STEP_LABELS

STEPS = tuple(
    StepView(anchor=key.replace("_", "-"), key=key, name=STEP_NAMES.get(key, name))
    for key, name in services.RUNBOOK_STEPS.items()
)


# --- shaping helpers ------------------------------------------------------------------
def condition_words(cond: Condition | None) -> str:
    """A branch's condition in words: check ids joined with and/or/not."""
    if cond is None:
        return _("otherwise (none of the branches above matched)")
    both = pgettext("decision tree condition", "and")
    either = pgettext("decision tree condition", "or")
    joiners = {"all": f" {both} ", "any": f" {either} "}

    def words(c: Condition, top: bool) -> str:
        if c.op == "check":
            return _("%(check)s is firing") % {"check": c.check}
        if c.op == "not":
            inner = c.args[0]
            if inner.op == "check":
                return _("%(check)s is not firing") % {"check": inner.check}
            return _("not (%(condition)s)") % {"condition": words(inner, False)}
        text = joiners.get(c.op, joiners["any"]).join(words(a, False) for a in c.args)
        return text if top else f"({text})"

    return words(cond, True)


@dataclass(frozen=True)
class BranchView:
    id: str
    when: str
    diagnosis: str
    actions: tuple[str, ...]  # titles of the emergency actions, else the action kinds
    matched: bool


def _branches(runbook: Runbook, matched_id: str = "") -> list[BranchView]:
    titles = {a.kind: a.title for a in runbook.emergency_actions}
    return [
        BranchView(
            id=b.id,
            when=condition_words(b.when),
            diagnosis=b.diagnosis,
            actions=tuple(titles.get(k, k) for k in b.recommended_actions),
            matched=b.id == matched_id,
        )
        for b in runbook.decision_tree
    ]


def _actions(runbook: Runbook, labels: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for action in runbook.emergency_actions:
        needs = sorted({n for v in _strings(action.params) for n in missing(v, labels)})
        params = action.params if needs else fill_params(action.params, labels)
        out.append({"action": action, "params": params, "needs": needs})
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _commands(runbook: Runbook, labels: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for cmd in runbook.diagnostic_commands:
        needs = missing(cmd.command, labels)
        text = cmd.command if needs else fill_command(cmd.command, labels)
        out.append({"title": cmd.title, "command": text, "needs": needs})
    return out


def _get_runbook(slug: str) -> Runbook:
    runbook = load_catalog().get(slug)
    if runbook is None:
        raise Http404(f"There is no runbook {slug!r} in the catalogue.")
    return runbook


# --- pages ----------------------------------------------------------------------------
@require_GET
@console_view(VIEW)
def catalogue(request: AuthedRequest):
    catalog = load_catalog()
    groups = [
        (category, [rb for rb in catalog.all() if rb.category == name])
        for name, category in catalog.categories.items()
    ]
    context = {"groups": [g for g in groups if g[1]], "count": len(catalog.all())}
    return render(request, "runbooks/catalogue.html", context)


@require_GET
@console_view(VIEW)
def categories(request: AuthedRequest):
    catalog = load_catalog()
    groups = [
        (category, [rb for rb in catalog.all() if rb.category == name])
        for name, category in catalog.categories.items()
    ]
    return render(request, "runbooks/categories.html", {"groups": groups})


@require_GET
@console_view(VIEW)
def runbook_detail(request: AuthedRequest, slug: str):
    runbook = _get_runbook(slug)
    category = load_catalog().categories.get(runbook.category)
    context = {
        "runbook": runbook,
        "category": category,
        "branches": _branches(runbook),
        "steps": STEPS,
    }
    return render(request, "runbooks/detail.html", context)


# --- incident partials ----------------------------------------------------------------
def _steps_done(incident: Incident, runbook_slug: str) -> set[str]:
    """The steps checked off for this runbook, from the timeline: one query."""
    payloads = TimelineEvent.objects.filter(incident=incident, kind=RUNBOOK_STEP).values_list(
        "payload", flat=True
    )
    return {p.get("step") for p in payloads if p.get("runbook") == runbook_slug}


def _triage_context(request: AuthedRequest, incident: Incident) -> dict[str, Any]:
    alerts = incident_alerts_firing_first(incident)  # one query serves triage and labels
    result = incident_triage(incident=incident, alerts=alerts)
    catalog = load_catalog()
    runbook = catalog.get(result.runbook_slug) if result.runbook_slug else None
    context: dict[str, Any] = {
        "incident": incident,
        "result": result,
        "runbook": runbook,
        "can_respond": request.user.has_perm(RESPOND),
        "catalogue": catalog.all(),
        # The stored result the worker posted; a poll that sees another branch asks for a
        # new one.
        "auto_triage": auto_triage_seen(incident=incident, result=result),
        "no_data_note": NO_DATA,  # the page says it in the viewer's language
    }
    if runbook is not None:
        labels = incident_labels(incident, alerts)
        questions = {c.id: c.question for c in runbook.triage}
        done = _steps_done(incident, runbook.slug)
        context.update(
            steps=[
                StepView(anchor=s.anchor, key=s.key, name=s.name, done=s.key in done) for s in STEPS
            ],
            branches=_branches(runbook, result.branch_id),
            because=[(cid, questions.get(cid, cid), state) for cid, state in result.because],
            actions=_actions(runbook, labels),
            commands=_commands(runbook, labels),
        )
    return context


def _shown(value: float | None) -> str:
    """A check value as the page prints it: jitter below that precision is no change."""
    return "" if value is None else format(value, ".4g")


def triage_version(context: Mapping[str, Any]) -> str:
    """Changes whenever something the triage partial shows changes, except the time of
    evaluation; the poll skips the swap otherwise, so open <details> and a half-chosen
    runbook in the picker survive it."""
    result = context["result"]
    state = (
        result.runbook_slug,
        tuple((c.id, c.state, _shown(c.value), c.message, c.promql) for c in result.checks),
        result.branch_id,
        result.because,
        result.prometheus_error,
        result.message,
        tuple(s.key for s in context.get("steps", ()) if s.done),
        context["can_respond"],
        tuple(tuple(a["needs"]) for a in context.get("actions", ())),
        getattr(context.get("auto_triage"), "pk", None),
    )
    return hashlib.blake2s(repr(state).encode(), digest_size=8).hexdigest()


def _evaluated(moment) -> str:
    return dateformat.format(timezone.localtime(moment), "H:i:s T")


@require_GET
@console_view(VIEW)
def incident_triage_partial(request: AuthedRequest, pk: int):
    incident = incident_get(incident_id=pk)
    context = _triage_context(request, incident)
    context["version"] = triage_version(context)
    if request.GET.get("v") == context["version"]:
        # Nothing the responder sees changed: no swap. The header lets the page update
        # its "evaluated at" time without re-rendering the partial.
        response = HttpResponse(status=204)
        response["X-Triage-Evaluated"] = _evaluated(context["result"].evaluated_at)
        return response
    return render(request, "runbooks/_triage.html", context)


def _act(request: AuthedRequest, pk: int, call, done: str):
    """Run one service; htmx gets the re-rendered triage partial and the timeline is told
    to refresh, a plain form post goes back to the incident page."""
    incident_get(incident_id=pk)
    try:
        call()
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=reverse("incidents:detail", args=[pk]))
    if not request.htmx:
        messages.success(request, done)
        return redirect("incidents:detail", pk=pk)
    incident = incident_get(incident_id=pk)
    context = _triage_context(request, incident)
    context["version"] = triage_version(context)
    response = render(request, "runbooks/_triage.html", context)
    response.write(FLASH_CLEARED)
    return trigger_client_event(response, CHANGED_EVENT)


@require_POST
@console_view(RESPOND)
def incident_runbook_change(request: AuthedRequest, pk: int):
    slug = request.POST.get("slug", "")

    def call():
        services.runbook_change(incident_id=pk, actor=request.user, slug=slug)

    return _act(request, pk, call, _("Runbook set to %(slug)s.") % {"slug": slug})


@require_POST
@console_view(RESPOND)
def incident_diagnosis_confirm(request: AuthedRequest, pk: int):
    def call():
        services.diagnosis_confirm(incident_id=pk, actor=request.user)

    return _act(request, pk, call, _("Diagnosis confirmed on the timeline."))


@require_POST
@console_view(RESPOND)
def incident_step_check(request: AuthedRequest, pk: int, step: str):
    def call():
        services.runbook_step_check(incident_id=pk, actor=request.user, step=step)

    name = STEP_NAMES.get(step, step)
    return _act(request, pk, call, _("Runbook step done: %(step)s.") % {"step": name})


@require_GET
@console_view(VIEW)
def incident_signals_partial(request: AuthedRequest, pk: int):
    incident = incident_get(incident_id=pk)
    charts = incident_charts(incident=incident)
    items = [
        {"chart": c, "dom_id": f"chart-{incident.pk}-{c.id}", "data": c.data(charts.marks)}
        for c in charts.charts
    ]
    if request.GET.get("format") == "json":
        # The live refresh (static/js/charts.js): new data for plots already on the page,
        # redrawn in place with Plotly.react, so nothing flickers or loses its zoom.
        # Not the public API: the page's own data, in the page's language.
        return JsonResponse(
            {
                "range": _signals_range(charts),
                "prometheus_error": charts.prometheus_error,
                "charts": {i["dom_id"]: i["data"] for i in items},
            }
        )
    context = {
        "incident": incident,
        "charts": charts,
        "items": items,
        "signals_range": _signals_range(charts),
    }
    return render(request, "runbooks/_signals.html", context)


def _signals_range(charts) -> str:
    """The charts' window and step, as the header and its live refresh print it."""
    start = timezone.localtime(charts.start)
    end = timezone.localtime(charts.end)
    stamp = formats.get_format("STAMP_MINUTE_FORMAT")
    return _("%(start)s → %(end)s · step %(step)s s") % {
        "start": dateformat.format(start, stamp),
        "end": f"{dateformat.format(end, stamp)} {dateformat.format(end, 'T')}",
        "step": charts.step,
    }
