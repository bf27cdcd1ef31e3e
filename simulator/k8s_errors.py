"""Kubernetes `Status` error objects for the simulated API (the shapes the apiserver sends).

Messages follow the real apiserver's wording, e.g. `configmaps "x" not found` or
`Operation cannot be fulfilled on configmaps "x": the object has been modified; ...`, so a
client's error handling (and a human reading a timeline) sees what it would see in production.
"""

from __future__ import annotations

from simulator.store import KINDS, AlreadyExists, Conflict, Invalid, NotFound, Resource, StoreError


class ApiError(Exception):
    """An error answered as a Kubernetes Status object."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details

    def status(self) -> dict:
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def qualified(resource: Resource) -> str:
    """`leaderworkersets.leaderworkerset.x-k8s.io` or `configmaps` (the group-resource)."""
    group, _, plural = resource
    return f"{plural}.{group}" if group else plural


def details(resource: Resource, name: str | None) -> dict:
    out = {"group": resource[0], "kind": resource[2]}
    if name:
        out["name"] = name
    return out


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def not_found(resource: Resource, name: str) -> ApiError:
    return ApiError(
        404, "NotFound", f'{qualified(resource)} "{name}" not found', details(resource, name)
    )


def invalid(resource: Resource, name: str, message: str, kind: str | None = None) -> ApiError:
    """422 Invalid, worded as `Kind.group "name" is invalid: field: ...`."""
    group = resource[0]
    kind = kind or KINDS.get(resource, resource[2])
    subject = f"{kind}.{group}" if group else kind
    field = message.split(":", 1)[0] if ": " in message else ""
    return ApiError(
        422,
        "Invalid",
        f'{subject} "{name}" is invalid: {message}',
        {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [{"reason": "FieldValueInvalid", "message": message, "field": field}],
        },
    )


def conflict(resource: Resource, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource)} "{name}": the object has '
        "been modified; please apply your changes to the latest version and try again",
        details(resource, name),
    )


def from_store(error: StoreError, resource: Resource, name: str) -> ApiError:
    """Translate an ObjectStore error into the apiserver's Status for this resource."""
    if isinstance(error, NotFound):
        return not_found(resource, name)
    if isinstance(error, AlreadyExists):
        return ApiError(
            409,
            "AlreadyExists",
            f'{qualified(resource)} "{name}" already exists',
            details(resource, name),
        )
    if isinstance(error, Conflict):
        return conflict(resource, name)
    if isinstance(error, Invalid):
        return invalid(resource, name, error.message)
    return ApiError(error.status, error.reason, error.message, details(resource, name))
