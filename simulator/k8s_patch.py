"""JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386), as the apiserver applies them.

A failed operation (a `test` that does not match, a path that does not exist) raises
PatchError; the API answers it with 422, as Kubernetes does.
"""

from __future__ import annotations

import copy
import json
import re

_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")


class PatchError(Exception):
    pass


def merge_patch(target, patch):
    """RFC 7386: objects merge recursively, null deletes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def parse_pointer(pointer) -> list[str]:
    """RFC 6901: "" is the whole document; "/a~1b/~0c" is ["a/b", "~c"]."""
    if not isinstance(pointer, str):
        raise PatchError(f"invalid JSON pointer {pointer!r}: must be a string")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}: must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def json_equal(a, b) -> bool:
    """Equality of JSON values (true is not 1, 1 is 1.0)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _index(container: list, token: str, path: str, *, allow_end: bool) -> int:
    if allow_end and token == "-":  # noqa: S105 (the RFC 6902 append index)
        return len(container)
    if not _INDEX.match(token):
        raise PatchError(f"invalid array index {token!r} in path {path!r}")
    index = int(token)
    limit = len(container) if allow_end else len(container) - 1
    if index > limit:
        raise PatchError(f"array index {index} out of bounds in path {path!r}")
    return index


def _parent(doc, tokens: list[str], path: str):
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"path {path!r} does not exist: missing key {token!r}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, allow_end=False)]
        else:
            raise PatchError(f"path {path!r} does not exist: {token!r} is inside a scalar")
    return node


def _get(doc, path: str):
    tokens = parse_pointer(path)
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens, path), tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path {path!r} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, path, allow_end=False)]
    raise PatchError(f"path {path!r} does not exist")


def _add(doc, path: str, value):
    tokens = parse_pointer(path)
    if not tokens:
        return value
    parent, last = _parent(doc, tokens, path), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, path, allow_end=True), value)
    else:
        raise PatchError(f"cannot add at {path!r}: parent is not an object or array")
    return doc


def _remove(doc, path: str):
    tokens = parse_pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent, last = _parent(doc, tokens, path), tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"cannot remove {path!r}: path does not exist")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, path, allow_end=False))
    raise PatchError(f"cannot remove {path!r}: path does not exist")


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 200 else text[:197] + "..."


def json_patch(doc, operations):
    """Apply RFC 6902 operations to a copy of `doc`, all or nothing."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be an array of operations")
    doc = copy.deepcopy(doc)
    for i, op in enumerate(operations):
        if not isinstance(op, dict):
            raise PatchError(f"operation {i} is not an object")
        kind, path = op.get("op"), op.get("path")
        if path is None:
            raise PatchError(f"operation {i} ({kind}) is missing 'path'")
        parse_pointer(path)  # a malformed pointer fails every op
        needs_value = kind in ("add", "replace", "test")
        if needs_value and "value" not in op:
            raise PatchError(f"operation {i} ({kind} {path}) is missing 'value'")
        value = copy.deepcopy(op.get("value"))
        if kind == "add":
            doc = _add(doc, path, value)
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)  # must exist
            if not parse_pointer(path):
                doc = value
            else:
                _remove(doc, path)
                doc = _add(doc, path, value)
        elif kind == "test":
            actual = _get(doc, path)
            if not json_equal(actual, value):
                raise PatchError(
                    f"testing value {path} failed: test failed: "
                    f"expected {_short(value)}, found {_short(actual)}"
                )
        elif kind in ("move", "copy"):
            source = op.get("from")
            if source is None:
                raise PatchError(f"operation {i} ({kind} {path}) is missing 'from'")
            parse_pointer(source)
            if kind == "move":
                if path != source and path.startswith(source + "/"):
                    raise PatchError(f"cannot move {source!r} into its own child {path!r}")
                moved = _remove(doc, source) if path != source else _get(doc, source)
                doc = _add(doc, path, moved) if path != source else doc
            else:
                doc = _add(doc, path, copy.deepcopy(_get(doc, source)))
        else:
            raise PatchError(f"operation {i}: unsupported op {kind!r}")
    return doc
