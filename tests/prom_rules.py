"""Test-only copies of the production alert rules (deploy/prometheus/rules) with short
windows and `for:`, so an injected failure alerts within seconds instead of minutes.
Generated from the real files on every run: the tests exercise the real expressions."""

import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "deploy" / "prometheus" / "rules"
CATALOG = ROOT / "runbooks" / "catalog"


def _shorten(text: str, windows: dict[str, str]) -> str:
    # `[1m]`, and the range of a subquery `[15m:30s]`
    return re.sub(r"\[(\w+)([]:])", lambda m: f"[{windows.get(m[1], m[1])}{m[2]}", text)


def fast_rules(dest: Path, *, windows: dict[str, str] | None = None, for_: str = "10s") -> Path:
    """Copy every rules file into `dest` with range windows renamed by `windows` (default
    [1m] and [2m] -> [20s]) and every `for:` set to `for_`."""
    windows = windows or {"1m": "20s", "2m": "20s"}
    dest.mkdir(parents=True, exist_ok=True)
    for src in RULES.glob("*.yml"):
        text = src.read_text()
        text = _shorten(text, windows)
        text = re.sub(r"for: \S+", f"for: {for_}", text)
        (dest / src.name).write_text(text)
    # The translations hold text only (no PromQL): copied as they are.
    for lang_dir in (d for d in CATALOG.iterdir() if d.is_dir() and not d.name.startswith("_")):
        shutil.copytree(lang_dir, dest / lang_dir.name, dirs_exist_ok=True)
    return dest


def fast_catalog(dest: Path, *, windows: dict[str, str], day: str = "") -> Path:
    """Copy the runbook catalogue with the range windows of its PromQL shortened alike,
    so triage looks at the same compressed time as the rules (RUNBOOKS_CATALOG_DIR).
    `day`, if given, replaces `offset 1d`: "yesterday" becomes one simulated day ago (the
    simulator's traffic curve repeats every simulated 10 minutes)."""
    dest.mkdir(parents=True, exist_ok=True)
    for src in CATALOG.glob("*.yaml"):
        text = _shorten(src.read_text(), windows)
        if day:
            text = text.replace("offset 1d", f"offset {day}")
        (dest / src.name).write_text(text)
    # The translations hold text only (no PromQL): copied as they are.
    for lang_dir in (d for d in CATALOG.iterdir() if d.is_dir() and not d.name.startswith("_")):
        shutil.copytree(lang_dir, dest / lang_dir.name, dirs_exist_ok=True)
    return dest
