"""Form posts on the document: timeline lines (reword, include/exclude, add by hand), the
review workflow (request, comment, approve / request changes, publish). Plain forms that
redirect back to the part of the page they came from; the timeline line also answers htmx
with just itself, so toggling a line does not reload a long page."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_POST

from console.errors import DomainError
from console.http import AuthedRequest
from console.web import FLASH_CLEARED, console_view, perform, refused
from postmortems import services
from postmortems.blameless import blameless_check_fields
from postmortems.models import PostmortemTimelineEntry
from postmortems.permissions import can_edit
from postmortems.views.common import active_users, people_names


def _doc(pk: int, anchor: str = "") -> str:
    return reverse("postmortems:detail", args=[pk]) + (f"#{anchor}" if anchor else "")


# --- timeline ---------------------------------------------------------------------------
def _entry_row(request: AuthedRequest, entry_id: int):
    entry = (
        PostmortemTimelineEntry.objects.select_related("postmortem__incident__commander")
        .filter(pk=entry_id)
        .first()
    )
    if entry is None:
        raise Http404(f"Timeline entry #{entry_id} does not exist.")
    people = people_names(active_users(), entry.postmortem.incident)
    fields = {f"timeline:{entry.pk}": entry.text} if entry.included else {}
    context = {
        "row": {"entry": entry, "warnings": blameless_check_fields(fields, people=people)},
        "pm": entry.postmortem,  # the document's language marks the line (lang)
        "can_edit": can_edit(request.user, entry.postmortem),
    }
    return render(request, "postmortems/_entry.html", context)


@require_POST
@console_view()
def timeline_entry(request: AuthedRequest, entry_id: int):
    """Reword a line (`text`) or include/exclude it (`included` = 1 / 0)."""
    text = request.POST.get("text")
    included = request.POST.get("included")
    postmortem_id = (
        PostmortemTimelineEntry.objects.filter(pk=entry_id)
        .values_list("postmortem_id", flat=True)
        .first()
    )
    if postmortem_id is None:
        raise Http404(f"Timeline entry #{entry_id} does not exist.")
    back = _doc(postmortem_id, f"entry-{entry_id}")
    try:
        services.timeline_entry_update(
            entry_id=entry_id,
            actor=request.user,
            text=text,
            included=None if included is None else included == "1",
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    if request.htmx:
        response = _entry_row(request, entry_id)
        response.write(FLASH_CLEARED)
        return response
    return redirect(back)


def _utc_time(raw: str) -> datetime | None:
    """The form's time is UTC (the page says so): "YYYY-MM-DD HH:MM[:SS]" or the
    datetime-local "T" form."""
    raw = (raw or "").strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?", raw):
        return None
    return datetime.fromisoformat(raw.replace(" ", "T")).replace(tzinfo=UTC)


@require_POST
@console_view()
def timeline_add(request: AuthedRequest, pk: int):
    raw = request.POST.get("occurred_at", "")

    def call():
        occurred_at = _utc_time(raw)
        if occurred_at is None:
            raise DomainError(
                gettext_noop("Time %(raw)s: use YYYY-MM-DD HH:MM (UTC)."),
                code="invalid",
                params={"raw": repr(raw)},
            )
        services.timeline_entry_add(
            postmortem_id=pk,
            actor=request.user,
            occurred_at=occurred_at,
            text=request.POST.get("text", ""),
        )

    return perform(request, call, done=_("Timeline line added."), back=_doc(pk, "section-timeline"))


# --- review workflow --------------------------------------------------------------------
@require_POST
@console_view()
def review_request(request: AuthedRequest, pk: int):
    names = [n for n in re.split(r"[\s,]+", request.POST.get("reviewers", "")) if n]

    def call():
        services.postmortem_request_review(postmortem_id=pk, actor=request.user, reviewers=names)

    done = _("Review requested from %(names)s.") % {"names": ", ".join(names)}
    return perform(request, call, done=done, back=_doc(pk, "review"))


@require_POST
@console_view()
def comment_add(request: AuthedRequest, pk: int):
    def call():
        services.postmortem_comment(
            postmortem_id=pk,
            actor=request.user,
            text=request.POST.get("text", ""),
            section=request.POST.get("section", ""),
        )

    return perform(request, call, done=_("Comment added."), back=_doc(pk, "review"))


@require_POST
@console_view()
def review_decide(request: AuthedRequest, pk: int):
    decision = request.POST.get("decision")
    approve = decision == "approve"

    def call():
        if decision not in ("approve", "changes"):
            raise DomainError(gettext_noop("Choose Approve or Request changes."), code="invalid")
        services.postmortem_review(
            postmortem_id=pk, actor=request.user, approve=approve, note=request.POST.get("note", "")
        )

    done = _("Approved.") if approve else _("Changes requested; the postmortem is back in draft.")
    return perform(request, call, done=done, back=_doc(pk, "review"))


@require_POST
@console_view()
def publish(request: AuthedRequest, pk: int):
    def call():
        services.postmortem_publish(postmortem_id=pk, actor=request.user)

    return perform(request, call, done=_("Published. It is now read-only."), back=_doc(pk))


@require_POST
@console_view()
def refresh(request: AuthedRequest, pk: int):
    def call():
        services.postmortem_refresh(postmortem_id=pk, actor=request.user)

    done = _("Refreshed from the incident: impact, new timeline lines and the stored charts.")
    return perform(request, call, done=done, back=_doc(pk))
