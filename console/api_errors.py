"""API errors as {"detail": ...} JSON, with domain errors mapped to 409.

Every 4xx of the API carries a message a person can read: DRF's own errors already do;
a value the database cannot hold (a number beyond bigint, a date past year 9999) becomes
400 instead of a 500; and a URL under /api/ that matches no route (e.g. a negative id)
answers JSON 404 instead of the HTML page.
"""

from django.db import DataError
from django.http import JsonResponse
from django.views.defaults import page_not_found
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from console.errors import DomainError

OUT_OF_RANGE = "A value in the request is out of range (too large, or a date beyond year 9999)."


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        status = {"not_found": 404, "invalid_params": 400}.get(exc.code, 409)
        return Response({"detail": str(exc), "code": exc.code}, status=status)
    if isinstance(exc, DataError | OverflowError):
        # A filter or body value that got past validation but not past the database or
        # date arithmetic: the request is at fault, so 400, never a 500.
        set_rollback()
        return Response({"detail": OUT_OF_RANGE, "code": "out_of_range"}, status=400)
    return drf_exception_handler(exc, context)


def not_found(request, exception):
    """handler404: JSON under /api/ (clients parse it), the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"Nothing at {request.path[:200]}."}, status=404)
    return page_not_found(request, exception)
