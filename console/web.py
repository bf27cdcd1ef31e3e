"""What every console page shares: the access check (`console_view`), the error answers
(a flash for htmx requests, the 403 page) and the one way a service's refusal becomes a
response (`refused`).

Services raise PermissionDenied when the role does not allow a change and DomainError
otherwise (code "not_found" for a missing row); pages turn those into a 403, a 404, or
the message shown where the user is.
"""

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import prefetch_related_objects
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget, trigger_client_event

from console.errors import DomainError, page_message
from console.http import HtmxRequest
from console.roles import has_any_role

NO_ROLE_MESSAGE = gettext_lazy(
    "Your account has no console role yet; ask an admin to add you to viewer, responder, "
    "commander or admin."
)
NOT_ALLOWED = gettext_lazy("Your role does not allow this.")
CHANGED_EVENT = "incident-changed"  # htmx event: the incident's alerts and timeline re-fetch
# Appended to an htmx answer after a change that worked: empties the message area of an
# error an earlier attempt left there.
FLASH_CLEARED = '<div id="flash" hx-swap-oob="innerHTML"></div>'


def flash(request: HtmxRequest, message: str, *, status: int) -> HttpResponse:
    """An error for an htmx request: shown in the page's message area, nothing else swapped."""
    response = render(request, "incidents/_flash.html", {"flash_error": message}, status=status)
    return reswap(retarget(response, "#flash"), "innerHTML")


def forbidden(request: HtmxRequest, message: str) -> HttpResponse:
    if request.htmx:
        return flash(request, message, status=403)
    return render(request, "403.html", {"exception": message}, status=403)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler403: Django's 403 page, with a refusal's message in the page's language."""
    return render(request, "403.html", {"exception": page_message(exception)}, status=403)


def console_view(perm: str | None = None):
    """Login required, a console role required, and optionally one permission."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request: HtmxRequest, *args, **kwargs):
            if not request.user.is_authenticated:
                if request.htmx:  # session expired under a polling page: reload to log in
                    here = request.htmx.current_url_abs_path or request.get_full_path()
                    login = f"{reverse('login')}?{urlencode({'next': here})}"
                    return HttpResponseClientRedirect(login)
                return redirect_to_login(request.get_full_path())
            # One groups query serves both this check and the user_roles context processor.
            prefetch_related_objects([request.user], "groups")
            if not has_any_role(request.user):
                return forbidden(request, str(NO_ROLE_MESSAGE))
            if perm and not request.user.has_perm(perm):
                return forbidden(
                    request, _("Your role does not allow this (%(perm)s).") % {"perm": perm}
                )
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def denied(request: HtmxRequest, exc: Exception) -> HttpResponse | None:
    """The part of a refusal's answer no page words its own way: the 403 page when the
    role does not allow it, the 404 page for a missing row. None for any other refusal,
    whose message the page shows (see `refused`)."""
    if isinstance(exc, PermissionDenied):
        return forbidden(request, page_message(exc) or str(NOT_ALLOWED))
    if isinstance(exc, DomainError) and exc.code == "not_found":
        raise Http404(str(exc)) from exc
    return None


def refused(
    request: HtmxRequest, exc: Exception, *, back: str = "", event: str = ""
) -> HttpResponse:
    """A service said no. Beyond `denied`: an htmx request gets the message as a flash
    (409, with the client event `event` when given, e.g. to refresh a stale part); a
    plain form post is redirected to `back` with the message waiting there (without a
    `back`, the htmx-only endpoints answer the flash to it too)."""
    response = denied(request, exc)
    if response is not None:
        return response
    if request.htmx or not back:
        response = flash(request, page_message(exc), status=409)
        return trigger_client_event(response, event) if event else response
    messages.error(request, page_message(exc))
    return redirect(back)


def perform(
    request: HtmxRequest, call: Callable[[], object], *, done: str, back: str
) -> HttpResponse:
    """Run one service call from a plain form: redirect to `back` with a message either way."""
    try:
        call()
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    messages.success(request, done)
    return redirect(back)
