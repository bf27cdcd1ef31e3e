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
from django.utils.functional import lazy

from console.outgoing import failure_reason, service_request
from console.texts import Msg, msg


class FaultError(Exception):
    """The fault source refused or could not be reached; the message says which: `text`
    (parts, worded in each reader's language), str() its English."""

    def __init__(self, text: Msg) -> None:
        super().__init__(text.english)
        self.text = text

    def lazy_words(self) -> str:
        """The message in the active language when shown (a DomainError's parameter)."""
        return lazy(lambda: str(self.text), str)()


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
# What `clear` notes when the source does not report; drills/restore.py words it.
NO_REPORT_NOTE = "this simulator does not report what its clear restored"


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
            raise FaultError(msg("drills.error.url", url=repr(self.url)))
        try:
            # An overall deadline, not a per-read timeout: a simulator that drips its
            # answer cannot hold a drill's task (console/outgoing).
            resp = service_request(method, self.url + path, deadline=self.timeout)
        except requests.RequestException as exc:
            raise FaultError(
                msg("drills.error.no_answer", url=self.url, reason=failure_reason(exc))
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
                msg(
                    "drills.error.refused", method=method, path=path, status=status,
                    detail=str(body.get("error", body)),
                )
            )  # fmt: skip
        return body

    def faults(self) -> tuple[str, ...]:
        return SIMULATOR_FAULTS

    def check_target(self, *, fault: str, namespace: str, lws: str) -> None:
        if fault not in SIMULATOR_FAULTS:
            raise FaultError(
                msg("drills.error.no_fault", fault=repr(fault), faults=", ".join(SIMULATOR_FAULTS))
            )
        if (namespace, lws) != SIMULATOR_TARGET:
            raise FaultError(
                msg(
                    "drills.error.wrong_target", fault=fault, expected="/".join(SIMULATOR_TARGET),
                    target=f"{namespace}/{lws}",
                )
            )  # fmt: skip

    def inject(self, *, fault: str, namespace: str, lws: str) -> dict:
        self.check_target(fault=fault, namespace=namespace, lws=lws)
        return self._ok("POST", f"/sim/inject/{fault}")

    def clear(self, *, fault: str, namespace: str, lws: str) -> dict:
        body = self._ok("POST", f"/sim/clear/{fault}")
        if "report" not in body:
            # A simulator from before issue 25 clears but does not say what it took back.
            body["note"] = NO_REPORT_NOTE
        return body

    def status(self) -> dict:
        return self._ok("GET", "/sim/status")


ADAPTERS = {"simulator": SimulatorAdapter}


def adapter_for(name: str) -> FaultAdapter:
    cls = ADAPTERS.get(name)
    if cls is None:
        raise FaultError(msg("drills.error.no_adapter", name=repr(name), names=", ".join(ADAPTERS)))
    return cls()
