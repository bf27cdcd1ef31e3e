"""How a drill injects its fault: one small interface, one implementation per fault source.

`FaultAdapter` is the whole contract. `SimulatorAdapter` speaks the fleet simulator's HTTP
controls (`POST /sim/inject/<slug>`, `POST /sim/clear/<slug>`, `GET /sim/status`). On a
real cluster an adapter for Chaos Mesh or Litmus would implement the same four calls;
docs/drills.md says how they map. None ships here, on purpose: a fake one would let a
drill "pass" without any fault in the cluster.

A drill takes back only what its own fault changed (issue 25): `inject` answers the
changes it made (`changes`: object, field, before, after) and `clear` reverts each only
where the field still holds the fault's value, answering a `report` of what it restored,
cleared or left alone (and who changed it since). There is no "restore the baseline":
resetting the fleet would undo the fixes responders made while the drill ran.
"""

from __future__ import annotations

from typing import Protocol

import requests
from django.conf import settings

from console.outgoing import failure_reason, service_request


class FaultError(Exception):
    """The fault source refused or could not be reached; the message says which."""


class FaultAdapter(Protocol):
    name: str
    title: str

    def faults(self) -> tuple[str, ...]:
        """The faults this adapter can inject, by name."""

    def check_target(self, *, fault: str, namespace: str, lws: str) -> None:
        """Raise FaultError when `fault` would not hit (only) this target."""

    def inject(self, *, fault: str, namespace: str, lws: str) -> dict:
        """Start the fault; returns evidence (what the source answered), with `changes`:
        one {kind, object, field, before, after} per change the fault made."""

    def clear(self, *, fault: str, namespace: str, lws: str) -> dict:
        """Stop the fault, taking back only its own changes; idempotent. Returns `active`
        (was the fault still on) and `report`: each change with `result` restored,
        cleared, left (someone changed it since; `now`, `changed_by`) or not_undoable."""

    def status(self) -> dict:
        """What the source says is active now."""


# The simulator's eight scenarios are named by their runbook slugs and all act on the
# chat pool (simulator/scenarios.py), so that is the only target they may be aimed at.
SIMULATOR_FAULTS = (
    "ttft-spike",
    "nccl-hang",
    "prefix-cache-drop",
    "retry-storm",
    "garbage-output",
    "ecc-errors",
    "cuda-graph-capture",
    "long-context-kv",
)
SIMULATOR_TARGET = ("llm-serving", "vllm-chat")


def simulator_url() -> str:
    return str(settings.DRILLS_SIMULATOR_URL).rstrip("/")


class SimulatorAdapter:
    name = "simulator"
    title = "Fleet simulator (scenarios)"

    def __init__(self, url: str | None = None, timeout: float | None = None) -> None:
        self.url = (url or simulator_url()).rstrip("/")
        self.timeout = float(timeout or settings.ACTIONS_K8S_TIMEOUT_SECONDS)

    def _call(self, method: str, path: str) -> tuple[int, dict]:
        if not self.url.startswith(("http://", "https://")):
            raise FaultError(f"the simulator URL must be http(s)://..., got {self.url!r}")
        try:
            # An overall deadline, not a per-read timeout: a simulator that drips its
            # answer cannot hold a drill's task (console/outgoing).
            resp = service_request(method, self.url + path, deadline=self.timeout)
        except requests.RequestException as exc:
            raise FaultError(
                f"the fleet simulator at {self.url} did not answer ({failure_reason(exc)})"
            ) from None
        try:
            body = resp.json() if resp.content else {}
        except ValueError:
            body = {}
        return resp.status_code, body if isinstance(body, dict) else {}

    def _ok(self, method: str, path: str) -> dict:
        status, body = self._call(method, path)
        if status >= 400:
            raise FaultError(
                f"the simulator refused {method} {path} ({status}): {body.get('error', body)}"
            )
        return body

    def faults(self) -> tuple[str, ...]:
        return SIMULATOR_FAULTS

    def check_target(self, *, fault: str, namespace: str, lws: str) -> None:
        if fault not in SIMULATOR_FAULTS:
            raise FaultError(
                f"the simulator has no fault {fault!r}; it has {', '.join(SIMULATOR_FAULTS)}"
            )
        if (namespace, lws) != SIMULATOR_TARGET:
            raise FaultError(
                f"the simulator's {fault} scenario acts on {'/'.join(SIMULATOR_TARGET)}, "
                f"not on {namespace}/{lws}"
            )

    def inject(self, *, fault: str, namespace: str, lws: str) -> dict:
        self.check_target(fault=fault, namespace=namespace, lws=lws)
        return self._ok("POST", f"/sim/inject/{fault}")

    def clear(self, *, fault: str, namespace: str, lws: str) -> dict:
        body = self._ok("POST", f"/sim/clear/{fault}")
        if "report" not in body:
            # A simulator from before issue 25 clears but does not say what it took back.
            body["note"] = "this simulator does not report what its clear restored"
        return body

    def status(self) -> dict:
        return self._ok("GET", "/sim/status")


ADAPTERS = {"simulator": SimulatorAdapter}


def adapter_for(name: str) -> FaultAdapter:
    cls = ADAPTERS.get(name)
    if cls is None:
        raise FaultError(f"there is no fault adapter {name!r}; known: {', '.join(ADAPTERS)}")
    return cls()
