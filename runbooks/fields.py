"""Typed reads of parsed YAML that fail with `<file>: <field path>: <what was wrong>`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from runbooks.schema import CatalogError

IDENT = re.compile(r"^[a-z][a-z0-9_]*$")


def _got(value: Any) -> str:
    return f"{type(value).__name__} {value!r}" if not isinstance(value, str) else repr(value)


class Fields:
    def __init__(self, file: str) -> None:
        self.file = file

    def error(self, path: str, message: str) -> CatalogError:
        return CatalogError(
            f"{self.file}: {path}: {message}" if path else f"{self.file}: {message}"
        )

    def mapping(
        self, value: Any, path: str, *, required: Iterable[str], optional: Iterable[str] = ()
    ) -> dict:
        if not isinstance(value, dict):
            what = "the file" if not path else "a mapping"
            raise self.error(path, f"expected {what} to be a mapping; got {_got(value)}")
        required, optional = tuple(required), tuple(optional)
        prefix = f"{path}." if path else ""
        for key in value:
            if key not in required and key not in optional:
                allowed = ", ".join(sorted({*required, *optional}))
                raise self.error(f"{prefix}{key}", f"unknown key; allowed: {allowed}")
        for key in required:
            if key not in value:
                raise self.error(f"{prefix}{key}", "required")
        return value

    def text(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(path, f"expected non-empty text; got {_got(value)}")
        return value.strip()

    def ident(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not IDENT.match(value):
            raise self.error(path, f"expected an id like 'waiting_queue'; got {_got(value)}")
        return value

    def choice(self, value: Any, path: str, options: Iterable[str]) -> str:
        options = tuple(options)
        if not isinstance(value, str) or value not in options:
            raise self.error(path, f"expected one of {', '.join(options)}; got {_got(value)}")
        return value

    def number(self, value: Any, path: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.error(path, f"expected a number; got {_got(value)}")
        return float(value)

    def seq(self, value: Any, path: str, *, allow_empty: bool = False) -> list:
        if not isinstance(value, list):
            raise self.error(path, f"expected a list; got {_got(value)}")
        if not value and not allow_empty:
            raise self.error(path, "expected a non-empty list")
        return value

    def texts(self, value: Any, path: str) -> tuple[str, ...]:
        return tuple(self.text(x, f"{path}[{i}]") for i, x in enumerate(self.seq(value, path)))

    def unique(self, ids: list[str], path: str, key: str) -> None:
        seen: set[str] = set()
        for i, x in enumerate(ids):
            if x in seen:
                raise self.error(f"{path}[{i}].{key}", f"duplicate {key} {x!r}")
            seen.add(x)
