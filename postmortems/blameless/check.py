"""The blameless-language check's engine.

It only warns: the postmortem form shows the findings next to the text, and nothing here
can stop a save or a publish. Word lists live in `postmortems.blameless.languages`, one
module per language; this module only turns them into regular expressions and findings.

Pure functions, no database: callers pass the names to look for (`people`), typically every
user's username and full name plus anyone named in the incident.

Which list: by default a text is checked against every list whose script it contains, so a
Chinese postmortem gets the Chinese list, an English one the English list, and a mixed one
(Chinese prose quoting English, "Bob 忘了扩容", "rollout 时 alice forgot the flag") both. A
list cannot match a script it does not contain, so this only skips useless work; the
messages come out in the viewer's language (the active one), not the text's.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

from postmortems.blameless.languages import LANGUAGES, Language, Rule, load

__all__ = ["LANGUAGES", "Finding", "blameless_check", "blameless_check_fields"]

# Word boundaries that count a hyphen as part of the word, so "blame-free" and
# "non-negligent" are not flagged, and "bob" in "jim-bob" is not a person.
_START = r"(?<![\w-])"
_END = r"(?![\w-])"
# In an unspaced language a name ends where Latin letters and digits do: "alice忘了" is alice.
_LATIN_START = r"(?<![A-Za-z0-9_@.-])"
_LATIN_END = r"(?![A-Za-z0-9_-])"


@dataclass(frozen=True)
class Finding:
    field: str  # which text field: "summary", "root_cause", "timeline:<id>", ...
    start: int  # character offsets of the flagged phrase in that field's text
    end: int
    phrase: str  # text[start:end], as written
    rule: str  # rule id, e.g. "person-as-cause", "human-error"
    message: str  # why it reads as blame
    suggestion: str  # a rewrite phrased around systems and process


def _alternation(fragments: Iterable[str]) -> str:
    return "|".join(f"(?:{fragment})" for fragment in fragments)


@cache
def _phrase_patterns(code: str) -> tuple[tuple[Rule, re.Pattern[str]], ...]:
    language = load(code)
    start, end = (_START, _END) if language.spaced else ("", "")
    return tuple(
        (rule, re.compile(f"{start}(?:{_alternation(rule.patterns)}){end}", re.IGNORECASE))
        for rule in language.rules
    )


@cache
def _script(code: str) -> re.Pattern[str]:
    return re.compile(load(code).script)


def _languages_for(text: str) -> list[str]:
    """The lists whose script appears in `text` (see the module docstring)."""
    return [code for code in LANGUAGES if _script(code).search(text)]


def _person_alternation(people: tuple[str, ...], *, spaced: bool = True) -> str:
    names = []
    for raw in people:
        # "@erin" and "erin" are the same person; a mention is matched by the optional "@".
        parts = raw.strip().lstrip("@").split()
        if parts:
            # "Alice  Smith" across a line break is still Alice Smith.
            names.append(r"\s+".join(re.escape(part) for part in parts))
    # Longest first so "Alice Smith" wins over "Alice" at the same position.
    names = sorted(set(names), key=lambda name: (-len(name), name))
    if not names:
        return ""
    start, end = (r"(?<![\w@.-])", r"(?![\w-])") if spaced else (_LATIN_START, _LATIN_END)
    return f"{start}@?(?:{'|'.join(names)}){end}"


@lru_cache(maxsize=64)
def _person_pattern(code: str, people: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for the three person shapes. Cached because every field of a postmortem,
    and every re-check after an edit, is matched against the same people."""
    lang: Language = load(code)
    person = _person_alternation(people, spaced=lang.spaced)
    if not person:
        return None
    verbs = _alternation(lang.failure_verbs)
    fillers, adverbs = _alternation(lang.fillers), _alternation(lang.adverbs)
    nouns = _alternation(lang.blame_nouns)
    by = _alternation(lang.by_patterns)
    if lang.spaced:
        subject = (
            f"{person}\\s+(?:(?:{fillers})\\s+){{0,2}}(?:(?:{verbs})|(?:{adverbs})\\s+[\\w-]+)"
        )
        agent = f"{_START}(?:{by})\\s+{person}"
        possessive = f"{person}(?:{lang.possessive})\\s+(?:[\\w-]+\\s+){{0,2}}?(?:{nouns}|{verbs})"
        return re.compile(f"(?:{subject}|{agent}|{possessive}){_END}", re.IGNORECASE)
    # Unspaced: spaces are optional, the adverb alone says enough ("张三不小心"), and up to
    # eight characters may sit between "的" and the noun ("张三的配置改动导致").
    subject = f"{person}\\s*(?:(?:{fillers})\\s*){{0,2}}(?:{verbs}|{adverbs})"
    agent = f"(?:{by})\\s*{person}"
    possessive = f"{person}\\s*(?:{lang.possessive})[\\w\\s-]{{0,8}}?(?:{nouns}|{verbs})"
    return re.compile(f"{subject}|{agent}|{possessive}", re.IGNORECASE)


def _drop_nested(findings: list[Finding]) -> list[Finding]:
    """Keep one finding per flagged stretch: "Bob forgot" already says what "forgot" would,
    and two warnings on one phrase read as nagging."""
    kept: list[Finding] = []
    reach = -1
    # Stable sort: person findings are collected first, so on an identical span ("Alice's
    # fault") the warning that names the person is the one kept.
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if finding.end <= reach:
            continue
        kept.append(finding)
        reach = finding.end
    return kept


def blameless_check(
    text: str, *, field: str = "", people: Iterable[str] = (), language: str | None = None
) -> list[Finding]:
    """Findings for one text, in reading order. `language` picks one list; None (the
    default) picks by the text's script. Raises ValueError for an unknown language."""
    if language is not None:
        _phrase_patterns(language)  # validates `language` even for empty text
    people_key = tuple(sorted({p for p in people if p and p.strip()}))
    if not text:
        return []
    findings: list[Finding] = []
    # Person findings of every list first: on an identical span they win (_drop_nested).
    codes = [language] if language is not None else _languages_for(text)
    for code in codes:
        person_pattern = _person_pattern(code, people_key)
        if person_pattern is not None:
            rule = load(code).person_rule
            findings.extend(_finding(field, m, rule) for m in person_pattern.finditer(text))
    for code in codes:
        for rule, pattern in _phrase_patterns(code):
            findings.extend(_finding(field, match, rule) for match in pattern.finditer(text))
    return _drop_nested(findings)


def blameless_check_fields(
    fields: Mapping[str, str], *, people: Iterable[str] = (), language: str | None = None
) -> list[Finding]:
    """Findings for several fields, in the mapping's order, each tagged with its key."""
    people = tuple(people)  # may be a one-shot iterator; it is used once per field
    findings: list[Finding] = []
    for name, text in fields.items():
        findings.extend(blameless_check(text, field=name, people=people, language=language))
    if not fields and language is not None:
        _phrase_patterns(language)  # an unknown language is an error even with no fields
    return findings


def _finding(field: str, match: re.Match[str], rule: Rule) -> Finding:
    return Finding(
        field=field,
        start=match.start(),
        end=match.end(),
        phrase=match.group(),
        rule=rule.id,
        # Lazy msgids become text now, in the language of whoever is reading.
        message=str(rule.message),
        suggestion=str(rule.suggestion),
    )
