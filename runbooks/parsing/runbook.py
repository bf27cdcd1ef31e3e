"""Parsing one catalogue file into `runbooks.schema` objects, validating as it goes.

The first problem raises `CatalogError` naming the file and the field path, e.g.
`runbooks/catalog/nccl-hang.yaml: triage[2].comparator: expected one of >, >=, <, <=, ==,
!=; got '=>'`. Unknown keys are errors, so a typo never silently drops a field.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from incidents.rules import RUNBOOK_SLUG_RULE, is_runbook_slug
from runbooks import placeholders as ph
from runbooks.action_kinds import action_kind_names
from runbooks.fields import Fields
from runbooks.parsing.guard import parse_guard
from runbooks.schema import (
    CATEGORIES,
    COMPARATORS,
    PLACEHOLDERS,
    SEVERITIES,
    ActionItemTemplate,
    ActionRef,
    Branch,
    CatalogError,
    Category,
    Check,
    Command,
    Condition,
    Runbook,
    Signal,
    action_item_choices,
)

_REPO = Path(__file__).resolve().parent.parent


def display_path(path: Path) -> str:
    """`path` relative to the repository when inside it (shorter messages)."""
    try:
        return str(path.resolve().relative_to(_REPO))
    except ValueError:
        return str(path)


def read_yaml(file: Path) -> Any:
    try:
        return yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CatalogError(f"{display_path(file)}: invalid YAML: {exc}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{display_path(file)}: cannot read: {exc}") from exc


def parse_categories(file: Path) -> dict[str, Category]:
    f = Fields(display_path(file))
    doc = f.mapping(read_yaml(file), "", required=("categories",))
    out: dict[str, Category] = {}
    for i, item in enumerate(f.seq(doc["categories"], "categories")):
        p = f"categories[{i}]"
        d = f.mapping(item, p, required=("name", "title", "examples", "defences"))
        name = f.choice(d["name"], f"{p}.name", CATEGORIES)
        if name in out:
            raise f.error(f"{p}.name", f"duplicate category {name!r}")
        out[name] = Category(
            name=name,
            title=f.text(d["title"], f"{p}.title"),
            examples=f.texts(d["examples"], f"{p}.examples"),
            defences=f.texts(d["defences"], f"{p}.defences"),
        )
    if missing := [c for c in CATEGORIES if c not in out]:
        raise f.error("categories", f"missing categories: {', '.join(missing)}")
    return out


RUNBOOK_KEYS = (
    "slug", "title", "category", "default_severity", "alerts", "symptom", "triage",
    "decision_tree", "emergency_actions", "diagnostic_commands", "root_cause", "long_term",
    "golden_signals",
)  # fmt: skip


def parse_runbook(file: Path) -> Runbook:
    f = Fields(display_path(file))
    d = f.mapping(read_yaml(file), "", required=RUNBOOK_KEYS, optional=("guard", "leads_over"))
    slug = f.text(d["slug"], "slug")
    if not is_runbook_slug(slug):
        raise f.error("slug", f"expected a runbook name ({RUNBOOK_SLUG_RULE}); got {slug!r}")
    if slug != file.stem:
        raise f.error("slug", f"must equal the file name {file.stem!r}; got {slug!r}")
    triage = tuple(_check(f, x, f"triage[{i}]") for i, x in enumerate(f.seq(d["triage"], "triage")))
    f.unique([c.id for c in triage], "triage", "id")
    actions = tuple(
        _action(f, x, f"emergency_actions[{i}]")
        for i, x in enumerate(f.seq(d["emergency_actions"], "emergency_actions"))
    )
    tree = _tree(f, d["decision_tree"], {c.id for c in triage}, {a.kind for a in actions})
    return Runbook(
        slug=slug,
        title=f.text(d["title"], "title"),
        category=f.choice(d["category"], "category", CATEGORIES),
        default_severity=f.choice(d["default_severity"], "default_severity", SEVERITIES),
        alerts=f.texts(d["alerts"], "alerts"),
        symptom=f.text(d["symptom"], "symptom"),
        triage=triage,
        decision_tree=tree,
        emergency_actions=actions,
        diagnostic_commands=tuple(
            _command(f, x, f"diagnostic_commands[{i}]")
            for i, x in enumerate(f.seq(d["diagnostic_commands"], "diagnostic_commands"))
        ),
        root_cause=f.text(d["root_cause"], "root_cause"),
        long_term=tuple(
            _item(f, x, f"long_term[{i}]") for i, x in enumerate(f.seq(d["long_term"], "long_term"))
        ),
        golden_signals=_signals(f, d["golden_signals"]),
        source=f.file,
        guard=parse_guard(f, d["guard"], _promql) if "guard" in d else None,
        leads_over=_leads_over(f, d.get("leads_over", []), slug),
    )


def _leads_over(f: Fields, value: Any, slug: str) -> tuple[str, ...]:
    """Other runbooks' slugs (whether the catalogue has them is load_catalog's check)."""
    slugs = tuple(
        f.text(x, f"leads_over[{i}]")
        for i, x in enumerate(f.seq(value, "leads_over", allow_empty=True))
    )
    for i, other in enumerate(slugs):
        if not is_runbook_slug(other) or other == slug:
            raise f.error(f"leads_over[{i}]", f"expected another runbook's name; got {other!r}")
    return slugs


def _promql(f: Fields, value: Any, path: str) -> tuple[str, tuple[str, ...]]:
    text = f.text(value, path)
    if unknown := ph.unknown_in(text):
        raise f.error(path, _unknown_msg(unknown))
    for found in ph.promql_problems(text):
        raise f.error(path, found)
    if problem := bracket_problem(text):
        raise f.error(path, problem)
    return text, ph.names_in(text)


def _unknown_msg(unknown: list[str]) -> str:
    names = ", ".join("{" + n + "}" for n in unknown)
    return f"unknown placeholder {names}; allowed: {', '.join(PLACEHOLDERS)}"


def _requires(f: Fields, d: dict, path: str, used: tuple[str, ...]) -> tuple[str, ...]:
    if "requires" not in d:
        return used
    listed = tuple(f.choice(x, f"{path}.requires[{i}]", PLACEHOLDERS) for i, x in enumerate(
        f.seq(d["requires"], f"{path}.requires", allow_empty=True)
    ))  # fmt: skip
    if missing := [n for n in used if n not in listed]:
        raise f.error(f"{path}.requires", f"must list {', '.join(missing)} (used in the template)")
    return listed


def _check(f: Fields, item: Any, p: str) -> Check:
    keys = ("id", "question", "promql", "comparator", "threshold", "unit")
    d = f.mapping(item, p, required=keys, optional=("requires",))
    promql, used = _promql(f, d["promql"], f"{p}.promql")
    return Check(
        id=f.ident(d["id"], f"{p}.id"),
        question=f.text(d["question"], f"{p}.question"),
        promql=promql,
        comparator=f.choice(d["comparator"], f"{p}.comparator", tuple(COMPARATORS)),
        threshold=f.number(d["threshold"], f"{p}.threshold"),
        unit=f.text(d["unit"], f"{p}.unit"),
        requires=_requires(f, d, p, used),
    )


def _condition(f: Fields, value: Any, path: str, check_ids: set[str]) -> Condition:
    if isinstance(value, str):
        if value not in check_ids:
            known = ", ".join(sorted(check_ids))
            raise f.error(path, f"unknown check id {value!r}; known: {known}")
        return Condition("check", check=value)
    if not isinstance(value, dict) or len(value) != 1:
        raise f.error(path, "expected a check id or a mapping with exactly one of all, any, not")
    (op, arg), = value.items()  # fmt: skip
    if op == "not":
        return Condition("not", args=(_condition(f, arg, f"{path}.not", check_ids),))
    if op not in ("all", "any"):
        raise f.error(path, f"expected one of all, any, not; got {op!r}")
    items = f.seq(arg, f"{path}.{op}")
    args = tuple(_condition(f, x, f"{path}.{op}[{i}]", check_ids) for i, x in enumerate(items))
    return Condition(op, args=args)


def _tree(f: Fields, value: Any, check_ids: set[str], kinds: set[str]) -> tuple[Branch, ...]:
    items = f.seq(value, "decision_tree")
    branches = []
    for i, item in enumerate(items):
        p = f"decision_tree[{i}]"
        last = i == len(items) - 1
        keys = ("id", "diagnosis", "recommended_actions")
        d = f.mapping(item, p, required=keys if last else (*keys, "when"), optional=("when",))
        if last and "when" in d:
            raise f.error(f"{p}.when", "the last branch is the catch-all and has no condition")
        recommended = f.seq(d["recommended_actions"], f"{p}.recommended_actions", allow_empty=True)
        for j, kind in enumerate(recommended):
            f.choice(kind, f"{p}.recommended_actions[{j}]", action_kind_names())
            if kind not in kinds:
                raise f.error(
                    f"{p}.recommended_actions[{j}]", f"{kind} has no emergency_actions entry"
                )
        branches.append(
            Branch(
                id=f.ident(d["id"], f"{p}.id"),
                when=None if last else _condition(f, d["when"], f"{p}.when", check_ids),
                diagnosis=f.text(d["diagnosis"], f"{p}.diagnosis"),
                recommended_actions=tuple(recommended),
            )
        )
    f.unique([b.id for b in branches], "decision_tree", "id")
    return tuple(branches)


def _action(f: Fields, item: Any, p: str) -> ActionRef:
    d = f.mapping(item, p, required=("kind", "title", "why"), optional=("params",))
    params = d.get("params") or {}
    if not isinstance(params, dict):
        raise f.error(f"{p}.params", f"expected a mapping; got {type(params).__name__}")
    used: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, str):
            if unknown := ph.unknown_in(value):
                raise f.error(path, _unknown_msg(unknown))
            used.extend(ph.names_in(value))
        elif isinstance(value, dict):
            for key, v in value.items():
                walk(v, f"{path}.{key}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]")

    walk(params, f"{p}.params")
    return ActionRef(
        kind=f.choice(d["kind"], f"{p}.kind", action_kind_names()),
        title=f.text(d["title"], f"{p}.title"),
        params=MappingProxyType(dict(params)),  # type: ignore[arg-type]
        why=f.text(d["why"], f"{p}.why"),
        requires=tuple(dict.fromkeys(used)),
    )


def _command(f: Fields, item: Any, p: str) -> Command:
    d = f.mapping(item, p, required=("title", "command"))
    text = f.text(d["command"], f"{p}.command")
    if unknown := ph.unknown_in(text):
        raise f.error(f"{p}.command", _unknown_msg(unknown))
    for problem in ph.command_problems(text):
        raise f.error(f"{p}.command", problem)
    return Command(title=f.text(d["title"], f"{p}.title"), command=text, requires=ph.names_in(text))


def _item(f: Fields, item: Any, p: str) -> ActionItemTemplate:
    d = f.mapping(item, p, required=("title", "description", "category", "priority"))
    return ActionItemTemplate(
        title=f.text(d["title"], f"{p}.title"),
        description=f.text(d["description"], f"{p}.description"),
        category=f.choice(d["category"], f"{p}.category", action_item_choices("category")),
        priority=f.choice(d["priority"], f"{p}.priority", action_item_choices("priority")),
    )


def _signals(f: Fields, value: Any) -> tuple[Signal, ...]:
    out = []
    for i, item in enumerate(f.seq(value, "golden_signals")):
        p = f"golden_signals[{i}]"
        d = f.mapping(item, p, required=("id", "title", "promql", "unit"))
        promql, used = _promql(f, d["promql"], f"{p}.promql")
        out.append(
            Signal(
                id=f.ident(d["id"], f"{p}.id"),
                title=f.text(d["title"], f"{p}.title"),
                promql=promql,
                unit=f.text(d["unit"], f"{p}.unit"),
                requires=used,
            )
        )
    f.unique([s.id for s in out], "golden_signals", "id")
    return tuple(out)


def bracket_problem(promql: str) -> str | None:
    """Unbalanced (), [] or {} outside string literals, or an unterminated string."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    quote = None
    escaped = False
    for ch in promql:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            stack.append(ch)
        elif ch in pairs and (not stack or stack.pop() != pairs[ch]):
            return f"unbalanced {ch!r}"
    if quote:
        return f"unterminated string literal ({quote})"
    if stack:
        return f"unclosed {stack[-1]!r}"
    return None
