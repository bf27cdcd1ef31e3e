"""The blameless-language check for postmortem text: `check.py` is the engine,
`languages/` holds the word lists, one module per language."""

from postmortems.blameless.check import LANGUAGES, Finding, blameless_check, blameless_check_fields

__all__ = ["LANGUAGES", "Finding", "blameless_check", "blameless_check_fields"]
