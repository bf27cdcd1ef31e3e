"""Word lists for the blameless-language check, one module per language.

A language module (`en.py`, later `de.py`, ...) defines `LANGUAGE = Language(...)` and
nothing else the engine needs: its code is added to `LANGUAGES` below, and
`tests/unit/postmortems/test_blameless.py` fails if a module exists that is not listed,
so a new file cannot silently go unused.

Every pattern is a regular-expression fragment matched case-insensitively. For a spaced
language the engine (`postmortems.blameless.check`) wraps each one in word boundaries
that also treat a hyphen as part of the word, so authors write `blame`, not
`\\bblame\\b`, and "blame-free" stays unflagged.

`message` and `suggestion` are English msgids (gettext_lazy): the engine turns them into text
in the viewer's language, whatever the language of the list that matched.
"""

from dataclasses import dataclass
from importlib import import_module

from django.utils.functional import Promise

StrOrPromise = str | Promise  # a gettext_lazy string until a finding is made


@dataclass(frozen=True)
class Rule:
    id: str  # stable id shown to users and used by tests, e.g. "human-error"
    patterns: tuple[str, ...]
    message: StrOrPromise  # why the phrase reads as blame
    suggestion: StrOrPromise  # a rewrite phrased around systems and process


@dataclass(frozen=True)
class Language:
    code: str
    # Phrases that read as blame whoever they are about.
    rules: tuple[Rule, ...]
    # How a named person becomes the cause of a failure. The engine builds three shapes from
    # these lists and the `people` it is given:
    #   subject     "{person} [filler...] {failure_verb}"  or  "{person} {adverb} <verb>"
    #   agent       "{by_pattern} {person}"
    #   possessive  "{person}{possessive} [word...] {blame_noun | failure_verb}"
    failure_verbs: tuple[str, ...]
    # Words that may sit between the person and the verb without changing who acts
    # ("alice had forgotten", "bob then broke").
    fillers: tuple[str, ...]
    # Adverbs that turn any verb into a failure ("carol accidentally restarted ...").
    adverbs: tuple[str, ...]
    by_patterns: tuple[str, ...]
    possessive: str
    blame_nouns: tuple[str, ...]
    # Message and suggestion for every person-shaped finding (its `patterns` are unused).
    person_rule: Rule
    # Whether words are separated by spaces. Chinese is not: its patterns match without
    # word boundaries (every CJK character counts as a word character to `re`), and a name
    # may touch the verb ("张三忘了").
    spaced: bool = True
    # A character class for the script this list is written in: a text is checked against
    # the lists whose script it contains (see postmortems.blameless.check).
    script: str = "[A-Za-z]"


# Register a new language by adding its module name here (see the module docstring).
LANGUAGES: tuple[str, ...] = ("en", "zh_hans")


def load(code: str) -> Language:
    """The word lists for `code`; ValueError naming the supported codes otherwise."""
    if code not in LANGUAGES:
        supported = ", ".join(LANGUAGES)
        raise ValueError(f"Blameless check: unknown language {code!r}; supported: {supported}.")
    language = import_module(f"{__name__}.{code}").LANGUAGE
    if language.code != code:
        # A copied module whose code was not updated would otherwise answer for the wrong
        # language without anyone noticing.
        raise ValueError(f"Blameless check: {__name__}.{code} declares code {language.code!r}.")
    return language
