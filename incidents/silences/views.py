"""The incident page's Silences panel: the incident's silences in Alertmanager (polled),
a form to silence one alert or the whole group, and a button to expire one early.

Refusals are shown inside the panel, where the commander is looking, with the typed
form kept. They answer 409 even when Alertmanager is down (the API says 503): the page's
htmx swaps only 403 and 409 answers, and a message that is not swapped is not seen.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from console.bounds import parse_id
from console.errors import DomainError, page_message
from console.http import AuthedRequest
from console.web import CHANGED_EVENT, FLASH_CLEARED, console_view, denied
from incidents import permissions as perms
from incidents import selectors, services
from incidents.models import AlertStatus, Incident
from incidents.silences.client import AlertmanagerError, base_url, incident_silences
from incidents.silences.comments import default_comment_shown
from incidents.silences.scope import BROADER, NOT_CREATED_HERE, ConfirmationRequired
from incidents.silences.services import COMMENT_MAX_CHARS, DEFAULT_MINUTES, duration_words

# What the form offers; the API takes any whole number of minutes within the bounds.
DURATIONS = (30, 60, 120, 240, 480, 1440, 4320)
ALERTS_OFFERED = 200


def panel_context(request: AuthedRequest, incident: Incident) -> dict:
    """The panel's context on the incident page (no query: the page has the alerts)."""
    return {"silence_form": _form(incident=incident, user=request.user)}


def _form(*, incident: Incident, user, values=None, error: str = "", note: str = "") -> dict:
    values = values or {}
    return {
        "durations": [(m, duration_words(m)) for m in DURATIONS],
        # Shown in the viewer's language; Alertmanager gets it in English (comments.py).
        "default_comment": default_comment_shown(incident, user),
        "comment_max": COMMENT_MAX_CHARS,
        "scope_alert": _alert_id(values.get("scope", "")),
        "duration": _minutes(values.get("duration", "")) or DEFAULT_MINUTES,
        "comment": values.get("comment", ""),
        "error": error,
        "note": note,
    }


def _alert_id(scope: str) -> int | None:
    """The alert a form's scope names ("alert-42"), None for the whole group."""
    return parse_id(scope.removeprefix("alert-")) if scope.startswith("alert-") else None


def _minutes(duration: str) -> int | None:
    """Minutes from the form's duration ("120m"; the "m" keeps option values unlike ids)."""
    return parse_id(duration.removesuffix("m"))


def _list(request: AuthedRequest, incident_id: int, *, error: str = "", note: str = "") -> dict:
    context = {
        "incident_id": incident_id,
        "silences": [],
        "unavailable": "",
        "error": error,
        "note": note,
        "can_silence": request.user.has_perm(perms.SILENCE),
        "alertmanager_url": base_url(),
    }
    try:
        context["silences"] = incident_silences(incident_id=incident_id)
    except AlertmanagerError as exc:
        context["unavailable"] = page_message(exc)
    return context


@require_GET
@console_view(perms.VIEW)
def incident_silence_list(request: AuthedRequest, pk: int):
    selectors.incident_get(incident_id=pk)  # the 404 page for a missing incident
    return render(request, "incidents/_silence_list.html", _list(request, pk))


def _firing_alerts(incident_id: int):
    alerts = selectors.incident_alerts(incident_id=incident_id).filter(status=AlertStatus.FIRING)
    return list(alerts[:ALERTS_OFFERED])


@require_POST
@console_view()
def incident_silence_create(request: AuthedRequest, pk: int):
    incident = selectors.incident_get(incident_id=pk)
    values = {k: request.POST.get(k, "").strip() for k in ("scope", "duration", "comment")}
    try:
        alert_id = _alert_id(values["scope"])
        if alert_id is None and values["scope"] not in ("", "group"):
            raise DomainError(
                gettext_noop("Choose the whole group or one of the alerts."), code="invalid"
            )
        minutes = _minutes(values["duration"]) if values["duration"] else DEFAULT_MINUTES
        if minutes is None:
            raise DomainError(gettext_noop("Choose how long the silence lasts."), code="invalid")
        made = services.incident_silence_create(
            incident_id=pk,
            actor=request.user,
            alert_id=alert_id,
            duration_minutes=minutes,
            comment=values["comment"],
        )
    except (PermissionDenied, DomainError) as exc:
        if (response := denied(request, exc)) is not None:
            return response
        if not request.htmx:
            messages.error(request, page_message(exc))
            return redirect("incidents:detail", pk=pk)
        form = _form(incident=incident, user=request.user, values=values, error=page_message(exc))
        context = {"incident": incident, "silence_form": form, "alerts": _firing_alerts(pk)}
        return render(request, "incidents/_silence_form.html", context, status=409)
    done = _("Silenced in Alertmanager until %(until)s (silence %(id)s).") % {
        "until": f"{made[0].silence.ends_at:%Y-%m-%d %H:%M %Z}",
        "id": ", ".join(item.silence.id for item in made),
    }
    if not request.htmx:
        messages.success(request, done)
        return redirect("incidents:detail", pk=pk)
    form = _form(incident=incident, user=request.user, note=done)
    context = {"incident": incident, "silence_form": form, "alerts": _firing_alerts(pk)}
    response = render(request, "incidents/_silence_form.html", context)
    # The list shows the new silence at once, and the timeline its entry.
    listing = render(request, "incidents/_silence_list.html", {**_list(request, pk), "oob": True})
    response.write(listing.content)
    response.write(FLASH_CLEARED)
    return trigger_client_event(response, CHANGED_EVENT)


# Why a silence needs a confirmation before it is expired, as the page says it.
_REASONS = {
    NOT_CREATED_HERE: gettext_lazy("it was not created from this incident in the console"),
    BROADER: gettext_lazy("its matchers match alerts outside this incident"),
}


@require_POST
@console_view()
def incident_silence_expire(request: AuthedRequest, pk: int, silence_id: object):
    confirm = request.POST.get("confirm", "") == "true"
    try:
        item = services.incident_silence_expire(
            incident_id=pk, actor=request.user, silence_id=str(silence_id), confirm=confirm
        )
    except (PermissionDenied, DomainError) as exc:
        if (response := denied(request, exc)) is not None:
            return response
        if not request.htmx:
            messages.error(request, page_message(exc))
            return redirect("incidents:detail", pk=pk)
        context = _list(request, pk, error=page_message(exc))
        if isinstance(exc, ConfirmationRequired):
            # The matchers and the author are shown before anything is expired.
            context["error"] = ""
            context["confirm"] = {
                "silence": exc.silence,
                "reasons": [_REASONS[r] for r in exc.reasons],
            }
        return render(request, "incidents/_silence_list.html", context, status=409)
    done = _("Silence %(id)s expired; Alertmanager notifies for its alerts again.") % {
        "id": item.silence.id
    }
    if not request.htmx:
        messages.success(request, done)
        return redirect("incidents:detail", pk=pk)
    listing = render(request, "incidents/_silence_list.html", _list(request, pk, note=done))
    listing.write(FLASH_CLEARED)
    return trigger_client_event(listing, CHANGED_EVENT)
