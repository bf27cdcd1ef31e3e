"""Find and toggle `--enforce-eager` in a container's vLLM invocation.

Real LWS manifests (the upstream LeaderWorkerSet examples) carry the invocation in two shapes:
a list of args (`["--model", "m", "--enforce-eager"]`, the image's entrypoint or
`vllm serve` in `command`), or one shell string (`sh -c "setup.sh ...; python3 -m
vllm.entrypoints.openai.api_server --port 8080 ..."`). In a script the flag must go into
the vLLM command itself, not after whatever `;`/`&&`-separated command follows it.
vLLM's parser also accepts `--enforce_eager`, `--enforce-eager=true`, and newer versions
`--no-enforce-eager`; all of them are recognised.
"""

from __future__ import annotations

import os
import re

FLAG = "--enforce-eager"
SHELLS = {"sh", "bash", "dash", "zsh", "ash"}
_FLAG = re.compile(r"(?<![\w-])--enforce[-_]eager(?:=(\S+))?(?![\w-])")
_NEGATED = re.compile(r"(?<![\w-])--no[-_]enforce[-_]eager(?![\w-])")
_ENTRY = re.compile(
    r"(?<![\w./-])vllm\s+serve(?![\w-])|-m\s+vllm\.entrypoints\.openai\.api_server(?![\w.])"
)
_FALSE = {"false", "False", "0", "no"}


def flag_on(text: str) -> bool:
    return any(m.group(1) not in _FALSE for m in _FLAG.finditer(text)) and not _NEGATED.search(text)


def _command_end(script: str, start: int) -> int:
    """Index where the shell command that begins at `start` ends (`;`, `&`, `|`, `)` or a
    newline that is not a line continuation, outside quotes)."""
    quote, i = "", start
    while i < len(script):
        ch = script[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch == "\\":
            i += 2  # an escaped char, or a backslash-newline continuation
            continue
        elif ch in "'\"":
            quote = ch
        elif ch in ";&|)\n":
            return i
        i += 1
    return len(script)


def _drop_flags(script: str) -> str:
    script = _NEGATED.sub("", re.sub(r"[ \t]*" + _NEGATED.pattern, "", script))
    return re.sub(r"[ \t]*" + _FLAG.pattern, "", script)


def script_toggle(script: str, enabled: bool) -> str | None:
    """The script with the flag set as asked; None when it runs no vLLM server."""
    entry = _ENTRY.search(script)
    if entry is None:
        return None
    if flag_on(script) == enabled and (enabled or not _FLAG.search(script)):
        return script
    script = _drop_flags(script)
    if not enabled:
        return script
    entry = _ENTRY.search(script)
    assert entry is not None  # dropping the flag leaves the vLLM entry point in place
    end = _command_end(script, entry.end())
    while end > entry.end() and script[end - 1] in " \t":
        end -= 1
    return f"{script[:end]} {FLAG}{script[end:]}"


def _is_flag(word: str) -> bool:
    return bool(_FLAG.fullmatch(word) or _NEGATED.fullmatch(word))


def list_toggle(words: list[str], enabled: bool) -> list[str]:
    kept = [w for w in words if not _is_flag(w)]
    return [*kept, FLAG] if enabled else kept


def locate(container: dict) -> dict | None:
    """Where the vLLM invocation of `container` lives:
    {"field": "command"|"args", "index": i (the script's position) or None (a word list),
    "value": the field's list}; None when the container does not start vLLM."""
    command = list(container.get("command") or [])
    args = list(container.get("args") or [])
    argv = command + args
    if (
        len(argv) >= 3
        and os.path.basename(str(argv[0])) in SHELLS
        and re.fullmatch(r"-[a-z]*c[a-z]*", str(argv[1]))
    ):
        field, index = ("command", 2) if len(command) >= 3 else ("args", 2 - len(command))
        value = command if field == "command" else args
        if not isinstance(value[index], str) or not _ENTRY.search(value[index]):
            return None
        return {"field": field, "index": index, "value": value}
    joined = " ".join(str(w) for w in command)
    if command and not _ENTRY.search(joined):
        return None  # a launcher we do not know: do not guess where the flag goes
    # No command: the image entrypoint (vllm/vllm-openai runs the API server) takes args.
    field = "args" if args or not command else "command"
    return {"field": field, "index": None, "value": args if field == "args" else command}


def toggled(where: dict, enabled: bool) -> list:
    value = list(where["value"])
    if where["index"] is None:
        return list_toggle(value, enabled)
    value[where["index"]] = script_toggle(value[where["index"]], enabled)
    return value


def is_on(where: dict) -> bool:
    if where["index"] is None:
        return any(_is_flag(w) for w in where["value"]) and flag_on(" ".join(where["value"]))
    return flag_on(where["value"][where["index"]])
