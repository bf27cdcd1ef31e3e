"""Blameless-language check for postmortem text.

It only warns: the postmortem form shows the findings next to the text, and nothing here
can stop a save or a publish. Word lists live in `postmortems.blameless_lang`, one module
per language; this module only turns them into regular expressions and findings.

Pure functions, no database: callers pass the names to look for (`people`), typically every
user's username and full name plus anyone named in the incident.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

from postmortems.blameless_lang import LANGUAGES, Language, Rule, load

__all__ = ["LANGUAGES", "Finding", "blameless_check", "blameless_check_fields"]

# Word boundaries that count a hyphen as part of the word, so "blame-free" and
# "non-negligent" are not flagged, and "bob" in "jim-bob" is not a person.
_START = r"(?<![\w-])"
_END = r"(?![\w-])"


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
    return tuple(
        (rule, re.compile(f"{_START}(?:{_alternation(rule.patterns)}){_END}", re.IGNORECASE))
        for rule in language.rules
    )


def _person_alternation(people: tuple[str, ...]) -> str:
    names = []
    for raw in people:
        # "@erin" and "erin" are the same person; a mention is matched by the optional "@".
        parts = raw.strip().lstrip("@").split()
        if parts:
            # "Alice  Smith" across a line break is still Alice Smith.
            names.append(r"\s+".join(re.escape(part) for part in parts))
    # Longest first so "Alice Smith" wins over "Alice" at the same position.
    names = sorted(set(names), key=lambda name: (-len(name), name))
    return f"(?<![\\w@.-])@?(?:{'|'.join(names)})(?![\\w-])" if names else ""


@lru_cache(maxsize=64)
def _person_pattern(code: str, people: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for the three person shapes. Cached because every field of a postmortem,
    and every re-check after an edit, is matched against the same people."""
    person = _person_alternation(people)
    if not person:
        return None
    lang: Language = load(code)
    verbs = _alternation(lang.failure_verbs)
    subject = (
        f"{person}\\s+(?:(?:{_alternation(lang.fillers)})\\s+){{0,2}}"
        f"(?:(?:{verbs})|(?:{_alternation(lang.adverbs)})\\s+[\\w-]+)"
    )
    agent = f"{_START}(?:{_alternation(lang.by_patterns)})\\s+{person}"
    possessive = (
        f"{person}(?:{lang.possessive})\\s+(?:[\\w-]+\\s+){{0,2}}?"
        f"(?:{_alternation(lang.blame_nouns)}|{verbs})"
    )
    return re.compile(f"(?:{subject}|{agent}|{possessive}){_END}", re.IGNORECASE)


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
    text: str, *, field: str = "", people: Iterable[str] = (), language: str = "en"
) -> list[Finding]:
    """Findings for one text, in reading order. Raises ValueError for an unknown language."""
    phrase_patterns = _phrase_patterns(language)  # validates `language` even for empty text
    people_key = tuple(sorted({p for p in people if p and p.strip()}))
    if not text:
        return []
    findings: list[Finding] = []
    person_pattern = _person_pattern(language, people_key)
    if person_pattern is not None:
        rule = load(language).person_rule
        findings.extend(_finding(field, match, rule) for match in person_pattern.finditer(text))
    for rule, pattern in phrase_patterns:
        findings.extend(_finding(field, match, rule) for match in pattern.finditer(text))
    return _drop_nested(findings)


def blameless_check_fields(
    fields: Mapping[str, str], *, people: Iterable[str] = (), language: str = "en"
) -> list[Finding]:
    """Findings for several fields, in the mapping's order, each tagged with its key."""
    people = tuple(people)  # may be a one-shot iterator; it is used once per field
    findings: list[Finding] = []
    for name, text in fields.items():
        findings.extend(blameless_check(text, field=name, people=people, language=language))
    if not fields:
        _phrase_patterns(language)  # an unknown language is an error even with no fields
    return findings


def _finding(field: str, match: re.Match[str], rule: Rule) -> Finding:
    return Finding(
        field=field,
        start=match.start(),
        end=match.end(),
        phrase=match.group(),
        rule=rule.id,
        message=rule.message,
        suggestion=rule.suggestion,
    )
