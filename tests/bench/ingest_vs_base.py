"""End-to-end ingest against a base commit, in one session (issue 29: at least 1.4x).

Checks the base commit out into a temporary git worktree (`git worktree add --detach`,
removed at the end), which reuses this checkout's .venv (the same dependencies, linked
in), and runs the end-to-end storm (`tests/bench/ingest.py --e2e`) alternately on the
base and on this checkout: base then this in odd rounds, this then base in even ones,
so a machine that slows down or speeds up during the bench weighs on both alike. Prints
each run's end-to-end alerts/s, the median of each side and
`PASS|MISS end-to-end vs base: <ratio>x (target 1.4x)`. Absolute alerts/s move with the
machine's load; the ratio of runs taken in turns is what to compare.

Environment: BENCH_BASE_COMMIT (fade035, the commit before issue 29's work),
BENCH_VS_BASE_ROUNDS (2: runs per side), BENCH_E2E_SECONDS (30: each storm's length),
and what ingest_e2e.py reads (BENCH_CLIENTS, BENCH_SEED, ...).
Exit status: 0 when every run completed (a missed target is reported, not failed),
1 when a run failed, 2 when the worktree could not be set up.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable

from tests.bench import summary  # noqa: E402

BASE_COMMIT = os.environ.get("BENCH_BASE_COMMIT", "fade035")
ROUNDS = int(os.environ.get("BENCH_VS_BASE_ROUNDS", "2"))
SECONDS = os.environ.get("BENCH_E2E_SECONDS", "30")
TARGET = 1.4
RUN_DEADLINE_S = 1200.0
GIT_DEADLINE_S = 120.0
_E2E = re.compile(r"end-to-end alerts/s \(first post -> every row right\)\s+(\d+)")
_RAW = re.compile(r"webhook ingest >= 0\.5x raw psycopg upsert\s+([0-9.]+)x")
_WEB_CPU = re.compile(r"CPU per request: web / database / worker / clients\s+(.+)")


def git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), *args],
        capture_output=True, text=True, timeout=GIT_DEADLINE_S, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def worktree_add(commit: str) -> Path:
    """The commit checked out (detached) in a new directory, with this checkout's .venv."""
    try:
        full = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    except RuntimeError as exc:
        raise RuntimeError(
            f"base commit {commit!r} is not in this clone's history (a shallow clone? "
            f"`git fetch --unshallow`): {exc}"
        ) from None
    path = Path(tempfile.mkdtemp(prefix="bench-vs-base-"))
    path.rmdir()  # git creates it
    git("worktree", "add", "--detach", str(path), full)
    (path / ".venv").symlink_to(REPO / ".venv", target_is_directory=True)
    return path


def worktree_remove(path: Path) -> None:
    try:
        git("worktree", "remove", "--force", str(path))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"warning: {exc}", file=sys.stderr)
    shutil.rmtree(path, ignore_errors=True)
    try:
        git("worktree", "prune")
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"warning: {exc}", file=sys.stderr)


def run_storm(tree: Path, label: str) -> tuple[float | None, str]:
    """One end-to-end storm in `tree`: its alerts/s (None if it failed) and a summary."""
    env = {**os.environ, "BENCH_STORM_SECONDS": SECONDS, "PYTHONUNBUFFERED": "1"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("BENCH_SUMMARY", None)  # this bench records the comparison, not each run
    cmd = [str(REPO / ".venv" / "bin" / "python"), "tests/bench/ingest.py", "--e2e"]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=RUN_DEADLINE_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as exc:
        # SIGTERM: the bench stops its gunicorn and worker and drops its databases.
        proc.terminate()
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, f"{label}: did not finish within {RUN_DEADLINE_S:.0f} s"
    found = _E2E.search(stdout)
    if proc.returncode != 0 or found is None:
        tail = "\n".join((stdout + stderr).splitlines()[-25:])
        return None, f"{label}: exit {proc.returncode}\n{tail}"
    raw = _RAW.search(stdout)
    cpu = _WEB_CPU.search(stdout)
    detail = f"raw-upsert ratio {raw.group(1) if raw else '?'}x"
    if cpu:
        detail += f", CPU/request web/db/worker/clients {cpu.group(1).strip()}"
    rate = float(found.group(1))
    took = time.monotonic() - t0
    return rate, f"{label:<5} {rate:>7.0f} alerts/s  ({detail}; {took:.0f} s)"


def main() -> int:
    load = os.getloadavg()[0]
    head = git("rev-parse", "--short", "HEAD")
    dirty = " + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    print(
        f"end-to-end storm, base {BASE_COMMIT} vs this checkout ({head}{dirty}): "
        f"{ROUNDS} runs each of {SECONDS} s, in turns; load average {load:.1f}",
        flush=True,
    )
    try:
        tree = worktree_add(BASE_COMMIT)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"bench setup failed: {exc}", file=sys.stderr)
        return 2
    rates: dict[str, list[float]] = {"base": [], "head": []}
    failed = False
    try:
        for i in range(ROUNDS):
            order = ("base", "head") if i % 2 == 0 else ("head", "base")
            for side in order:
                rate, text = run_storm(tree if side == "base" else REPO, side)
                print(f"  round {i + 1}: {text}", flush=True)
                if rate is None:
                    failed = True
                else:
                    rates[side].append(rate)
    except KeyboardInterrupt:
        print("bench interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        worktree_remove(tree)
    if not rates["base"] or not rates["head"]:
        print("MISS end-to-end vs base: no ratio (a side has no completed run)")
        summary.record("ingest_vs_base", "end-to-end alerts/s vs base", None, TARGET, False,
                       "a side has no completed run", higher_is_better=True)  # fmt: skip
        return 1
    base, ours = statistics.median(rates["base"]), statistics.median(rates["head"])
    ratio = ours / base
    verdict = "PASS" if ratio >= TARGET else "MISS"
    print(f"median alerts/s: base {base:.0f}, this checkout {ours:.0f}")
    short = f" ({TARGET - ratio:.2f}x short)" if ratio < TARGET else ""
    print(f"{verdict} end-to-end vs base: {ratio:.2f}x (target {TARGET}x){short}")
    summary.record(
        "ingest_vs_base",
        "end-to-end alerts/s vs base",
        round(ratio, 2),
        TARGET,
        ratio >= TARGET,
        f"median {ours:.0f} vs {base:.0f} alerts/s at {BASE_COMMIT}, {ROUNDS} runs each",
        higher_is_better=True,
    )
    return 1 if failed else 0


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")  # unwinds through main()'s cleanup


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    sys.exit(main())
