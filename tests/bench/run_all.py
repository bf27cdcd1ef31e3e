"""`make bench`: every bench in turn, then every target with PASS or MISS.

Each bench runs as a process of its own (a crash or a non-zero exit is reported as a MISS
of that bench, and the rest still run), with BENCH_SUMMARY pointing at one file that its
`tests/bench/summary.record` calls append to. The summary is printed at the end and kept
in var/bench-last.txt. BENCH_ONLY=name,name runs a subset (names as in BENCHES).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.summary import print_summary, record  # noqa: E402

# (name, arguments after the interpreter), in the order they run. incident_pages.py (1k vs
# 100k) is not here: fleet_pages.py measures the same pages and more at 10k vs 1M, and the
# API list at 1k vs 100k.
BENCHES: list[tuple[str, list[str]]] = [
    ("ingest rows", ["tests/bench/ingest.py"]),
    ("ingest end to end", ["tests/bench/ingest.py", "--e2e"]),
    ("ingest vs base", ["tests/bench/ingest_vs_base.py"]),
    ("fleet pages", ["tests/bench/fleet_pages.py"]),
    ("retention", ["tests/bench/retention.py"]),
    ("actions", ["tests/bench/actions.py"]),
    ("postmortems", ["tests/bench/postmortems.py"]),
    ("reports", ["tests/bench/reports.py"]),
    ("similar", ["tests/bench/similar.py"]),
    ("outgoing", ["tests/bench/outgoing.py"]),
    ("pager latency", ["tests/bench/pager_latency.py"]),
    ("pager timing", ["tests/bench/pager_timing.py"]),
    ("chat latency", ["tests/bench/chat_latency.py"]),
]


def main() -> int:
    only = {n.strip() for n in os.environ.get("BENCH_ONLY", "").split(",") if n.strip()}
    var = REPO / "var"
    var.mkdir(exist_ok=True)
    summary = var / f"bench-summary-{os.getpid()}.jsonl"
    summary.unlink(missing_ok=True)
    env = {**os.environ, "BENCH_SUMMARY": str(summary)}
    print(f"make bench: load average at start {os.getloadavg()[0]:.2f}", flush=True)
    took: list[tuple[str, float, int]] = []
    for name, args in BENCHES:
        if only and name not in only:
            continue
        print(f"\n##### {name}: {' '.join(args)}", flush=True)
        start = time.monotonic()
        code = subprocess.call([sys.executable, *args], cwd=REPO, env=env)
        took.append((name, time.monotonic() - start, code))
        if code != 0:
            os.environ["BENCH_SUMMARY"] = str(summary)
            record(name, "bench ran to the end", None, 0, False, f"exited with status {code}")
    print("\nTime per bench: " + ", ".join(f"{n} {s / 60:.1f} min" for n, s, _ in took))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_summary(summary)
    print(out.getvalue(), end="")
    (var / "bench-last.txt").write_text(out.getvalue())
    summary.unlink(missing_ok=True)
    return 0 if all(code == 0 for _, _, code in took) else 1


if __name__ == "__main__":
    sys.exit(main())
