"""Fault injection for the simulated Kubernetes API (tests and demos of the console's
safety: retries, conflicts, a worker dying mid-write). Real clusters fail like this too;
here it happens on demand.

POST /sim/faults adds a rule, DELETE /sim/faults clears them, GET lists them. A rule
matches requests by method and a substring of the path and fires `times` times:
- "error": answer `status` (default 503) without touching anything;
- "bump": first apply `patch` (a JSON merge patch) to the object as a concurrent writer
  would, so the request's resourceVersion is stale and the API answers a real 409;
- "delay": handle the request, then hold the answer back `seconds` (the write has landed
  but the client does not know yet).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

from simulator.k8s_patch import merge_patch
from simulator.store import CLUSTER_SCOPED, CONFIGMAPS, LWS, NODES, PODS, ObjectStore

RESOURCES = {"leaderworkersets": LWS, "configmaps": CONFIGMAPS, "pods": PODS, "nodes": NODES}
ACTIONS = ("error", "bump", "delay")
CONCURRENT_WRITER = "chaos:concurrent-writer"


@dataclass
class Rule:
    method: str
    path: str
    action: str
    times: int = 1
    status: int = 503
    seconds: float = 0.0
    resource: str = ""
    namespace: str = ""
    name: str = ""
    patch: dict | None = None
    include_dry_run: bool = False  # by default a rule bends real writes, not dry runs

    @classmethod
    def parse(cls, body: dict) -> Rule:
        if not isinstance(body, dict):
            raise ValueError("a rule is a JSON object")
        rule = cls(
            method=str(body.get("method", "")).upper(),
            path=str(body.get("path", "")),
            action=str(body.get("action", "")),
            times=int(body.get("times", 1)),
            status=int(body.get("status", 503)),
            seconds=float(body.get("seconds", 0)),
            resource=str(body.get("resource", "")),
            namespace=str(body.get("namespace", "")),
            name=str(body.get("name", "")),
            patch=body.get("patch"),
            include_dry_run=bool(body.get("include_dry_run", False)),
        )
        if rule.action not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
        if rule.action == "bump" and (rule.resource not in RESOURCES or not rule.name):
            raise ValueError("bump needs resource (e.g. leaderworkersets), name and a patch")
        if not 0 <= rule.seconds <= 120 or not 1 <= rule.times <= 1000:
            raise ValueError("seconds must be 0..120 and times 1..1000")
        return rule

    def matches(self, method: str, path: str, dry_run: bool) -> bool:
        if dry_run and not self.include_dry_run:
            return False
        return (not self.method or self.method == method) and self.path in path

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Faults:
    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self.rules: list[Rule] = []
        self._lock = threading.Lock()

    def control(self, method: str, body: bytes) -> tuple[int, dict]:
        if method == "DELETE":
            with self._lock:
                self.rules.clear()
            return 200, {"rules": []}
        if method == "POST":
            try:
                rule = Rule.parse(json.loads(body or b"{}"))
            except (ValueError, TypeError) as exc:
                return 400, {"error": str(exc)}
            with self._lock:
                self.rules.append(rule)
        with self._lock:
            return 200, {"rules": [r.as_dict() for r in self.rules]}

    def _take(self, method: str, path: str, dry_run: bool) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.matches(method, path, dry_run):
                    rule.times -= 1
                    if rule.times <= 0:
                        self.rules.remove(rule)
                    return rule
        return None

    def around(self, method: str, path: str, handle, fail, *, dry_run: bool = False):
        """Answer a request with `handle()`, or `fail(status)`, bent by a matching rule."""
        rule = self._take(method, path, dry_run)
        if rule is None:
            return handle()
        if rule.action == "error":
            return fail(rule.status)
        if rule.action == "bump":
            resource = RESOURCES[rule.resource]
            namespace = None if resource in CLUSTER_SCOPED else (rule.namespace or "llm-serving")
            self.store.mutate(
                resource,
                namespace,
                rule.name,
                lambda obj: obj.update(merge_patch(obj, rule.patch or {})),
                actor=CONCURRENT_WRITER,
            )
            return handle()
        result = handle()
        time.sleep(rule.seconds)
        return result
