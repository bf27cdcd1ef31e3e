"""The one-tap acknowledge page (no sign-in: the signed link is the credential).

GET shows the incident and the button, and never acknowledges (chat apps and mail
scanners fetch links to preview them). POST acknowledges. A bad or expired link
answers 400 with what to do, a refused acknowledgement 409 (403 without the role).
The page speaks the paged person's language when they chose one in the console, else
the browser's.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from console.errors import DomainError, page_message
from pager.models import Page
from pager.paging.ack import AckRefused, ack_problem, page_ack_by_token, page_for_token
from pager.paging.messages import chosen_language

TEMPLATE = "pager/ack.html"


def _answer(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    response = render(request, TEMPLATE, context, status=status)
    # The token is in the URL: no referrer carries it elsewhere, no robot keeps it.
    response["Referrer-Policy"] = "same-origin"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@never_cache
@require_http_methods(["GET", "POST"])
def page_ack(request: HttpRequest, token: str) -> HttpResponse:
    try:
        page = page_for_token(token=token)
    except AckRefused as exc:
        return _answer(request, {"error": page_message(exc)}, status=exc.status)
    with translation.override(chosen_language(page.user) or translation.get_language()):
        if request.method == "GET":
            problem = ack_problem(page)
            return _answer(request, _context(page, problem=problem and page_message(problem)))
        try:
            page = page_ack_by_token(token=token)
        except AckRefused as exc:
            return _answer(request, _context(page, problem=page_message(exc)), status=exc.status)
        except DomainError as exc:  # incidents' own refusal (a move it will not make)
            return _answer(request, _context(page, problem=page_message(exc)), status=409)
        return _answer(request, _context(page, done=True))


def _context(page: Page, **extra: Any) -> dict[str, Any]:
    page.incident.refresh_from_db()
    return {"page": page, "incident": page.incident, **extra}
