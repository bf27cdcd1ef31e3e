"""A drill plan's title in the reader's language.

A plan made without a title stores the default, "<runbook title> drill", from the
catalogue's English edition (stored text is written once). Shown to a reader of another
language, that default is worded again from their edition of the catalogue; a title a
person typed is shown as typed."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext

from runbooks.catalog import load_catalog


def default_title(english_title: str) -> str:
    """What drills/services.py stores when no title is given."""
    return f"{english_title} drill"


def plan_title(plan: Any) -> str:
    title = plan.title or ""
    catalog = load_catalog()
    english = catalog.english.get(plan.runbook)
    if english is None or title != default_title(english.title):
        return title
    shown = catalog.get(plan.runbook) or english
    return gettext("%(title)s drill") % {"title": shown.title}
