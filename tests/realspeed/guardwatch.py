"""What the guard thought of the suite's fixes, read through the REST API only.

A fix's guard is on its run (`guard`: verdict, verdict_reason, signals, outcome,
undo_run); an undo is a run with `undo_of`; the guard's own requests are runs requested
by its service account (GUARD_USERNAME); a guard on a change made outside the console
(a ConfigMap revision) has no run, so it is found on the incident timelines (events whose
payload carries `guard`).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from tests.drill_stack import api

GUARD_USER = "console-guard"  # config/settings/apps.py GUARD_USERNAME's default
POLL_SECONDS = 15


def pages(session, url: str) -> list[dict]:
    out: list[dict] = []
    while url:
        data = api(session, "GET", url).json()
        out += data["results"]
        url = data.get("next") or ""
    return out


def all_runs(stack, session=None) -> list[dict]:
    return pages(session or stack["session"], stack["base"] + "/api/v1/actions/")


def timeline(stack, iid: int, session=None) -> list[dict]:
    url = f"{stack['base']}/api/v1/incidents/{iid}/timeline/"
    return pages(session or stack["session"], url)


def fix_text(run: dict) -> str:
    return f"#{run['id']} {run['kind']} {run['params']} on {run['target']}"


def guard_text(guard: dict | None) -> str:
    if not guard:
        return "no guard"
    text = f"guard #{guard['id']} {guard['verdict']}"
    if guard.get("verdict_reason"):
        text += f" ({guard['verdict_reason']})"
    if guard.get("outcome"):
        text += f", outcome {guard['outcome']}"
    if guard.get("undo_run"):
        text += f" -> undo #{guard['undo_run']}"
    return text


def findings(stack, fixes: dict[int, str], incident_ids: list[int], session=None) -> list[str]:
    """Everything the guard held against the fixes ({run id: scenario}): breaches, undos
    of them, any run the guard requested, and guard breaches on outside changes."""
    runs = all_runs(stack, session)
    by_id = {r["id"]: r for r in runs}
    out: list[str] = []
    for rid, slug in fixes.items():
        run = by_id.get(rid)
        if run is None:
            out.append(f"{slug}: fix #{rid} is missing from /api/v1/actions/")
            continue
        guard = run.get("guard") or {}
        if guard.get("verdict") == "breached" or guard.get("outcome"):
            out.append(f"{slug}: fix {fix_text(run)}: {guard_text(guard)}")
    for run in runs:
        if run.get("undo_of") in fixes:
            slug = fixes[run["undo_of"]]
            out.append(f"{slug}: fix #{run['undo_of']} was undone by #{run['id']} "
                       f"({run['status']}, requested by {run['requested_by']})")  # fmt: skip
        elif run["requested_by"] == GUARD_USER:
            out.append(f"the guard requested {fix_text(run)} ({run['status']}) on incident "
                       f"#{run['incident']}, undo_of={run.get('undo_of')}")  # fmt: skip
    for iid in incident_ids:
        for event in timeline(stack, iid, session):
            payload = event.get("payload") or {}
            if "guard" not in payload or payload.get("run") in fixes:
                continue  # the fixes' own guards are judged above, from their runs
            if payload.get("verdict") == "breached" or payload.get("undo_run"):
                out.append(f"incident #{iid}: {event['message']}")
    return out


class GuardMonitor(threading.Thread):
    """Polls the runs while the suite runs and notes, with the time and the scenario in
    progress, every change of a guard's verdict and every run the guard requests: the
    end result says what happened, this says when (e.g. during the next scenario)."""

    def __init__(self, stack) -> None:
        super().__init__(daemon=True, name="realspeed-guard-monitor")
        self.stack = stack
        self.current = "start-up"
        self.fixes: dict[int, str] = {}
        self.events: list[dict] = []
        self.errors = 0
        self._seen: set[tuple] = set()
        self._halt = threading.Event()
        self._session = None

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=POLL_SECONDS * 2)

    def note(self, what: str, **details) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        self.events.append({"at": at, "during": self.current, "what": what, **details})
        print(f"[guard monitor {at} during {self.current}] {what}", flush=True)

    def poll(self) -> None:
        if self._session is None:
            self._session = self.stack["login"]()
        for run in all_runs(self.stack, self._session):
            guard = run.get("guard")
            if guard:
                key = ("guard", guard["id"], guard["verdict"], guard.get("outcome"))
                if key not in self._seen:
                    self._seen.add(key)
                    owner = self.fixes.get(run["id"], "not a suite fix")
                    self.note(f"{owner}: fix {fix_text(run)}: {guard_text(guard)}",
                              run=run["id"], guard=guard["id"], verdict=guard["verdict"],
                              reason=guard.get("verdict_reason", ""))  # fmt: skip
            if run["requested_by"] == GUARD_USER or run.get("undo_of"):
                seen = ("run", run["id"], run["status"], None)
                if seen not in self._seen:
                    self._seen.add(seen)
                    self.note(f"run {fix_text(run)} by {run['requested_by']} undo_of="
                              f"{run.get('undo_of')} is {run['status']}",
                              run=run["id"], undo_of=run.get("undo_of"))  # fmt: skip

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.poll()
            except Exception:  # the stack is busy or stopping: try again next time
                self.errors += 1
                self._session = None
            self._halt.wait(POLL_SECONDS)
