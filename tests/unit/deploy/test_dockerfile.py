"""The Dockerfile keeps the rules that matter for a slim, safe image, checked without a
container daemon (CI builds the image too when `docker info` works: .ci/run, `make
image image-size`). No kept Dockerfile linter exists on PyPI (hadolint is a binary), so
these are the rules themselves: multi-stage, a pinned base, runtime dependencies only,
collectstatic at build, a non-root user and a health check."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
RUNTIME_LOCK = ROOT / "requirements-runtime.lock"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined = (pending + line).strip()
        pending = ""
        keyword, _, args = joined.partition(" ")
        out.append((keyword.upper(), args.strip()))
    return out


def stages(text: str) -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for keyword, args in instructions(text):
        if keyword == "FROM":
            found.append([])
        found[-1].append((keyword, args))
    return found


@pytest.fixture(scope="module")
def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def test_the_parser_joins_continuations_and_skips_comments():
    text = "# c\nFROM a:1 AS x\nRUN one \\\n    two\n\nUSER 1\n"
    assert instructions(text) == [("FROM", "a:1 AS x"), ("RUN", "one      two"), ("USER", "1")]


def test_multi_stage_from_a_pinned_base(dockerfile):
    found = stages(dockerfile)
    assert len(found) >= 2, "build and runtime stages"
    for stage in found:
        image = stage[0][1].split()[0]
        if image in {s[0][1].split()[-1] for s in found}:
            continue  # FROM an earlier stage
        # A patch release (3.11.11) or a digest, never a floating tag.
        assert re.search(r":\d+\.\d+\.\d+[-\w.]*$|@sha256:[0-9a-f]{64}$", image), image


def test_runtime_stage_installs_nothing_and_copies_the_built_venv(dockerfile):
    runtime = stages(dockerfile)[-1]
    runs = " ".join(args for keyword, args in runtime if keyword == "RUN")
    assert "pip install" not in runs
    assert "apt-get" not in runs
    assert ("COPY", "--from=build /opt/venv /opt/venv") in runtime


def test_dependencies_come_from_the_runtime_lock_only(dockerfile):
    assert "requirements-runtime.lock" in dockerfile
    assert not re.search(r"requirements\.lock|--extra|\bdev\b", dockerfile)


def test_collectstatic_at_build_non_root_user_and_healthcheck(dockerfile):
    runtime = stages(dockerfile)[-1]
    keywords = [keyword for keyword, _ in runtime]
    assert any("collectstatic --noinput" in args for keyword, args in runtime if keyword == "RUN")
    users = [args for keyword, args in runtime if keyword == "USER"]
    assert users, "no USER in the runtime stage"
    assert users[-1].split(":")[0] not in ("root", "0")
    assert keywords.index("USER") < keywords.index("CMD")
    assert "HEALTHCHECK" in keywords


def test_the_translations_are_compiled_at_build(dockerfile):
    build, runtime = stages(dockerfile)[0], stages(dockerfile)[-1]
    assert any("compilemessages" in args for keyword, args in build if keyword == "RUN")
    assert ("COPY", "--from=build /src/locale /app/locale") in runtime


def test_dockerignore_keeps_tests_and_dev_files_out():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {"tests/", ".venv/", ".git/", ".env", "requirements.lock"} <= ignored


def test_the_runtime_lock_has_no_dev_package():
    assert RUNTIME_LOCK.exists(), "requirements-runtime.lock is missing: run `make lock-runtime`"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dev = {
        re.split(r"[=<>\[]", req)[0].lower()
        for req in pyproject["project"]["optional-dependencies"]["dev"]
    }
    runtime = {re.split(r"[=<>\[]", req)[0].lower() for req in pyproject["project"]["dependencies"]}
    locked = {
        line.split("==")[0].strip().lower()
        for line in RUNTIME_LOCK.read_text().splitlines()
        if "==" in line and not line.startswith((" ", "#"))
    }
    assert not locked & dev, locked & dev
    assert runtime <= locked, runtime - locked
