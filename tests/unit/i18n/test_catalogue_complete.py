"""The Chinese catalogue translates every string the code and templates mark, with no
fuzzy entry: extract with makemessages (as a release would), compare, list what is left."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
SOURCES = [
    "templates",
    "console",
    "incidents",
    "runbooks",
    "postmortems",
    "notifications",
    "readiness",
    "pager",
    "chatops",
]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} (GNU gettext) is missing: `apt-get install gettext` (.ci/run does)")
    return path


def _msgids(po_text: str) -> list[str]:
    """The msgids of a .po text (joined across continuation lines), header left out."""
    ids: list[str] = []
    current: list[str] | None = None
    for line in po_text.splitlines():
        if line.startswith("msgid "):
            current = [line[6:].strip().strip('"')]
        elif current is not None and line.startswith('"'):
            current.append(line.strip().strip('"'))
        elif current is not None:
            ids.append("".join(current))
            current = None
    if current is not None:
        ids.append("".join(current))
    return [i for i in ids if i]


def _attrib(po: Path, flag: str) -> list[str]:
    out = subprocess.run(
        [_tool("msgattrib"), flag, str(po)], capture_output=True, text=True, check=True
    ).stdout
    return _msgids(out)


def test_the_catalogue_compiles_with_no_fuzzy_or_empty_entry():
    subprocess.run(
        [_tool("msgfmt"), "--check", "-o", os.devnull, str(PO)], check=True, capture_output=True
    )
    assert _attrib(PO, "--only-fuzzy") == []
    assert _attrib(PO, "--untranslated") == []


def test_every_marked_string_is_translated(tmp_path):
    _tool("xgettext")
    keep = shutil.ignore_patterns("__pycache__", "migrations", "*.pyc", "*.mo", "*.po")
    for name in SOURCES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=keep)
    (tmp_path / PO.relative_to(ROOT)).parent.mkdir(parents=True)
    shutil.copy(PO, tmp_path / PO.relative_to(ROOT))
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    # No settings: makemessages then writes to ./locale, the copy, never the repository.
    subprocess.run(
        [sys.executable, "-m", "django", "makemessages", "-l", "zh_Hans", "--no-obsolete"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    extracted = tmp_path / PO.relative_to(ROOT)
    untranslated = _attrib(extracted, "--untranslated")
    fuzzy = _attrib(extracted, "--only-fuzzy")
    left = [*untranslated, *(f"(fuzzy) {f}" for f in fuzzy)]
    assert left == [], (
        f"{len(untranslated)} untranslated and {len(fuzzy)} fuzzy strings; run "
        "`make messages` and translate them in locale/zh_Hans/LC_MESSAGES/django.po:\n"
        + "\n".join(left)
    )
