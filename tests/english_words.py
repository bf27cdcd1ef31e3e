"""English words a Chinese reader would see in a text: what the zh-Hans walk
(tests/integration/i18n/test_zh_walk.py) and the apps' text tests fail on.

Not counted: words of the glossary's "Kept as written" list (docs/glossary.md, the one
source for the terms both languages use), codes (all capitals, with digits, snake_case,
camelCase, dotted or slashed ids), URLs and addresses, and the `allowed` names the caller
knows from the data (users, teams, namespaces, label values, runbook ids)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"
_BLOCK = re.compile(r"<!-- kept-as-written -->(.*?)<!-- /kept-as-written -->", re.S)
# A chunk between spaces: a URL, an address, a path or an id is one code, never words.
_CODE_CHUNK = re.compile(r"^(https?://|/|[\w.+-]+@[\w.-]+$)|[/:=_#@]|\w\.\w")
_CJK_PUNCT = re.compile("[\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]")
_LATIN_QUOTE = re.compile("[\u201c\u300c]([\x20-\x7e]+)[\u201d\u300d]")
_MIXED = re.compile(r"(?=.*\d)(?=.*[A-Za-z])\w+")
_QUOTES = "'\u2018\u2019"
# A letter run glued to digits (5xx, 72b, H100) is a code, never a word.
_WORD = re.compile(r"(?<![0-9A-Za-z])[A-Za-z][A-Za-z" + _QUOTES + "]*(?![0-9])")


@cache
def kept_as_written() -> frozenset[str]:
    found = _BLOCK.search(GLOSSARY.read_text(encoding="utf-8"))
    if found is None:
        raise AssertionError(f"{GLOSSARY}: the kept-as-written list is missing")
    words: set[str] = set()
    for term in found.group(1).split(","):
        words.update(w.lower() for w in term.split())
    return frozenset(words)


def _is_code(word: str) -> bool:
    if word.isupper() or any(c.isdigit() for c in word):
        return True  # SEV1, GPU, H100
    return any(c.isupper() for c in word[1:])  # camelCase, CrashLoopBackOff


def english_words(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """The English words in `text` a Chinese reader would not expect, in order."""
    names = {a.lower() for a in allowed if a}
    kept = kept_as_written()
    found = []
    # A short quote in Latin letters inside Chinese text is a log line as it was printed
    # ("CUDA error during graph capture"), kept as written on purpose; a longer one is
    # English the console wrote, and counts.
    text = _LATIN_QUOTE.sub(lambda m: " " if len(m.group(1).split()) <= 5 else m.group(0), text)
    # Chinese punctuation ends a word as a space does ("ttft-spike：..." is one name).
    for chunk in _CJK_PUNCT.sub(" ", text).split():
        bare = chunk.strip('()[]{}<>,.;:!?"“”（）【】，。：；！？、' + _QUOTES)
        if not bare or bare.lower() in names or bare.lower() in kept:
            continue  # all-reduce, nccl-tests, Retry-After: kept whole
        if bare.count("-") >= 2 and bare.islower():
            continue  # a parameter's name (gpu-memory-utilization)
        if _CODE_CHUNK.search(bare) or ("-" in bare and any(c.isdigit() for c in bare)):
            continue  # a Kubernetes object name (qwen-72b-0) is an id
        if bare.startswith("-") or _MIXED.fullmatch(bare):
            continue  # a command-line flag, a fingerprint or a hash (d8449bdea3d4)
        for word in _WORD.findall(bare):
            lower = word.lower().strip(_QUOTES)
            if len(lower) < 2 or lower in kept or lower in names or _is_code(word):
                continue
            found.append(word)
    return found
