"""The runbook catalogue: every `runbooks/catalog/*.yaml`, loaded, validated and cached.

Files starting with `_` are not runbooks: `_categories.yaml` defines the six failure
categories. A broken file raises `CatalogError` naming the file and the field (see
`runbooks.parsing.runbook`), and fails `manage.py check` (`runbooks.checks`).

Every non-English language of `settings.LANGUAGES` has the text fields translated in a
subdirectory (`zh-Hans/`, see `runbooks.translations`). Each language's runbooks are
built once at load time; `get`, `all`, `for_alert`, `runbooks` and `categories` answer in
the active language (`translation.get_language()`), English when it has no translation.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from django.conf import settings
from django.utils.translation import get_language

from runbooks import translations
from runbooks.fields import Fields
from runbooks.parsing.runbook import (
    bracket_problem,
    display_path,
    parse_categories,
    parse_runbook,
)
from runbooks.schema import CatalogError, Category, Runbook

__all__ = [
    "Catalog",
    "CatalogError",
    "Edition",
    "bracket_problem",
    "load_catalog",
    "parse_runbook",
    "runbook_for_labels",
    "runbook_leads_over",
]

DEFAULT_DIR = Path(__file__).resolve().parent / "catalog"
CATEGORIES_FILE = translations.CATEGORIES_FILE


@dataclass(frozen=True)
class Edition:
    """The catalogue in one language."""

    language: str
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


@dataclass(frozen=True)
class Catalog:
    directory: Path
    english: Edition
    editions: Mapping[str, Edition]  # by lower-case language code, English included

    def edition(self, language: str | None = None) -> Edition:
        """The catalogue in `language` (default: the active one); English when that
        language has no translation. A dict lookup: this is on the webhook's hot path."""
        if language is None:
            if len(self.editions) == 1:  # nothing translated: no need to ask Django
                return self.english
            language = get_language()
        return self.editions.get((language or "").lower(), self.english)

    @property
    def runbooks(self) -> Mapping[str, Runbook]:
        return self.edition().runbooks

    @property
    def categories(self) -> Mapping[str, Category]:
        return self.edition().categories

    def get(self, slug: str) -> Runbook | None:
        return self.edition().get(slug)

    def all(self) -> tuple[Runbook, ...]:
        return self.edition().all()

    def for_alert(self, alertname: str) -> Runbook | None:
        return self.edition().for_alert(alertname)


def default_dir() -> Path:
    """`settings.RUNBOOKS_CATALOG_DIR` when set (tests point it at a broken copy)."""
    if settings.configured:
        return Path(settings.RUNBOOKS_CATALOG_DIR)
    return DEFAULT_DIR


def load_catalog(path: str | Path | None = None) -> Catalog:
    """The catalogue in `path` (default: `default_dir()`), parsed once per directory
    content: editing a file, a translation included, is picked up on the next call
    without a restart."""
    directory = Path(path) if path is not None else default_dir()
    directory = directory.resolve()
    languages = translations.languages()
    try:
        files = sorted([*directory.glob("*.yaml"), *directory.glob("*/*.yaml")])
        signature = tuple(
            (str(p.relative_to(directory)), p.stat().st_mtime_ns, p.stat().st_size) for p in files
        )
    except OSError as exc:
        raise CatalogError(f"{display_path(directory)}: cannot read the catalogue: {exc}") from exc
    return _load(directory, languages, signature)


@functools.lru_cache(maxsize=8)
def _load(directory: Path, languages: tuple[str, ...], signature: tuple) -> Catalog:
    english = _english(directory)
    editions = {translations.SOURCE_LANGUAGE: english}
    for language in languages:
        editions[language] = _translated(directory, language, english)
    return Catalog(directory, english, MappingProxyType(editions))


def _english(directory: Path) -> Edition:
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
    for rb in runbooks.values():
        for i, other in enumerate(rb.leads_over):
            if other not in runbooks or rb.slug in runbooks[other].leads_over:
                why = "no such runbook" if other not in runbooks else "it leads over this one"
                raise Fields(rb.source).error(f"leads_over[{i}]", f"{other!r}: {why}")
    return Edition(
        translations.SOURCE_LANGUAGE,
        MappingProxyType(runbooks),
        MappingProxyType(categories),
        MappingProxyType(by_alert),
    )


def _translated(directory: Path, language: str, english: Edition) -> Edition:
    """`english` with the text fields of `language`'s directory: every runbook and the
    categories must be translated there, and nothing else may be."""
    lang_dir = directory / translations.directory_name(language)
    if not lang_dir.is_dir():
        raise CatalogError(
            f"{display_path(lang_dir)}: missing (settings.LANGUAGES has {language!r}; "
            "it holds the runbooks' translations)"
        )
    for file in sorted(lang_dir.glob("*.yaml")):
        if file.name != CATEGORIES_FILE and file.stem not in english.runbooks:
            raise CatalogError(f"{display_path(file)}: no runbook {file.stem}.yaml to translate")
    needed = [CATEGORIES_FILE, *(f"{slug}.yaml" for slug in english.runbooks)]
    for name in needed:
        if not (lang_dir / name).is_file():
            raise CatalogError(f"{display_path(lang_dir / name)}: missing (every runbook and "
                               f"{CATEGORIES_FILE} need a translation)")  # fmt: skip
    categories = translations.translate_categories(
        dict(english.categories), lang_dir / CATEGORIES_FILE
    )
    runbooks = {
        slug: translations.translate_runbook(rb, lang_dir / f"{slug}.yaml")
        for slug, rb in english.runbooks.items()
    }
    return Edition(
        language,
        MappingProxyType(runbooks),
        MappingProxyType(categories),
        english._by_alert,  # alert names are shared
    )


def runbook_leads_over(a: str, b: str) -> bool:
    """Whether runbook `a` declares it leads over runbook `b` (incidents.related asks)."""
    runbook = load_catalog().english.get(a)
    return runbook is not None and b in runbook.leads_over


def runbook_for_labels(labels: Mapping[str, Any], catalog: Catalog | None = None) -> Runbook | None:
    """The runbook for an alert: its `runbook` label when that names a catalogue entry,
    else the runbook that lists its `alertname`."""
    edition = (catalog or load_catalog()).edition()  # the active language, looked up once
    slug = str(labels.get("runbook") or "")
    if slug and (found := edition.get(slug)):
        return found
    return edition.for_alert(str(labels.get("alertname") or ""))
