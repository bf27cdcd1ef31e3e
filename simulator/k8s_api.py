"""The slice of the Kubernetes REST API the console's actions use, over the ObjectStore.

`KubeApi.handle` is a pure function of one HTTP request (the simulator's HTTP server owns
the sockets): real paths, JSON shapes, `resourceVersion` and 409 on stale writes, 404, 422,
401/403 with RBAC-style messages, `?dryRun=All`, JSON Patch / merge patch, the LWS `/scale`
subresource, discovery for kubectl-ish clients and SelfSubjectAccessReview.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote

from simulator.k8s_auth import Authenticator, access_review, allows, default_tokens, forbidden
from simulator.k8s_discovery import (
    AUTHZ_GROUP,
    RESOURCES,
    SERVER_VERSION,
    discovery,
    matches,
    object_fields,
    parse_selector,
)
from simulator.k8s_errors import ApiError, bad_request, conflict, from_store, invalid
from simulator.k8s_patch import PatchError, json_patch, merge_patch
from simulator.k8s_support import (
    JSON_PATCH,
    MERGE,
    STRATEGIC,
    VERBS,
    Target,
    check_shape,
    cordon_taint,
    media_type,
    method_not_allowed,
    parse_body,
    parse_dry_run,
    to_scale,
    unsupported_media_type,
)
from simulator.store import LWS, NODES, PODS, ObjectStore, StoreError, now_rfc3339

__all__ = ["ApiResponse", "KubeApi", "default_tokens"]

log = logging.getLogger(__name__)


@dataclass
class ApiResponse:
    status: int
    body: bytes
    content_type: str = "application/json"


def _json(status: int, body: dict) -> ApiResponse:
    return ApiResponse(status, json.dumps(body, separators=(",", ":")).encode())


class KubeApi:
    def __init__(self, store: ObjectStore, tokens: dict[str, set[str]]) -> None:
        self.store = store
        self.auth = Authenticator(tokens)

    def handle(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> ApiResponse:
        try:
            return self._handle(method.upper(), path, query, headers, body or b"")
        except ApiError as error:
            return _json(error.code, error.status())
        except Exception as exc:  # a bug here must still answer like an apiserver
            log.exception("simulated Kubernetes API failed on %s %s", method, path)
            return _json(500, ApiError(500, "InternalError", f"internal error: {exc}").status())

    # --- routing ----------------------------------------------------------------------
    def _handle(self, method, path, query, headers, body) -> ApiResponse:
        headers = {k.lower(): v for k, v in headers.items()}
        path, _, raw_query = path.partition("?")
        query = {**parse_qs(raw_query, keep_blank_values=True), **(query or {})}
        segments = [unquote(s) for s in path.split("/") if s]
        if segments == ["version"]:
            return _json(200, SERVER_VERSION)
        user, permissions = self.auth.authenticate(headers)
        doc = discovery(segments, headers.get("host", ""))
        if doc is not None:
            if method != "GET":
                raise method_not_allowed()
            return _json(200, doc)
        if segments == ["apis", AUTHZ_GROUP, "v1", "selfsubjectaccessreviews"]:
            if method != "POST":
                raise method_not_allowed()
            if media_type(headers) not in ("", "application/json"):
                raise unsupported_media_type("application/json")
            return _json(201, access_review(parse_body(body), user, permissions))
        target = self._route(segments)
        verb = VERBS.get((method, target.name is not None))
        if verb == "list" and query.get("watch", [""])[0] in ("true", "1"):
            verb = "watch"
        full = target.resource[2] + (f"/{target.subresource}" if target.subresource else "")
        if verb and not allows(permissions, verb, full):
            raise forbidden(
                user, verb, target.resource, target.subresource, target.name, target.namespace
            )
        supported = (
            (target.info.subresources or {}).get(target.subresource, ())
            if target.subresource
            else target.info.verbs
        )
        if verb not in supported:
            raise method_not_allowed()
        if verb == "get":
            obj = self._get(target)
            return _json(200, to_scale(obj) if target.subresource == "scale" else obj)
        if verb == "list":
            return _json(200, self._list(target, query))
        dry_run = parse_dry_run(query.get("dryRun", []))  # writes only, as in the apiserver
        if verb == "delete":
            return self._delete(target, body, dry_run, user)
        if method in ("POST", "PUT") and media_type(headers) not in ("", "application/json"):
            raise unsupported_media_type("application/json")
        if verb == "create":
            return self._create(target, parse_body(body), dry_run, user)
        if verb == "update":
            new = parse_body(body)
            return _json(200, self._write(target, self._get(target), new, user, dry_run, True))
        return self._patch(target, media_type(headers), body, dry_run, user)

    def _route(self, segments: list[str]) -> Target:
        if len(segments) >= 2 and segments[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", segments[2:]
        elif len(segments) >= 3 and segments[0] == "apis":
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        info = RESOURCES.get((group, version, rest[0])) if rest else None
        if info is None or len(rest) > 3 or (namespace and not info.namespaced):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if (name and info.namespaced and not namespace) or (
            sub and sub not in (info.subresources or {})
        ):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return Target(info, namespace, name, sub)

    # --- verbs ------------------------------------------------------------------------
    def _get(self, target: Target) -> dict:
        assert target.name is not None  # a get names its object (else it is a list)
        try:
            return self.store.get(target.resource, target.namespace, target.name)
        except StoreError as error:
            raise from_store(error, target.resource, target.name) from None

    def _list(self, target: Target, query: dict[str, list[str]]) -> dict:
        labels = parse_selector(query.get("labelSelector", [""])[0])
        fields = parse_selector(query.get("fieldSelector", [""])[0], sets=False)
        items = [
            obj
            for obj in self.store.list(target.resource, target.namespace)
            if matches(labels, obj.get("metadata", {}).get("labels") or {})
            and matches(fields, object_fields(obj))
        ]
        group, version, _ = target.resource
        return {
            "kind": f"{target.info.kind}List",
            "apiVersion": f"{group}/{version}" if group else version,
            "metadata": {"resourceVersion": self.store.resource_version()},
            "items": items,
        }

    def _create(self, target: Target, obj, dry_run: bool, user: str) -> ApiResponse:
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        self._check_identity(target, obj, meta.get("name"))
        if target.namespace:
            meta["namespace"] = target.namespace
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + self.store.resource_version()[-5:]
        meta.pop("resourceVersion", None)
        try:
            created = self.store.create(target.resource, obj, actor=user, dry_run=dry_run)
        except StoreError as error:
            raise from_store(error, target.resource, meta.get("name") or "") from None
        return _json(201, created)

    def _check_identity(self, target: Target, obj: dict, name) -> None:
        kind, api_version = obj.get("kind"), obj.get("apiVersion")
        group, version, _ = target.resource
        expected = {"scale": ("Scale", "autoscaling/v1")}.get(
            target.subresource or "", (target.info.kind, f"{group}/{version}" if group else version)
        )
        if (kind and kind != expected[0]) or (api_version and api_version != expected[1]):
            raise bad_request(
                f"the body is a {api_version}, Kind={kind}, expected "
                f"{expected[1]}, Kind={expected[0]}"
            )
        if target.name and name and name != target.name:
            raise bad_request(
                f"the name of the object ({name}) does not match the name on the URL "
                f"({target.name})"
            )
        namespace = (obj.get("metadata") or {}).get("namespace")
        if target.namespace and namespace and namespace != target.namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )

    def _write(self, target, current, new, user, dry_run, is_put) -> dict:
        """Store `new` (the object, or its Scale / status view) over `current`."""
        if not isinstance(new, dict) or not isinstance(new.get("metadata", {}), dict):
            raise bad_request("the request body must be a JSON object with object metadata")
        meta = new.get("metadata") or {}
        self._check_identity(target, new, meta.get("name"))
        resource, name = target.resource, target.name
        check_shape(new, resource, name)
        wanted_rv = meta.get("resourceVersion")
        if target.subresource == "scale":
            replicas = (new.get("spec") or {}).get("replicas", 0)
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise invalid(
                    ("autoscaling", "v1", "scale"),
                    name,
                    f"spec.replicas: Invalid value: {json.dumps(replicas)}: must be "
                    "greater than or equal to 0",
                    kind="Scale",
                )
            obj = copy.deepcopy(current)
            obj.setdefault("spec", {})["replicas"] = replicas
        elif target.subresource == "status":
            obj = copy.deepcopy(current)
            obj["status"] = new.get("status")
        else:
            obj = copy.deepcopy(new)
            if resource in (LWS, NODES) and "status" in current:  # a subresource: kept here
                obj["status"] = copy.deepcopy(current["status"])
            if resource == NODES:
                cordon_taint(obj)
            if resource == LWS and is_put and not wanted_rv:
                raise invalid(
                    resource,
                    name,
                    "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
                )
        obj.setdefault("metadata", {})["resourceVersion"] = wanted_rv
        if not wanted_rv:
            obj["metadata"].pop("resourceVersion")
        try:
            stored = self.store.update(
                resource, target.namespace, name, obj, actor=user, dry_run=dry_run
            )
        except StoreError as error:
            raise from_store(error, resource, name) from None
        return to_scale(stored) if target.subresource == "scale" else stored

    def _patch(self, target, mtype, body, dry_run, user) -> ApiResponse:
        if mtype == STRATEGIC and target.resource == LWS:
            raise unsupported_media_type(f"{JSON_PATCH}, {MERGE}, application/apply-patch+yaml")
        if mtype not in (MERGE, JSON_PATCH, STRATEGIC):
            raise unsupported_media_type(f"{JSON_PATCH}, {MERGE}, {STRATEGIC}")
        patch = parse_body(body)
        if mtype == JSON_PATCH:
            if not isinstance(patch, list):
                raise bad_request(
                    "json: cannot unmarshal object into Go value of type "
                    "jsonpatch.Patch (a JSON patch must be an array)"
                )
            pinned = any(
                str(op.get("path", "")).startswith("/metadata")
                for op in patch
                if isinstance(op, dict)
            )
        else:
            if not isinstance(patch, dict):
                raise bad_request(
                    f"a {mtype} patch must be a JSON object (for a list of "
                    f"operations send Content-Type {JSON_PATCH})"
                )
            pinned = "resourceVersion" in (patch.get("metadata") or {})
        for _attempt in range(5):  # the apiserver retries an unpinned patch on conflict
            current = self._get(target)
            view = to_scale(current) if target.subresource == "scale" else current
            try:
                if mtype == JSON_PATCH:
                    patched = json_patch(view, patch)
                else:
                    patched = merge_patch(view, patch)
            except PatchError as exc:
                raise ApiError(422, "Invalid", str(exc)) from None
            try:
                return _json(200, self._write(target, current, patched, user, dry_run, False))
            except ApiError as error:
                if error.reason != "Conflict" or pinned:
                    raise
        raise conflict(target.resource, target.name)

    def _delete(self, target: Target, body: bytes, dry_run: bool, user: str) -> ApiResponse:
        options = parse_body(body) if body.strip() else {}
        if not isinstance(options, dict):
            raise bad_request("DeleteOptions must be a JSON object")
        dry_run = dry_run or parse_dry_run(options.get("dryRun") or [])
        current = self._get(target)
        pre = options.get("preconditions") or {}
        meta = current["metadata"]
        if (pre.get("uid") and pre["uid"] != meta.get("uid")) or (
            pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion")
        ):
            raise ApiError(
                409,
                "Conflict",
                f"Precondition failed: {json.dumps(pre)} does not match the object",
                {"name": target.name, "kind": target.resource[2], "group": target.resource[0]},
            )
        assert target.name is not None  # a delete names its object
        try:
            deleted = self.store.delete(
                target.resource, target.namespace, target.name, actor=user, dry_run=dry_run
            )
        except StoreError as error:
            raise from_store(error, target.resource, target.name) from None
        if target.resource == PODS:  # graceful deletion answers with the terminating pod
            grace = options.get("gracePeriodSeconds", 30)
            deleted["metadata"]["deletionTimestamp"] = now_rfc3339()
            deleted["metadata"]["deletionGracePeriodSeconds"] = grace
            return _json(200, deleted)
        return _json(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {
                    "name": target.name,
                    "group": target.resource[0],
                    "kind": target.resource[2],
                    "uid": meta.get("uid"),
                },
            },
        )
