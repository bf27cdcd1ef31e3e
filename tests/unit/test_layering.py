"""The apps share one web layer in console (web.py for pages, api/base.py for the API):
no app imports another app's pages or API, so one app's views can change without
breaking another's; and console, under every app, imports none of them (only config's
root URLconf wires them together). Read from the source with ast, imports inside functions
included."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("incidents", "runbooks", "actions", "drills", "postmortems", "readiness", "notifications",
        "pager", "chatops")  # fmt: skip
WEB_MODULES = {"views", "api", "urls", "api_urls"}


def _imported(source: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every absolute import; `from a.b import c` gives a.b and
    a.b.c, since c may be a module (`from actions import views`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _foreign_web_imports(app: str, source: str) -> list[str]:
    return sorted(
        {
            f"line {line}: {name}"
            for line, name in _imported(source)
            if (parts := name.split("."))[0] in APPS
            and parts[0] != app
            and WEB_MODULES & set(parts[1:])
        }
    )


def _sources(package: str):
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path, path.read_text()


def test_the_check_catches_a_foreign_view_import():
    bad = "from incidents.views import console_view\nfrom actions import api\n"
    assert _foreign_web_imports("postmortems", bad) == [
        "line 1: incidents.views",
        "line 1: incidents.views.console_view",
        "line 2: actions.api",
    ]
    # An app's own web modules, and console's, are fine.
    ok = "from runbooks import views\nfrom console.web import console_view\n"
    assert _foreign_web_imports("runbooks", ok) == []


def test_no_app_imports_another_apps_views_or_api():
    offenders, scanned = {}, set()
    for app in APPS:
        for path, source in _sources(app):
            scanned.add(app)
            if found := _foreign_web_imports(app, source):
                offenders[str(path.relative_to(ROOT))] = found
    assert scanned == set(APPS)
    assert offenders == {}


def test_console_imports_no_app():
    offenders = {}
    for path, source in _sources("console"):
        found = [f"line {n}: {name}" for n, name in _imported(source) if name.split(".")[0] in APPS]
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}
