"""API errors as {"detail": ...} JSON, with domain errors mapped to 409."""

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from console.errors import DomainError


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        status = {"not_found": 404, "invalid_params": 400}.get(exc.code, 409)
        return Response({"detail": str(exc), "code": exc.code}, status=status)
    return drf_exception_handler(exc, context)
