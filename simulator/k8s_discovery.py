"""What the simulated API serves: the resource table, discovery documents, selectors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from simulator.k8s_errors import ApiError
from simulator.store import CONFIGMAPS, LWS, NODES, PODS, Resource

LWS_GROUP = LWS[0]
AUTHZ_GROUP = "authorization.k8s.io"
SERVER_VERSION = {
    "major": "1",
    "minor": "33",
    "gitVersion": "v1.33.0-vllm-sim",
    "platform": "linux/amd64",
}


@dataclass(frozen=True)
class ResourceInfo:
    resource: Resource
    kind: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    subresources: dict[str, tuple[str, ...]] | None = None


RESOURCES: dict[Resource, ResourceInfo] = {
    LWS: ResourceInfo(
        LWS,
        "LeaderWorkerSet",
        "leaderworkerset",
        True,
        ("create", "get", "list", "patch", "update"),
        ("lws",),
        {"scale": ("get", "patch", "update"), "status": ("get", "patch", "update")},
    ),
    CONFIGMAPS: ResourceInfo(
        CONFIGMAPS,
        "ConfigMap",
        "configmap",
        True,
        ("create", "delete", "get", "list", "patch", "update"),
        ("cm",),
    ),
    PODS: ResourceInfo(PODS, "Pod", "pod", True, ("delete", "get", "list"), ("po",)),
    NODES: ResourceInfo(NODES, "Node", "node", False, ("get", "list", "patch", "update"), ("no",)),
}


def _resource_entries(group: str, version: str) -> list[dict]:
    out = []
    for (g, v, plural), info in RESOURCES.items():
        if (g, v) != (group, version):
            continue
        out.append(
            {
                "name": plural,
                "singularName": info.singular,
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": list(info.verbs),
                "shortNames": list(info.short_names),
            }
        )
        for sub, verbs in (info.subresources or {}).items():
            entry = {
                "name": f"{plural}/{sub}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": list(verbs),
            }
            if sub == "scale":
                entry.update(group="autoscaling", version="v1", kind="Scale")
            out.append(entry)
    return out


def _group(name: str, version: str = "v1") -> dict:
    gv = {"groupVersion": f"{name}/{version}", "version": version}
    return {"name": name, "versions": [gv], "preferredVersion": gv}


def discovery(segments: list[str], host: str) -> dict | None:
    """The discovery document at /api, /api/v1, /apis, /apis/<g>, /apis/<g>/<v>, or None."""
    if segments == ["api"]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
        }
    if segments == ["api", "v1"]:
        return {
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": _resource_entries("", "v1"),
        }
    if segments == ["apis"]:
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [_group(LWS_GROUP), _group(AUTHZ_GROUP)],
        }
    if segments in (["apis", LWS_GROUP], ["apis", AUTHZ_GROUP]):
        return {"kind": "APIGroup", "apiVersion": "v1", **_group(segments[1])}
    if segments == ["apis", LWS_GROUP, "v1"]:
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{LWS_GROUP}/v1",
            "resources": _resource_entries(LWS_GROUP, "v1"),
        }
    if segments == ["apis", AUTHZ_GROUP, "v1"]:
        review = {
            "name": "selfsubjectaccessreviews",
            "singularName": "selfsubjectaccessreview",
            "namespaced": False,
            "kind": "SelfSubjectAccessReview",
            "verbs": ["create"],
        }
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{AUTHZ_GROUP}/v1",
            "resources": [review],
        }
    return None


# --- label and field selectors ----------------------------------------------------------
_SET = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_KEY = re.compile(r"^[A-Za-z0-9]([\w./-]*[A-Za-z0-9])?$")


def _split(selector: str) -> list[str]:
    """Split on commas that are not inside a set's parentheses."""
    parts, depth, current = [], 0, ""
    for ch in selector:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def parse_selector(selector: str, *, sets: bool = True) -> list[tuple[str, str, set[str]]]:
    """`a=b,c!=d,e,!f,g in (x,y)` -> [(key, op, values)]; op is =, !=, in, notin, exists, !."""
    out = []
    for part in _split(selector or ""):
        match = _SET.match(part) if sets else None
        if match:
            values = {v.strip() for v in match.group(3).split(",") if v.strip()}
            key, op = match.group(1), match.group(2)
        elif "!=" in part:
            key, value = part.split("!=", 1)
            key, op, values = key.strip(), "!=", {value.strip()}
        elif "=" in part:
            key, value = part.split("==", 1) if "==" in part else part.split("=", 1)
            key, op, values = key.strip(), "=", {value.strip()}
        elif sets and part.startswith("!"):
            key, op, values = part[1:].strip(), "!", set()
        elif sets:
            key, op, values = part, "exists", set()
        else:
            raise ApiError(400, "BadRequest", f"invalid field selector: {part!r}")
        if not _KEY.match(key):
            raise ApiError(400, "BadRequest", f"unable to parse requirement: invalid key {key!r}")
        out.append((key, op, values))
    return out


def matches(requirements: list[tuple[str, str, set[str]]], fields: dict[str, str]) -> bool:
    for key, op, values in requirements:
        have = fields.get(key)
        ok = {
            "=": have in values,
            "in": have in values,
            "!=": have not in values,
            "notin": have not in values,
            "exists": have is not None,
            "!": have is None,
        }[op]
        if not ok:
            return False
    return True


def object_fields(obj: dict) -> dict[str, str]:
    """The fields a fieldSelector can name (the ones the apiserver supports for our kinds)."""
    meta, spec, status = obj.get("metadata", {}), obj.get("spec", {}), obj.get("status", {})
    fields = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace")}
    if obj.get("kind") == "Pod":
        fields["spec.nodeName"] = spec.get("nodeName", "")
        fields["status.phase"] = status.get("phase", "")
    if obj.get("kind") == "Node":
        fields["spec.unschedulable"] = str(bool(spec.get("unschedulable"))).lower()
    return {k: v for k, v in fields.items() if v is not None}
