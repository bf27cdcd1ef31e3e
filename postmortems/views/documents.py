"""The postmortem document: list, the incident page's panel, drafting, the page itself
(sections in SECTION_ORDER with blameless warnings), saving a section, and the read-only
renderings (history, Markdown export, print). Views authorise, call one service or
selector, and render."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh

from console.bounds import parse_id
from console.errors import DomainError, page_message
from console.http import AuthedRequest
from console.web import console_view, denied, refused
from incidents.selectors import incident_get
from postmortems import selectors, services
from postmortems.blameless import blameless_check_fields
from postmortems.languages import document_foreign_language
from postmortems.markdown.document import DURATIONS, duration, postmortem_markdown
from postmortems.models import (
    SECTION_ORDER,
    TEXT_SECTIONS,
    DraftState,
    ItemCategory,
    ItemStatus,
    PostmortemStatus,
    Priority,
)
from postmortems.permissions import (
    ADMIN_EDIT,
    DRAFT,
    MANAGE,
    PUBLISH,
    REVIEW,
    VIEW,
    can_edit,
    ready_to_draft,
)
from postmortems.views.common import (
    active_users,
    people_names,
    postmortem_or_404,
    reviewer_candidates,
)
from postmortems.views.history import history_rows
from runbooks.catalog import load_catalog
from runbooks.prometheus_texts import prometheus_text
from runbooks.units import unit_word

PER_PAGE = 25
HISTORY_PER_PAGE = 100
TIMELINE_SHOWN = 300
POLL_SECONDS = 2  # how often a page waiting for the worker asks whether the draft is ready
LABELS = {
    "title": gettext_lazy("Title"),
    "summary": gettext_lazy("Summary"),
    "impact": gettext_lazy("Impact"),
    "timeline": gettext_lazy("Timeline"),
    "root_cause": gettext_lazy("Root cause"),
    "contributing_factors": gettext_lazy("Contributing factors"),
    "action_items": gettext_lazy("Action items"),
    "lessons_learned": gettext_lazy("Lessons learned"),
}
TIME_LABELS = {
    "start": gettext_lazy("Impact started"),
    "detected": gettext_lazy("Detected (incident opened)"),
    "acknowledged": gettext_lazy("Acknowledged"),
    "mitigated": gettext_lazy("Mitigated"),
    "resolved": gettext_lazy("Resolved"),
}
AFFECTED = ("namespace", "lws", "node", "pod")
STATUS_FILTERS = (("", gettext_lazy("All")), *PostmortemStatus.choices)


# --- list and the incident page's panel -----------------------------------------------
@require_GET
@console_view(VIEW)
def postmortem_list(request: AuthedRequest):
    status = request.GET.get("status", "")
    if status not in PostmortemStatus.values:
        status = ""
    postmortems = selectors.postmortem_list()
    if status:
        postmortems = postmortems.filter(status=status)
    page = Paginator(postmortems, PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "status": status,
        "statuses": STATUS_FILTERS,
        "unread": selectors.notifications_unread(user=request.user).count(),
    }
    return render(request, "postmortems/list.html", context)


@require_GET
@console_view(VIEW)
def incident_panel(request: AuthedRequest, incident_id: int):
    incident = incident_get(incident_id=incident_id)
    context = {
        "incident": incident,
        "pm": selectors.postmortem_for_incident(incident_id=incident.pk),
        "can_draft": request.user.has_perm(DRAFT),
        "ready_to_draft": ready_to_draft(incident),
    }
    return render(request, "postmortems/_incident_panel.html", context)


@require_POST
@console_view()
def postmortem_draft(request: AuthedRequest, incident_id: int):
    try:
        pm = services.postmortem_draft(
            incident_id=incident_id,
            actor=request.user,
            language=request.POST.get("language") or None,  # None: the reader's language
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=reverse("incidents:detail", args=[incident_id]))
    return redirect("postmortems:detail", pk=pm.pk)


# --- the document -----------------------------------------------------------------------
def _when(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso).astimezone(UTC) if iso else None


def _impact(data: dict) -> dict:
    times = data.get("times") or {}
    durations = data.get("durations") or {}
    alerts = data.get("alerts") or {}
    affected = data.get("affected") or {}
    # Fixed orders: PostgreSQL's jsonb does not keep the keys in the order they were written.
    return {
        "durations": [(label, duration(durations.get(key))) for key, label in DURATIONS],
        "times": [(label, _when(times.get(key))) for key, label in TIME_LABELS.items()],
        "alerts_total": alerts.get("total", 0),
        "alerts_by_name": sorted((alerts.get("by_name") or {}).items()),
        "affected": [(k, affected[k]) for k in AFFECTED if affected.get(k)],
    }


# Chart labels of the incident's phases (short: they print on the chart).
MARKS = (
    ("start", pgettext_lazy("chart mark", "impact")),
    ("detected", pgettext_lazy("chart mark", "detected")),
    ("mitigated", pgettext_lazy("chart mark", "mitigated")),
    ("resolved", pgettext_lazy("chart mark", "resolved")),
)
MARK_MERGE_SECONDS = 90


def _charts(pm) -> list[dict]:
    """Stored snapshots shaped like the live charts (static/js/charts.js draws both), with
    the incident's phases as vertical marks."""
    times = pm.impact_data.get("times") or {}
    phases = [
        (moment, label) for key, label in MARKS if (moment := _when(times.get(key))) is not None
    ]
    # Moments closer than MARK_MERGE share one line and one label: at chart scale two
    # labels a few seconds apart print over each other.
    groups: list[tuple] = []
    for moment, label in sorted(phases, key=lambda p: p[0]):
        if groups and (moment - groups[-1][0]).total_seconds() < MARK_MERGE_SECONDS:
            groups[-1][1].append(str(label))
        else:
            groups.append((moment, [str(label)]))
    marks = {" & ".join(labels): m.strftime("%Y-%m-%d %H:%M:%S") for m, labels in groups}
    # A chart is its runbook's golden signal: its title in the reader's language from the
    # catalogue; one the catalogue no longer has keeps the stored title (draft language).
    runbook = load_catalog().get(pm.runbook) if pm.runbook else None
    signals = {s.id: s.title for s in runbook.golden_signals} if runbook else {}
    foreign = document_foreign_language(pm)
    charts = []
    for snap in pm.snapshots.all():
        title = signals.get(snap.chart_id) or snap.title
        error = prometheus_text(snap.error) if snap.error else ""
        unit = unit_word(snap.unit)  # the catalogue's unit id, worded ("" for yes/no)
        charts.append(
            {
                "snap": snap,
                "title": title,
                "title_lang": None if snap.chart_id in signals else foreign,
                "error": error,
                "unit": unit,
                "dom_id": f"pm-chart-{snap.pk}",
                "data": {
                    "title": title,
                    "unit": unit,
                    "series": snap.series,
                    "marks": marks,
                    "message": error,
                },
            }
        )
    return charts


def document_context(request: AuthedRequest, pm, *, typed: dict | None = None) -> dict:
    """Everything the document page shows, in a fixed number of queries. `typed` carries a
    refused edit ({"section", "text", "error"}) so the editor gets their text back."""
    user = request.user
    users = active_users()
    entries = list(pm.entries.all())
    entries_total = len(entries)
    # A storm can draft thousands of lines, each with its forms: the page shows the first
    # TIMELINE_SHOWN unless asked for all (export and print always have every line).
    if request.GET.get("timeline") != "all":
        entries = entries[:TIMELINE_SHOWN]
    items = list(pm.action_items.all())
    fields = {"title": pm.title, **{name: getattr(pm, name) for name in TEXT_SECTIONS}}
    fields.update({f"timeline:{e.pk}": e.text for e in entries if e.included})
    warnings = defaultdict(list)
    for finding in blameless_check_fields(fields, people=people_names(users, pm.incident)):
        warnings[finding.field].append(finding)
    typed = typed or {}
    sections = []
    for name in SECTION_ORDER:
        section = {"name": name, "label": LABELS[name], "warnings": warnings.get(name, [])}
        if name in TEXT_SECTIONS:
            section["text"] = getattr(pm, name)
            if typed.get("section") == name:
                section.update(typed=typed["text"], error=typed["error"])
        sections.append(section)
    accepted = {i.source for i in items if i.source}
    reviewers = list(pm.reviewers.all())
    mine = next((r for r in reviewers if r.user_id == user.pk), None)
    in_review = pm.status == PostmortemStatus.IN_REVIEW
    author_id = selectors.postmortem_sole_author_id(pm) if in_review else None
    editable = can_edit(user, pm)
    published = pm.status == PostmortemStatus.PUBLISHED
    return {
        "pm": pm,
        "incident": pm.incident,
        "sections": sections,
        "title_warnings": warnings.get("title", []),
        "title_typed": typed if typed.get("section") == "title" else None,
        "impact": _impact(pm.impact_data or {}),
        "entries_total": entries_total,
        "entries_cut": entries_total > len(entries),
        "entries": [
            {"entry": e, "warnings": warnings.get(f"timeline:{e.pk}", [])} for e in entries
        ],
        "charts": _charts(pm),
        "suggestions": [s for s in pm.suggestions if s.get("source") not in accepted],
        "items": items,
        "reviewers": reviewers,
        "comments": list(pm.comments.all()),
        "users": users,
        "candidates": reviewer_candidates() if editable and not published else [],
        "can_edit": editable,
        "can_manage": user.has_perm(MANAGE),
        "can_accept": user.has_perm(MANAGE) and (not published or user.has_perm(ADMIN_EDIT)),
        "can_comment": user.has_perm(DRAFT),
        "can_request_review": editable and not published,
        "can_decide": mine is not None and user.has_perm(REVIEW) and in_review,
        "my_review": mine,
        "wrote_it_all": mine is not None and author_id == user.pk,
        "can_publish": user.has_perm(PUBLISH) and in_review,
        "publish_blocker": (
            selectors.postmortem_publish_blocker(pm, reviewers, author_id) if in_review else ""
        ),
        "poll_seconds": POLL_SECONDS,
        "today": timezone.localdate(),
        "priorities": Priority.choices,
        "categories": ItemCategory.choices,
        "item_statuses": ItemStatus.choices,
    }


@require_GET
@console_view(VIEW)
def postmortem_detail(request: AuthedRequest, pk: int):
    pm = postmortem_or_404(pk)
    return render(request, "postmortems/detail.html", document_context(request, pm))


@require_GET
@console_view(VIEW)
def postmortem_drafting(request: AuthedRequest, pk: int):
    """Polled while the worker drafts: the same notice until the state changes, then the
    page reloads itself to show the document (or the failure)."""
    pm = postmortem_or_404(pk)
    if pm.draft_state != DraftState.PENDING:
        return HttpResponseClientRefresh()
    context = {"pm": pm, "poll_seconds": POLL_SECONDS}
    return render(request, "postmortems/_drafting.html", context)


@require_POST
@console_view()
def section_save(request: AuthedRequest, pk: int, section: str):
    """Save one text section (or the title). A refusal (someone saved first, text too
    long) re-renders the page with the typed text still in the editor."""
    if section not in ("title", *TEXT_SECTIONS):
        raise Http404(f"{section} is not a postmortem section.")
    text = request.POST.get("text", "")
    version = request.POST.get("version", "")
    try:
        services.postmortem_update(
            postmortem_id=pk,
            actor=request.user,
            version=parse_id(version) or 0,  # 0: refused as stale
            changes={section: text},
        )
    except (PermissionDenied, DomainError) as exc:
        if (response := denied(request, exc)) is not None:
            return response
        typed = {"section": section, "text": text, "error": page_message(exc)}
        context = document_context(request, postmortem_or_404(pk), typed=typed)
        return render(request, "postmortems/detail.html", context, status=409)
    return redirect(reverse("postmortems:detail", args=[pk]) + f"#section-{section}")


# --- read-only renderings ---------------------------------------------------------------
@require_GET
@console_view(VIEW)
def postmortem_history(request: AuthedRequest, pk: int):
    pm = postmortem_or_404(pk)
    edits = selectors.postmortem_edits(postmortem_id=pm.pk).order_by("-at", "-id")
    page = Paginator(edits, HISTORY_PER_PAGE).get_page(request.GET.get("page"))
    rows = history_rows(pm, page.object_list)
    return render(request, "postmortems/history.html", {"pm": pm, "page": page, "rows": rows})


@require_GET
@console_view(VIEW)
def postmortem_export(request: AuthedRequest, pk: int):
    pm = postmortem_or_404(pk)
    response = HttpResponse(postmortem_markdown(pm), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="postmortem-{pm.pk}.md"'
    return response


@require_GET
@console_view(VIEW)
def postmortem_print(request: AuthedRequest, pk: int):
    pm = postmortem_or_404(pk)
    context = document_context(request, pm)
    context["included"] = [e for e in pm.entries.all() if e.included]  # every line, not a page
    return render(request, "postmortems/print.html", context)
