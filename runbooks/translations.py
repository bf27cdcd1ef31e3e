"""Translations of the runbook catalogue's text fields.

English is the source: `runbooks/catalog/<slug>.yaml` holds everything a runbook is made
of. Every other language in `settings.LANGUAGES` has a directory next to it holding only
the text fields, keyed like the English file (ids for checks, branches and signals; same
order and length for lists):

    runbooks/catalog/zh-Hans/<slug>.yaml          one per runbook
    runbooks/catalog/zh-Hans/_categories.yaml     the failure categories, by name

Directory names: the language code of `settings.LANGUAGES` written as a BCP 47 tag, i.e.
the script subtag title-cased and the region upper-cased ("zh-hans" -> "zh-Hans",
"pt-br" -> "pt-BR"). Not `translation.to_locale()` ("zh_Hans"): these are catalogue
files, not gettext locales, and the tag reads the same as the language code.

PromQL, commands, parameters, ids, units, kinds, categories and priorities are shared:
a translation cannot hold them, so they cannot drift. Validation is strict: a missing
text, an unknown key or id, a list of another length or an empty string raises
`CatalogError` naming the file and the field path, e.g.
`runbooks/catalog/zh-Hans/ttft-spike.yaml: decision_tree.capacity.diagnosis: missing`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings

from runbooks.fields import Fields
from runbooks.parsing.runbook import display_path, read_yaml
from runbooks.schema import Category, Runbook

SOURCE_LANGUAGE = "en"
CATEGORIES_FILE = "_categories.yaml"


def is_source(code: str) -> bool:
    """English and its regional variants ("en-us") read the English files."""
    return code.lower().split("-")[0] == SOURCE_LANGUAGE


def directory_name(code: str) -> str:
    """The directory of a language's translations: "zh-hans" -> "zh-Hans"."""
    first, *rest = code.split("-")
    subtags = [first.lower()]
    for tag in rest:
        # BCP 47 casing: 4 letters are a script (Hans), 2 letters a region (BR).
        subtags.append(tag.title() if len(tag) == 4 else tag.upper() if len(tag) == 2 else tag)
    return "-".join(subtags)


def languages() -> tuple[str, ...]:
    """The language codes of `settings.LANGUAGES` that need a translation."""
    if not settings.configured:
        return ()
    codes = (code.lower() for code, _name in settings.LANGUAGES)
    return tuple(dict.fromkeys(c for c in codes if not is_source(c)))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _exactly(f: Fields, value: Any, path: str, keys: tuple[str, ...]) -> dict:
    """A mapping with exactly `keys`: a missing one or an extra one is an error."""
    if not isinstance(value, dict):
        what = "the file" if not path else "a mapping"
        raise f.error(path, f"expected {what} to be a mapping; got {type(value).__name__}")
    for key in value:
        if key not in keys:
            raise f.error(_join(path, str(key)), f"unknown key; allowed: {', '.join(keys)}")
    for key in keys:
        if key not in value:
            raise f.error(_join(path, key), "missing")
    return value


def _texts(f: Fields, value: Any, path: str, keys: tuple[str, ...]) -> dict[str, str]:
    d = _exactly(f, value, path, keys)
    return {key: f.text(d[key], _join(path, key)) for key in keys}


def _ids(f: Fields, value: Any, path: str, ids: list[str], what: str) -> dict:
    """A mapping by exactly the English ids."""
    if not isinstance(value, dict):
        raise f.error(path, f"expected a mapping by {what} id; got {type(value).__name__}")
    for key in value:
        if key not in ids:
            known = ", ".join(ids)
            raise f.error(_join(path, str(key)), f"unknown {what} id {key!r}; known: {known}")
    for key in ids:
        if key not in value:
            raise f.error(_join(path, key), "missing")
    return value


def _by_id(f: Fields, value: Any, path: str, ids: list[str], what: str, keys: tuple[str, ...]):
    """`[{key: text}]` for exactly the English ids, in the English order."""
    d = _ids(f, value, path, ids, what)
    return [_texts(f, d[key], _join(path, key), keys) for key in ids]


def _sized(f: Fields, value: Any, path: str, n: int) -> list:
    """A list as long as the English one (items match by position)."""
    if not isinstance(value, list):
        raise f.error(path, f"expected a list; got {type(value).__name__}")
    if len(value) != n:
        raise f.error(path, f"expected {n} items, as in the English file; got {len(value)}")
    return value


def _same_length(f: Fields, value: Any, path: str, n: int, keys: tuple[str, ...]):
    items = _sized(f, value, path, n)
    return [_texts(f, item, f"{path}[{i}]", keys) for i, item in enumerate(items)]


RUNBOOK_KEYS = (
    "title", "symptom", "triage", "decision_tree", "emergency_actions",
    "diagnostic_commands", "root_cause", "long_term", "golden_signals",
)  # fmt: skip


def translate_runbook(rb: Runbook, file: Path) -> Runbook:
    """`rb` with the text fields of `file`; everything else is the English runbook's."""
    f = Fields(display_path(file))
    keys = (*RUNBOOK_KEYS, "guard") if rb.guard else RUNBOOK_KEYS
    d = _exactly(f, read_yaml(file), "", keys)
    checks = _by_id(f, d["triage"], "triage", [c.id for c in rb.triage], "check", ("question",))
    branches = _by_id(
        f, d["decision_tree"], "decision_tree", [b.id for b in rb.decision_tree], "branch",
        ("diagnosis",),
    )  # fmt: skip
    actions = _same_length(
        f, d["emergency_actions"], "emergency_actions", len(rb.emergency_actions),
        ("title", "why"),
    )  # fmt: skip
    commands = _same_length(
        f, d["diagnostic_commands"], "diagnostic_commands", len(rb.diagnostic_commands),
        ("title",),
    )  # fmt: skip
    items = _same_length(
        f, d["long_term"], "long_term", len(rb.long_term), ("title", "description")
    )
    signals = _by_id(
        f, d["golden_signals"], "golden_signals", [s.id for s in rb.golden_signals], "signal",
        ("title",),
    )  # fmt: skip
    return replace(
        rb,
        title=f.text(d["title"], "title"),
        symptom=f.text(d["symptom"], "symptom"),
        triage=tuple(replace(c, **t) for c, t in zip(rb.triage, checks, strict=True)),
        decision_tree=tuple(
            replace(b, **t) for b, t in zip(rb.decision_tree, branches, strict=True)
        ),
        emergency_actions=tuple(
            replace(a, **t) for a, t in zip(rb.emergency_actions, actions, strict=True)
        ),
        diagnostic_commands=tuple(
            replace(c, **t) for c, t in zip(rb.diagnostic_commands, commands, strict=True)
        ),
        root_cause=f.text(d["root_cause"], "root_cause"),
        long_term=tuple(replace(i, **t) for i, t in zip(rb.long_term, items, strict=True)),
        golden_signals=tuple(
            replace(s, **t) for s, t in zip(rb.golden_signals, signals, strict=True)
        ),
        guard=_guard(f, rb, d["guard"]) if rb.guard else None,
    )


def _guard(f: Fields, rb: Runbook, value: Any):
    assert rb.guard is not None
    d = _exactly(f, value, "guard", ("signals",))
    ids = [s.id for s in rb.guard.signals]
    titles = _by_id(f, d["signals"], "guard.signals", ids, "signal", ("title",))
    signals = tuple(replace(s, **t) for s, t in zip(rb.guard.signals, titles, strict=True))
    return replace(rb.guard, signals=signals)


def translate_categories(categories: dict[str, Category], file: Path) -> dict[str, Category]:
    """`categories` with the titles, examples and defences of `file`."""
    f = Fields(display_path(file))
    d = _exactly(f, read_yaml(file), "", ("categories",))
    by_name = _ids(f, d["categories"], "categories", list(categories), "category")
    out = {}
    for name, c in categories.items():
        p = f"categories.{name}"
        t = _exactly(f, by_name[name], p, ("title", "examples", "defences"))
        out[name] = replace(
            c,
            title=f.text(t["title"], f"{p}.title"),
            examples=_list(f, t["examples"], f"{p}.examples", len(c.examples)),
            defences=_list(f, t["defences"], f"{p}.defences", len(c.defences)),
        )
    return out


def _list(f: Fields, value: Any, path: str, n: int) -> tuple[str, ...]:
    return tuple(f.text(x, f"{path}[{i}]") for i, x in enumerate(_sized(f, value, path, n)))
