"""Finds text in templates that a user reads but that no translation tag wraps.

A template's text tokens (outside `{% translate %}` / `{% blocktranslate %}` and
`{% comment %}`) are parsed as HTML; what is left is the text of elements and the
attributes people read (title, placeholder, aria-label, alt, a button's value). Code a
responder copies (<code>, <pre>, <kbd>, <samp>), scripts and styles are not prose, nor
are `class="mono"` elements, nor names that read the same in every language (NEUTRAL).
"""

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from django.template.base import Lexer, TokenType

READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt", "aria-description"}
NOT_PROSE = {"code", "pre", "kbd", "samp", "script", "style"}
VOID = {"br", "hr", "img", "input", "meta", "link", "col", "area", "base", "wbr", "source"}
# Product names, identifiers and units: the same words in the Chinese UI (docs/glossary.md).
NEUTRAL = {
    "vllm",
    "kubernetes",
    "pod",
    "pods",
    "gpu",
    "gpus",
    "promql",
    "prometheus",
    "alertmanager",
    "celery",
    "lws",
    "leaderworkerset",
    "nccl",
    "nvlink",
    "ttft",
    "itl",
    "kv",
    "utc",
    "api",
    "json",
    "csv",
    "markdown",
    "oidc",
    "sso",
    "sev1",
    "sev2",
    "sev3",
    "sev4",
    "id",
    "url",
    "http",
    "https",
    "ok",
    "p50",
    "p95",
    "p99",
    "ms",
    "s",
    "min",
    "h",
    "req",
    "rps",
    "x",
    "openapi",
    "swagger",
    "github",
    "webhook",
    "apprise",
    "smtp",
    "csrf",
    "ip",
    "gib",
    "mib",
    "mb",
    "gb",
    "hmac",
    "sha256",
    "fp8",
    "ecc",
    "xid",
    "cuda",
    "rdma",
    "hbm",
    "p1",
    "p2",
    "p3",
    "p4",
    "vs",
    "n",
    "pr",
    "crd",
    "k8s",
    "tls",
    "faq",
    "oom",
    "mtbf",
    "mttr",
    "mtta",
    "mttm",
    "sli",
    "slo",
    "slos",
}
WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019\-]*")
ENTITY = re.compile(r"&[#a-zA-Z0-9]+;")


@dataclass(frozen=True)
class Untranslated:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text!r}"


# An example URL or a date mask (YYYY-MM-DD HH:MM) in a placeholder reads the same in
# every language.
NOT_WORDS = re.compile(r"^(\w+://\S+|[YMDHS:\- ]+)$")


def _prose(text: str) -> str | None:
    text = " ".join(ENTITY.sub(" ", text).split())
    if NOT_WORDS.match(text):
        return None
    words = [w for w in WORD.findall(text) if w.lower().strip("'\u2019-") not in NEUTRAL]
    return text if words else None


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[int, str]] = []
        self.skip: list[str] = []
        self.base_line = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        # class="mono" marks what a responder copies (a command, a name): code, not prose.
        code = tag in NOT_PROSE or "mono" in (attr.get("class") or "").split()
        if code and tag not in VOID:
            self.skip.append(tag)
        for name, value in attrs:
            readable = name in READ_ATTRIBUTES or (
                name == "value" and tag == "input" and attr.get("type") in ("submit", "button")
            )
            if readable and value and (p := _prose(value)):
                self.found.append((self.base_line + self.getpos()[0], p))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if self.skip and self.skip[-1] == tag:
            self.skip.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.skip:
            while self.skip and self.skip.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if not self.skip and (p := _prose(data)):
            self.found.append((self.base_line + self.getpos()[0], p))


def untranslated_text(path: Path, root: Path) -> list[Untranslated]:
    source = path.read_text(encoding="utf-8")
    reader = _Reader()
    # Template tags and variables become placeholders, so HTML around them still parses;
    # the text inside translation blocks and comments is dropped.
    chunks: list[str] = []
    depth = 0
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split(" ", 1)[0]
            if name in ("blocktranslate", "blocktrans", "comment"):
                depth += 1
            elif name in ("endblocktranslate", "endblocktrans", "endcomment"):
                depth -= 1
            chunks.append("\n" * token.contents.count("\n"))  # tags leave nothing behind
            continue
        if token.token_type == TokenType.VAR:
            # A value stands in for the variable: "Signed in as {{ name }}" still reads
            # as words to translate; a lone {{ name }} does not.
            chunks.append("\n" * token.contents.count("\n") if depth else "0")
            continue
        if token.token_type == TokenType.COMMENT or depth:
            chunks.append("\n" * token.contents.count("\n"))
            continue
        chunks.append(token.contents)
    reader.feed("".join(chunks))
    reader.close()
    rel = str(path.relative_to(root))
    return [Untranslated(rel, line, text) for line, text in reader.found]
