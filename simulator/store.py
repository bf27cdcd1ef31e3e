"""The simulated cluster's object store: Kubernetes objects as plain dicts.

Semantics that matter to clients are real: a global, increasing `resourceVersion`;
an update naming a stale resourceVersion fails with Conflict (HTTP 409); unknown
objects are NotFound (404); invalid ones are Invalid (422); dry runs validate and
answer without storing. Every change is kept in a bounded history, so a bad
ConfigMap edit stays visible after the fact.
"""

from __future__ import annotations

import builtins
import copy
import itertools
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

# (group, version, plural); group "" is the core API.
Resource = tuple[str, str, str]
LWS: Resource = ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets")
CONFIGMAPS: Resource = ("", "v1", "configmaps")
PODS: Resource = ("", "v1", "pods")
NODES: Resource = ("", "v1", "nodes")
CLUSTER_SCOPED = {NODES}
KINDS = {LWS: "LeaderWorkerSet", CONFIGMAPS: "ConfigMap", PODS: "Pod", NODES: "Node"}


class StoreError(Exception):
    status = 500
    reason = "InternalError"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(StoreError):
    status, reason = 404, "NotFound"


class Conflict(StoreError):
    status, reason = 409, "Conflict"


class AlreadyExists(StoreError):
    status, reason = 409, "AlreadyExists"


class Invalid(StoreError):
    status, reason = 422, "Invalid"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Change:
    at: str
    actor: str
    verb: str
    resource: Resource
    namespace: str | None
    name: str
    resource_version: str
    before: dict | None
    after: dict | None
    # Wall-clock seconds with sub-millisecond precision (benchmarks time writes by it).
    epoch: float = field(default_factory=time.time)


Validator = Callable[[dict], None]  # raises Invalid


@dataclass
class ObjectStore:
    _objects: dict = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _rv: itertools.count = field(default_factory=lambda: itertools.count(1000))
    history: deque = field(default_factory=lambda: deque(maxlen=1000))
    validators: dict[Resource, Validator] = field(default_factory=dict)

    @staticmethod
    def _key(resource: Resource, namespace: str | None, name: str) -> tuple:
        return (resource, None if resource in CLUSTER_SCOPED else namespace, name)

    def _describe(self, resource: Resource, namespace: str | None, name: str) -> str:
        kind = KINDS.get(resource, resource[2])
        where = (
            f" in namespace {namespace!r}" if namespace and resource not in CLUSTER_SCOPED else ""
        )
        return f'{resource[2]}{"." + resource[0] if resource[0] else ""} "{name}"{where} ({kind})'

    # --- reads --------------------------------------------------------------------
    def get(self, resource: Resource, namespace: str | None, name: str) -> dict:
        with self._lock:
            obj = self._objects.get(self._key(resource, namespace, name))
            if obj is None:
                raise NotFound(f"{self._describe(resource, namespace, name)} not found")
            return copy.deepcopy(obj)

    def list(
        self,
        resource: Resource,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
    ) -> list[dict]:
        with self._lock:
            out = []
            for (res, ns, _), obj in self._objects.items():
                if res != resource or (namespace is not None and ns not in (None, namespace)):
                    continue
                have = obj.get("metadata", {}).get("labels", {})
                if labels and any(have.get(k) != v for k, v in labels.items()):
                    continue
                out.append(copy.deepcopy(obj))
            return sorted(out, key=lambda o: o["metadata"]["name"])

    def resource_version(self) -> str:
        with self._lock:
            return str(next(self._rv))

    # --- writes -------------------------------------------------------------------
    def _validate(self, resource: Resource, obj: dict) -> None:
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            raise Invalid("metadata.name: Required value")
        check = self.validators.get(resource)
        if check:
            check(obj)

    def _record(self, verb, resource, namespace, name, before, after, actor) -> None:
        rv = (after or before or {}).get("metadata", {}).get("resourceVersion", "")
        self.history.append(
            Change(now_rfc3339(), actor, verb, resource, namespace, name, rv,
                   copy.deepcopy(before), copy.deepcopy(after))
        )  # fmt: skip

    def create(
        self, resource: Resource, obj: dict, *, actor: str = "system", dry_run: bool = False
    ) -> dict:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        namespace = None if resource in CLUSTER_SCOPED else meta.get("namespace")
        with self._lock:
            self._validate(resource, obj)
            key = self._key(resource, namespace, meta["name"])
            if key in self._objects:
                raise AlreadyExists(
                    f"{self._describe(resource, namespace, meta['name'])} already exists"
                )
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now_rfc3339())
            meta["generation"] = 1
            meta["resourceVersion"] = (
                str(next(self._rv)) if not dry_run else meta.get("resourceVersion", "")
            )
            obj.setdefault("apiVersion", f"{resource[0]}/{resource[1]}".lstrip("/"))
            obj.setdefault("kind", KINDS.get(resource, ""))
            if dry_run:
                return obj
            self._objects[key] = obj
            self._record("create", resource, namespace, meta["name"], None, obj, actor)
            return copy.deepcopy(obj)

    def update(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        obj: dict,
        *,
        actor: str = "system",
        dry_run: bool = False,
        check_version: bool = True,
    ) -> dict:
        """Replace an object. With check_version, a resourceVersion in `obj` that is not
        the current one is a Conflict (optimistic concurrency, as in Kubernetes)."""
        obj = copy.deepcopy(obj)
        with self._lock:
            key = self._key(resource, namespace, name)
            current = self._objects.get(key)
            if current is None:
                raise NotFound(f"{self._describe(resource, namespace, name)} not found")
            wanted_rv = (obj.get("metadata") or {}).get("resourceVersion")
            have_rv = current["metadata"]["resourceVersion"]
            if check_version and wanted_rv and wanted_rv != have_rv:
                what = self._describe(resource, namespace, name)
                raise Conflict(
                    f"Operation cannot be fulfilled on {what}: "
                    "the object has been modified; please apply your changes to the latest "
                    "version and try again"
                )
            meta = obj.setdefault("metadata", {})
            if meta.get("name", name) != name:
                raise Invalid(
                    f"metadata.name: Invalid value: {meta.get('name')!r}: field is immutable"
                )
            for keep in ("name", "namespace", "uid", "creationTimestamp"):
                if keep in current["metadata"]:
                    meta[keep] = current["metadata"][keep]
            meta["generation"] = current["metadata"].get("generation", 1) + (
                1 if obj.get("spec") != current.get("spec") else 0
            )
            obj.setdefault("apiVersion", current.get("apiVersion"))
            obj.setdefault("kind", current.get("kind"))
            self._validate(resource, obj)
            if dry_run:
                meta["resourceVersion"] = have_rv
                return obj
            meta["resourceVersion"] = str(next(self._rv))
            self._objects[key] = obj
            self._record("update", resource, namespace, name, current, obj, actor)
            return copy.deepcopy(obj)

    def mutate(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        change: Callable[[dict], None],
        *,
        actor: str = "controller",
    ) -> dict:
        """Read-modify-write under the store lock (controllers updating status)."""
        with self._lock:
            obj = self.get(resource, namespace, name)
            change(obj)
            obj["metadata"].pop("resourceVersion", None)
            return self.update(resource, namespace, name, obj, actor=actor, check_version=False)

    def delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        actor: str = "system",
        dry_run: bool = False,
    ) -> dict:
        with self._lock:
            key = self._key(resource, namespace, name)
            current = self._objects.get(key)
            if current is None:
                raise NotFound(f"{self._describe(resource, namespace, name)} not found")
            if dry_run:
                return copy.deepcopy(current)
            del self._objects[key]
            self._record("delete", resource, namespace, name, current, None, actor)
            return copy.deepcopy(current)

    def changes(
        self, resource: Resource | None = None, name: str | None = None
    ) -> builtins.list[Change]:  # `list` is also a method of this class
        with self._lock:
            return [
                c for c in self.history
                if (resource is None or c.resource == resource) and (name is None or c.name == name)
            ]  # fmt: skip
