"""Request plumbing shared by the simulated API: media types, bodies, dry run, views."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from simulator.k8s_discovery import ResourceInfo
from simulator.k8s_errors import ApiError, bad_request, invalid
from simulator.store import NODES, Resource, now_rfc3339

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
VERBS = {
    ("GET", True): "get",
    ("GET", False): "list",
    ("POST", False): "create",
    ("PUT", True): "update",
    ("PATCH", True): "patch",
    ("DELETE", True): "delete",
    ("DELETE", False): "deletecollection",
}


@dataclass
class Target:
    info: ResourceInfo
    namespace: str | None
    name: str | None
    subresource: str | None

    @property
    def resource(self):
        return self.info.resource


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )


def media_type(headers: dict[str, str]) -> str:
    return headers.get("content-type", "").split(";", 1)[0].strip().lower()


def parse_body(body: bytes):
    if not body:
        raise bad_request("the request body is empty; expected a JSON document")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad_request(f"the request body is not valid JSON: {exc}") from None


def parse_dry_run(values: list[str]) -> bool:
    for value in values:
        if value != "All":
            raise bad_request(f"Invalid dryRun value: {value!r} (only 'All' is supported)")
    return bool(values)


def to_scale(lws: dict) -> dict:
    """The autoscaling/v1 Scale view of a LeaderWorkerSet (specReplicasPath .spec.replicas)."""
    meta, status = lws["metadata"], lws.get("status") or {}
    scale: dict[str, Any] = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": (lws.get("spec") or {}).get("replicas", 1)},
        "status": {"replicas": status.get("replicas", 0)},
    }
    if status.get("hpaPodSelector"):
        scale["status"]["selector"] = status["hpaPodSelector"]
    return scale


def cordon_taint(node: dict) -> None:
    """What the node lifecycle controller does: unschedulable <=> the unschedulable taint."""
    spec = node.setdefault("spec", {})
    taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT]
    if spec.get("unschedulable"):
        old = [t for t in spec.get("taints") or [] if t.get("key") == UNSCHEDULABLE_TAINT]
        taints.append(
            old[0]
            if old
            else {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": now_rfc3339()}
        )
    spec["taints"] = taints


def unsupported_media_type(accepted: str) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + accepted,
    )


def check_shape(obj: dict, resource: Resource, name: str) -> None:
    """422 for wrongly typed top-level fields, before the store's validators see them."""
    for key in ("spec", "status", "data"):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            raise invalid(resource, name, f"{key}: Invalid value: must be an object")
    taints = (obj.get("spec") or {}).get("taints") or []
    if resource == NODES and not (
        isinstance(taints, list) and all(isinstance(t, dict) for t in taints)
    ):
        raise invalid(resource, name, "spec.taints: Invalid value: must be a list of objects")
