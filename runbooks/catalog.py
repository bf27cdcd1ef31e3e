"""The runbook catalogue: every `runbooks/catalog/*.yaml`, loaded, validated and cached.

Files starting with `_` are not runbooks: `_categories.yaml` defines the six failure
categories. A broken file raises `CatalogError` naming the file and the field (see
`runbooks.parsing`), and fails `manage.py check` (`runbooks.checks`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from runbooks.fields import Fields
from runbooks.parsing import (
    bracket_problem,
    display_path,
    parse_categories,
    parse_runbook,
)
from runbooks.schema import CatalogError, Category, Runbook

__all__ = [
    "Catalog",
    "CatalogError",
    "bracket_problem",
    "load_catalog",
    "parse_runbook",
    "runbook_for_labels",
]

DEFAULT_DIR = Path(__file__).resolve().parent / "catalog"
CATEGORIES_FILE = "_categories.yaml"


@dataclass(frozen=True)
class Catalog:
    directory: Path
    runbooks: Mapping[str, Runbook]
    categories: Mapping[str, Category]
    _by_alert: Mapping[str, str]

    def get(self, slug: str) -> Runbook | None:
        return self.runbooks.get(slug)

    def all(self) -> tuple[Runbook, ...]:
        return tuple(self.runbooks[s] for s in sorted(self.runbooks))

    def for_alert(self, alertname: str) -> Runbook | None:
        slug = self._by_alert.get(alertname)
        return self.runbooks[slug] if slug else None


def default_dir() -> Path:
    """`settings.RUNBOOKS_CATALOG_DIR` when set (tests point it at a broken copy)."""
    from django.conf import settings

    if settings.configured:
        return Path(settings.RUNBOOKS_CATALOG_DIR)
    return DEFAULT_DIR


def load_catalog(path: str | Path | None = None) -> Catalog:
    """The catalogue in `path` (default: `default_dir()`), parsed once per directory
    content: editing a file is picked up on the next call without a restart."""
    directory = Path(path) if path is not None else default_dir()
    directory = directory.resolve()
    try:
        signature = tuple(
            (p.name, p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(directory.glob("*.yaml"))
        )
    except OSError as exc:
        raise CatalogError(f"{display_path(directory)}: cannot read the catalogue: {exc}") from exc
    return _load(directory, signature)


@functools.lru_cache(maxsize=8)
def _load(directory: Path, signature: tuple) -> Catalog:
    if not directory.is_dir():
        raise CatalogError(f"{display_path(directory)}: not a directory")
    cat_path = directory / CATEGORIES_FILE
    if not cat_path.is_file():
        raise CatalogError(f"{display_path(cat_path)}: missing (it defines the failure categories)")
    categories = parse_categories(cat_path)
    runbooks: dict[str, Runbook] = {}
    by_alert: dict[str, str] = {}
    files = [p for p in sorted(directory.glob("*.yaml")) if not p.name.startswith("_")]
    if not files:
        raise CatalogError(f"{display_path(directory)}: no runbook files (*.yaml)")
    for file in files:
        rb = parse_runbook(file)
        f = Fields(display_path(file))
        if rb.category not in categories:
            raise f.error("category", f"{rb.category!r} is not defined in {CATEGORIES_FILE}")
        for i, alert in enumerate(rb.alerts):
            if alert in by_alert:
                raise f.error(f"alerts[{i}]", f"{alert} is already answered by {by_alert[alert]}")
            by_alert[alert] = rb.slug
        runbooks[rb.slug] = rb
    return Catalog(
        directory,
        MappingProxyType(runbooks),
        MappingProxyType(categories),
        MappingProxyType(by_alert),
    )


def runbook_for_labels(labels: Mapping[str, Any], catalog: Catalog | None = None) -> Runbook | None:
    """The runbook for an alert: its `runbook` label when that names a catalogue entry,
    else the runbook that lists its `alertname`."""
    catalog = catalog or load_catalog()
    slug = str(labels.get("runbook") or "")
    if slug and catalog.get(slug):
        return catalog.get(slug)
    return catalog.for_alert(str(labels.get("alertname") or ""))
