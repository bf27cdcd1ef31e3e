"""Which language a postmortem's stored text is in, and when a page must say so.

A document is written once, in its draft language, and never translated afterwards
(docs/languages.md). A page in another language marks that text with `lang` (content in
another language: screen readers, spell checkers and the zh walk read it as such) and
says near the document which language it was drafted in."""

from __future__ import annotations

from django.utils import translation

# Drafts made before there was a choice, and the demo history, were written in English.
FALLBACK = "en"


def document_language(pm) -> str:
    """The language `pm`'s stored text (sections, timeline lines, suggestions) is in."""
    return (getattr(pm, "draft_language", "") or getattr(pm, "language", "") or FALLBACK).lower()


def _same(a: str, b: str) -> bool:
    # "en" and "en-us" are one language to a reader; "zh-hans" and "zh-hant" are not.
    a, b = a.lower(), b.lower()
    return a == b or (a.split("-")[0] == b.split("-")[0] == "en")


def foreign_language(code: str | None) -> str | None:
    """`code` when it is not the active language (the page's), else None."""
    if not code:
        return None
    active = translation.get_language() or FALLBACK
    return None if _same(code, active) else code.lower()


def document_foreign_language(pm) -> str | None:
    """`pm`'s language when the page is in another one, else None."""
    return foreign_language(document_language(pm)) if pm is not None else None


def item_language(item) -> str | None:
    """An action item's text language: its postmortem's draft language (suggestions are
    drafted in it); None for an item of no postmortem (typed, in whatever language) or
    when the postmortem is not loaded (a page never pays a query per row for this)."""
    if not item.postmortem_id:
        return None
    field = type(item)._meta.get_field("postmortem")
    if not field.is_cached(item):
        return None
    return document_language(item.postmortem)
