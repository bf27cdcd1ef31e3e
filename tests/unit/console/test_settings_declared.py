"""Every setting the code reads is declared in config/settings/ and read as
`settings.X`: no `getattr(settings, "X", default)` whose default would hide a setting
nobody declared (a typo or a missing environment variable would then go unnoticed)."""

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = (
    "console",
    "incidents",
    "runbooks",
    "actions",
    "drills",
    "postmortems",
    "readiness",
    "notifications",
    "pager",
    "chatops",
)


def _reads(source: str) -> tuple[set[str], list[int]]:
    """(names read as settings.X, lines of getattr(settings, ...))."""
    names, hidden = set(), []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "settings"
            and node.attr.isupper()
        ):
            names.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr"}
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == "settings"
        ):
            hidden.append(node.lineno)
    return names, hidden


def _sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts and not path.name.startswith("settings"):
                yield path.relative_to(ROOT), path.read_text()


def test_the_scan_sees_reads_and_hidden_defaults():
    names, hidden = _reads(
        "from django.conf import settings\n"
        "a = settings.KUBECONFIG\n"
        "b = getattr(settings, 'NOT_DECLARED', 3)\n"
    )
    assert (names, hidden) == ({"KUBECONFIG"}, [3])


def test_every_setting_read_is_declared_and_none_is_read_with_a_default():
    undeclared, hidden = {}, {}
    for path, source in _sources():
        names, lines = _reads(source)
        if missing := sorted(n for n in names if not hasattr(settings, n)):
            undeclared[str(path)] = missing
        if lines:
            hidden[str(path)] = lines
    assert undeclared == {}
    assert hidden == {}


def _set_names(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.NamedExpr)
            else []
        )
        names |= {t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()}
    return names


def test_each_setting_is_set_by_one_settings_module():
    """config/settings/__init__.py assembles its modules with `import *`: a setting two of
    them set would silently take the later one's value."""
    owner: dict[str, str] = {}
    twice = []
    for path in sorted((ROOT / "config" / "settings").glob("*.py")):
        for name in _set_names(path.read_text()):
            if name in owner:
                twice.append((name, owner[name], path.name))
            owner[name] = path.name
    assert {"SECRET_KEY", "DATABASES", "POD_IP", "LOGGING"} <= set(owner)
    assert twice == []
