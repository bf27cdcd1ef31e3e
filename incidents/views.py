"""Console pages for incidents and the webhook receipt log (server-rendered, htmx partials).

Views stay thin: authorise, call one selector or service, render. The services check the
fine-grained permissions themselves and raise PermissionDenied or DomainError; here those
become a 403 page / an error message (409 with the message for htmx requests), the one
way console/web.py answers them.
"""

import hashlib
import json
from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget, trigger_client_event

from console.bounds import parse_id
from console.errors import DomainError, page_message
from console.http import AuthedRequest
from console.web import CHANGED_EVENT, FLASH_CLEARED, console_view, perform, refused
from incidents import permissions as perms
from incidents import selectors, services
from incidents.alertmanager_view.services import incident_reconcile_request
from incidents.models import IncidentStatus, ReceiptOutcome, Severity
from incidents.paging import COUNT_CAP, SEARCH_COUNT_CAP, CappedPaginator
from incidents.services.command import COMMAND_EXPECTED, NoCommander
from incidents.services.declare import DECLARE, SUMMARY_MAX_CHARS, TITLE_MAX_CHARS
from incidents.services.lifecycle import NOTE_MAX_CHARS, REASON_MAX_CHARS, AlertsFiring
from incidents.transitions import ALLOWED

INCIDENTS_PER_PAGE = 25
RECEIPTS_PER_PAGE = 50
ALERTS_SHOWN = 200
TIMELINE_SHOWN = 500
STALE_EVENT = "incident-stale"  # htmx event: the header re-fetches (an action was refused)
# After a confirmed mitigate/resolve: the confirmation form goes away.
ENDING_CONFIRM_CLEARED = '<div id="ending-confirm" hx-swap-oob="innerHTML"></div>'
RECEIPT_FILTERS = {
    "": gettext_lazy("All"),
    "dead": gettext_lazy("Dead letters (rejected + failed)"),
    "accepted": gettext_lazy("Accepted"),
    "replayed": gettext_lazy("Replayed"),
}
# The list's status tabs before the statuses themselves.
STATUS_TABS = [("", gettext_lazy("All")), ("open", gettext_lazy("Open"))]
S = IncidentStatus


# --- incident list --------------------------------------------------------------------
@require_GET
@console_view(perms.VIEW)
def incident_list(request: AuthedRequest):
    filters = selectors.IncidentFilters.from_params(request.GET)
    # Counted up to a cap: an exact count of a year of incidents reads every row.
    cap = SEARCH_COUNT_CAP if filters.q else COUNT_CAP
    incidents = selectors.incident_list(filters=filters)
    paginator = CappedPaginator(incidents, INCIDENTS_PER_PAGE, cap=cap)
    page = paginator.get_page(request.GET.get("page"))
    context = {"filters": filters, "page": page}
    if request.htmx:
        return render(request, "incidents/_incident_table.html", context)
    context.update(
        runbooks=selectors.incident_runbooks(),
        severities=Severity.choices,
        statuses=[*STATUS_TABS, *S.choices],
        declare_limits={"title": TITLE_MAX_CHARS, "summary": SUMMARY_MAX_CHARS},
    )
    return render(request, "incidents/list.html", context)


@require_POST
@console_view(DECLARE)
def incident_declare(request: AuthedRequest):
    """The list's "Declare an incident" form: opens it, then shows it."""
    post = request.POST
    try:
        incident = services.incident_declare(
            actor=request.user,
            title=post.get("title", ""),
            severity=post.get("severity", ""),
            namespace=post.get("namespace", ""),
            summary=post.get("summary", ""),
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=reverse("incidents:list"))
    messages.success(request, _("Incident #%(id)s declared.") % {"id": incident.pk})
    return redirect("incidents:detail", pk=incident.pk)


# --- incident detail and its partials -------------------------------------------------
def _allowed_actions(user: User, incident) -> dict[str, bool]:
    """The buttons to show: the user's permissions and the moves lifecycle.ALLOWED permits
    from this status with the button's own verb (so no "Acknowledge" on a mitigated
    incident: that move exists only as a re-trigger by alerts firing again)."""
    can, status = user.has_perm, incident.status

    def move(to: str, verb: str) -> bool:
        return ALLOWED.get((status, to)) == verb

    mine, free = incident.commander_id == user.pk, incident.commander_id is None
    return {
        "acknowledge": can(perms.ACKNOWLEDGE) and move(S.ACKNOWLEDGED, "acknowledged"),
        "mitigate": can(perms.MITIGATE) and move(S.MITIGATED, "mitigated"),
        "resolve": can(perms.RESOLVE) and move(S.RESOLVED, "resolved"),
        "reopen": can(perms.REOPEN) and move(S.TRIGGERED, "reopened"),
        "take_command": not mine
        and ((free and can(perms.TAKE_COMMAND)) or can(perms.ASSIGN_COMMANDER)),
        "assign": can(perms.ASSIGN_COMMANDER),
        "note": can(perms.ADD_NOTE),
    }


def _version(incident) -> str:
    """Changes whenever anything the header shows changes; the poll skips a swap otherwise."""
    state = (
        incident.status,
        incident.severity,
        incident.title,
        incident.commander_id,
        incident.updated_at,
        incident.last_alert_at,
        incident.alert_count,
        incident.firing_count,
    )
    return hashlib.blake2s(repr(state).encode(), digest_size=8).hexdigest()


def _header_context(request: AuthedRequest, incident) -> dict:
    actions = _allowed_actions(request.user, incident)
    return {
        "incident": incident,
        "actions": actions,
        "version": _version(incident),
        "candidates": selectors.commander_candidates() if actions["assign"] else (),
        # Resolving it would ask: a SEV1/SEV2 nobody commands (lifecycle's NoCommander).
        "command_expected": incident.commander_id is None and incident.severity in COMMAND_EXPECTED,
    }


def _alerts_context(incident) -> dict:
    alerts = list(selectors.incident_alerts(incident_id=incident.pk)[:ALERTS_SHOWN])
    return {
        "incident": incident,
        "alerts": alerts,
        "alerts_cut": incident.alert_count > len(alerts),
    }


def _timeline_context(incident_id: int) -> dict:
    newest_first = selectors.incident_timeline(incident_id=incident_id).order_by(
        "-occurred_at", "-id"
    )
    events = list(newest_first[: TIMELINE_SHOWN + 1])
    cut = len(events) > TIMELINE_SHOWN
    events = events[:TIMELINE_SHOWN][::-1]
    last_id = max((e.pk for e in events), default=0)
    return {"incident_id": incident_id, "events": events, "events_cut": cut, "last_id": last_id}


@require_GET
@console_view(perms.VIEW)
def incident_detail(request: AuthedRequest, pk: int):
    incident = selectors.incident_get(incident_id=pk)
    # Queued, rate-limited: the page shows what was last reconciled and never waits.
    incident_reconcile_request(incident=incident)
    context = {
        **_header_context(request, incident),
        **_alerts_context(incident),
        **_timeline_context(incident.pk),
        "note_max": NOTE_MAX_CHARS,
    }
    return render(request, "incidents/detail.html", context)


@require_GET
@console_view(perms.VIEW)
def incident_header(request: AuthedRequest, pk: int):
    incident = selectors.incident_get(incident_id=pk)
    context = _header_context(request, incident)
    if request.GET.get("v") == context["version"]:
        return HttpResponse(status=204)  # nothing changed: keep what the user is typing
    response = render(request, "incidents/_incident_header.html", context)
    return trigger_client_event(response, CHANGED_EVENT)


@require_GET
@console_view(perms.VIEW)
def incident_alerts(request: AuthedRequest, pk: int):
    return render(
        request, "incidents/_alerts.html", _alerts_context(selectors.incident_get(incident_id=pk))
    )


@require_GET
@console_view(perms.VIEW)
def incident_timeline(request: AuthedRequest, pk: int):
    after = parse_id(request.GET.get("after"))
    if after is not None and not (
        selectors.incident_timeline(incident_id=pk, after_id=after).exists()
    ):
        return HttpResponse(status=204)  # no new events since the last render
    return render(request, "incidents/_timeline.html", _timeline_context(pk))


# --- incident actions (POST) ----------------------------------------------------------
def _act(
    request: AuthedRequest,
    pk: int,
    call: Callable[[], object],
    done: str,
    htmx_partial: str = "header",
    ending: str = "",
):
    try:
        call()
    except AlertsFiring as exc:
        return _confirm_ending(request, pk, exc, ending=ending)
    except NoCommander as exc:
        return _confirm_ending(request, pk, exc, ending=ending, step="no_commander")
    except (PermissionDenied, DomainError) as exc:
        # The page was probably out of date: say why, and have its header refresh.
        back = reverse("incidents:detail", args=[pk])
        return refused(request, exc, back=back, event=STALE_EVENT)
    if not request.htmx:
        messages.success(request, done)
        return redirect("incidents:detail", pk=pk)
    if htmx_partial == "note":
        context = {"incident_id": pk, "note_max": NOTE_MAX_CHARS}
        response = render(request, "incidents/_note_form.html", context)
    else:
        response = render(
            request,
            "incidents/_incident_header.html",
            _header_context(request, selectors.incident_get(incident_id=pk)),
        )
    response.write(FLASH_CLEARED)
    if ending:
        response.write(ENDING_CONFIRM_CLEARED)
    return trigger_client_event(response, CHANGED_EVENT)


def _confirm_ending(
    request: AuthedRequest,
    pk: int,
    exc: AlertsFiring | NoCommander,
    *,
    ending: str,
    step: str = "firing",
):
    """Mitigate/resolve while alerts fire, or resolve a SEV1/SEV2 nobody commands: the
    form that confirms it (carrying the confirmations already given)."""
    context = {
        "incident_id": pk,
        "ending": ending,
        "step": step,
        "message": page_message(exc),
        "count": getattr(exc, "count", 0),
        "reason": _reason(request),
        "reason_max": REASON_MAX_CHARS,
        "confirmed_firing": _confirmed(request),
        "confirmed_no_commander": _confirmed_no_commander(request),
    }
    if not request.htmx:
        return render(request, "incidents/confirm_ending.html", context, status=409)
    response = render(request, "incidents/_confirm_ending.html", context, status=409)
    return reswap(retarget(response, "#ending-confirm"), "innerHTML")


def _reason(request: AuthedRequest) -> str:
    return request.POST.get("reason", "")


def _confirmed(request: AuthedRequest) -> bool:
    return request.POST.get("confirm") == "1"


def _confirmed_no_commander(request: AuthedRequest) -> bool:
    return request.POST.get("confirm_no_commander") == "1"


@require_POST
@console_view()
def incident_acknowledge(request: AuthedRequest, pk: int):
    def call():
        services.incident_acknowledge(incident_id=pk, actor=request.user)

    return _act(request, pk, call, _("Incident #%(id)s acknowledged.") % {"id": pk})


@require_POST
@console_view()
def incident_mitigate(request: AuthedRequest, pk: int):
    def call():
        services.incident_mitigate(
            incident_id=pk, actor=request.user, reason=_reason(request), confirm=_confirmed(request)
        )

    done = _("Incident #%(id)s marked mitigated.") % {"id": pk}
    return _act(request, pk, call, done, ending="mitigate")


@require_POST
@console_view()
def incident_resolve(request: AuthedRequest, pk: int):
    def call():
        services.incident_resolve(
            incident_id=pk,
            actor=request.user,
            reason=_reason(request),
            confirm=_confirmed(request),
            confirm_no_commander=_confirmed_no_commander(request),
        )

    return _act(request, pk, call, _("Incident #%(id)s resolved.") % {"id": pk}, ending="resolve")


@require_POST
@console_view()
def incident_reopen(request: AuthedRequest, pk: int):
    def call():
        services.incident_reopen(incident_id=pk, actor=request.user, reason=_reason(request))

    return _act(request, pk, call, _("Incident #%(id)s reopened.") % {"id": pk})


@require_POST
@console_view()
def incident_commander(request: AuthedRequest, pk: int):
    raw = request.POST.get("commander_id", "").strip()

    def call():
        commander_id = parse_id(raw) if raw else None
        if raw and commander_id is None:
            raise DomainError(
                gettext_noop("Commander id %(id)s is not a number."),
                code="invalid",
                params={"id": repr(raw[:30])},
            )
        services.incident_commander_set(
            incident_id=pk, actor=request.user, commander_id=commander_id
        )

    return _act(request, pk, call, _("Commander of incident #%(id)s updated.") % {"id": pk})


@require_POST
@console_view()
def incident_note(request: AuthedRequest, pk: int):
    def call():
        services.incident_note_add(
            incident_id=pk, actor=request.user, text=request.POST.get("text", "")
        )

    return _act(request, pk, call, _("Note added to the timeline."), htmx_partial="note")


# --- webhook receipts -----------------------------------------------------------------
@require_GET
@console_view(perms.VIEW_RECEIPTS)
def receipt_list(request: AuthedRequest):
    outcome = request.GET.get("outcome", "")
    if outcome not in RECEIPT_FILTERS:
        outcome = ""
    receipts = selectors.webhook_receipt_list(outcome=outcome)
    page = CappedPaginator(receipts, RECEIPTS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"page": page, "outcome": outcome, "outcome_filters": RECEIPT_FILTERS.items()}
    return render(request, "incidents/receipt_list.html", context)


def _pretty_body(receipt) -> tuple[str, bool]:
    if receipt.body_raw is not None:
        # Not storable text: show the bytes escaped (\xff, \x00); the download has them.
        text = bytes(receipt.body_raw).decode("utf-8", errors="backslashreplace")
        return text.replace("\x00", "\\x00"), False
    try:
        return json.dumps(json.loads(receipt.body), indent=2, ensure_ascii=False), True
    except (ValueError, RecursionError):
        return receipt.body, False


@require_GET
@console_view(perms.VIEW_RECEIPTS)
def receipt_detail(request: AuthedRequest, pk: int):
    receipt = selectors.webhook_receipt_get(receipt_id=pk)
    if receipt is None:
        raise Http404(f"Webhook receipt #{pk} does not exist.")
    body, is_json = _pretty_body(receipt)
    context = {
        "receipt": receipt,
        "body": body,
        "body_is_json": is_json,
        "replays": selectors.webhook_receipt_replays(receipt_id=pk),
        "replayable": receipt.outcome in (ReceiptOutcome.REJECTED, ReceiptOutcome.FAILED),
    }
    return render(request, "incidents/receipt_detail.html", context)


@require_GET
@console_view(perms.VIEW_RECEIPTS)
def receipt_body(request: AuthedRequest, pk: int):
    """The body exactly as received, as a download (never rendered by the browser)."""
    receipt = selectors.webhook_receipt_get(receipt_id=pk)
    if receipt is None:
        raise Http404(f"Webhook receipt #{pk} does not exist.")
    response = HttpResponse(receipt.raw_bytes, content_type="application/octet-stream")
    response["Content-Disposition"] = f'attachment; filename="webhook-receipt-{pk}.json"'
    return response


@require_POST
@console_view()
def receipt_replay(request: AuthedRequest, pk: int):
    return perform(
        request,
        lambda: services.webhook_receipt_replay_request(receipt_id=pk, actor=request.user),
        done=_(
            "Replay queued: a worker will run body #%(id)s through ingestion again; "
            "the result appears below as a new receipt."
        )
        % {"id": pk},
        back=reverse("incidents:receipt-detail", args=[pk]),
    )
