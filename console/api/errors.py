"""API errors as {"detail": ...} JSON, and the one mapping of a service's refusal
(DomainError) to its HTTP answer.

A refusal answers 409 {"detail", "code"}, except that "not_found" is a 404 {"detail"}
(the shape of every other 404), "invalid_params" a 400, and a view may answer more codes
as 400 (ConsoleApi.domain_error_status).

Every 4xx of the API carries a message a person can read: DRF's own errors already do; a
value the database cannot hold (a number beyond bigint, a date past year 9999) becomes
400 instead of a 500; and a URL under /api/ that matches no route (e.g. a negative id)
answers JSON 404 instead of the HTML page.
"""

from django.db import DataError
from django.http import HttpRequest, JsonResponse
from django.views.defaults import page_not_found
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from console.errors import DomainError

OUT_OF_RANGE = "A value in the request is out of range (too large, or a date beyond year 9999)."
STATUS_BY_CODE = {"not_found": 404, "invalid_params": 400}


def domain_error_response(exc: DomainError, view=None) -> Response:
    """The API's answer to a refusal, for `view` (its domain_error_status, if any)."""
    codes = {**STATUS_BY_CODE, **getattr(view, "domain_error_status", {})}
    status = codes.get(exc.code, 409)
    if status == 404:
        return Response({"detail": str(exc)}, status=status)
    return Response({"detail": str(exc), "code": exc.code}, status=status)


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return domain_error_response(exc, context.get("view"))
    if isinstance(exc, DataError | OverflowError):
        # A filter or body value that got past validation but not past the database or
        # date arithmetic: the request is at fault, so 400, never a 500.
        set_rollback()
        return Response({"detail": OUT_OF_RANGE, "code": "out_of_range"}, status=400)
    return drf_exception_handler(exc, context)


def not_found(request: HttpRequest, exception):
    """handler404: JSON under /api/ (clients parse it), the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"Nothing at {request.path[:200]}."}, status=404)
    return page_not_found(request, exception)
