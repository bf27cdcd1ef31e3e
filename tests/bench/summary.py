"""Every bench target with PASS or MISS, collected across the benches of one `make bench`.

A bench calls `record(...)` for each target it checks; with BENCH_SUMMARY set (run_all.py
sets it) the target is appended to that file as one JSON line, and `print_summary(path)`
prints them all at the end, one line each, MISS lines saying by how much. Without
BENCH_SUMMARY (a bench run by hand) `record` writes nothing: the bench prints its own lines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def record(
    bench: str,
    target: str,
    value: float | None,
    limit: float,
    passed: bool,
    detail: str = "",
    *,
    unit: str = "x",
    higher_is_better: bool = False,
    measured: str = "",
) -> None:
    """One target: `value` against `limit` (a ratio unless `unit` says otherwise)."""
    line = {
        "bench": bench,
        "target": target,
        "value": value,
        "limit": limit,
        "passed": bool(passed),
        "detail": detail,
        "unit": unit,
        "higher_is_better": higher_is_better,
        "measured": measured,
    }
    path = os.environ.get("BENCH_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def _by_how_much(t: dict) -> str:
    value, limit = t["value"], t["limit"]
    if value is None or not limit:
        return ""
    if t["higher_is_better"]:
        return f" ({value / limit:.0%} of the target)"
    return f" ({value / limit - 1:+.0%} over the target)"


def format_line(t: dict) -> str:
    verdict = "PASS" if t["passed"] else "MISS"
    if t.get("measured"):  # a target a bench words itself (stack.Target and the like)
        detail = f"  [{t['detail']}]" if t["detail"] else ""
        return f"{verdict}  {t['bench']}: {t['target']}: {t['measured']}{detail}"
    sign = ">=" if t["higher_is_better"] else "<="
    value = "n/a" if t["value"] is None else f"{t['value']:.2f}{t['unit']}"
    miss = "" if t["passed"] else _by_how_much(t)
    detail = f"  [{t['detail']}]" if t["detail"] else ""
    return (
        f"{verdict}  {t['bench']}: {t['target']}: {value} "
        f"(target {sign} {t['limit']:g}{t['unit']}){miss}{detail}"
    )


def print_summary(path: Path) -> tuple[int, int]:
    """Print every recorded target; returns (passed, missed)."""
    targets = []
    if path.exists():
        targets = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    print(f"\n=== make bench: {len(targets)} targets ===")
    for t in targets:
        print(format_line(t))
    passed = sum(1 for t in targets if t["passed"])
    print(f"=== {passed} PASS, {len(targets) - passed} MISS ===")
    return passed, len(targets) - passed


def record_worded(name: str, measured: str, passed: bool, note: str = "") -> None:
    """A target as the stack and pager benches word them (a name, what was measured)."""
    import sys

    bench = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else "bench"
    record(bench, name, None, 0, passed, note, measured=measured)
