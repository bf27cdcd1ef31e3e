"""`{% load postmortem_text %}` then `{{ postmortem.summary|markdown }}`, the `lang` marks
of stored text (`<div{{ pm|doc_lang }}>`, `<span{{ item|item_lang }}>`) and the words for
ids the pages show (categories, similar-incident reasons, aging buckets)."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy

from postmortems.languages import document_foreign_language, item_language
from postmortems.markdown.html import render_markdown
from postmortems.models import ItemCategory
from postmortems.similar.texts import reason_text
from runbooks.catalog import load_catalog

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(value: object) -> SafeString:
    """Render a Markdown field as sanitised HTML (see postmortems.markdown.html)."""
    return render_markdown("" if value is None else str(value))


def _lang(code: str | None) -> str:
    return format_html(' lang="{}"', code) if code else ""


@register.filter(name="doc_lang")
def doc_lang(pm) -> str:
    """` lang="en"` on an element showing `pm`'s stored text when the page is in another
    language ("" when the same): the text is shown as written, not translated."""
    return _lang(document_foreign_language(pm))


@register.filter(name="doc_title")
def doc_title(pm) -> str:
    """`pm`'s title for a sentence in the page's language: in a span marked with the
    document's language when that differs."""
    return format_html("<span{}>{}</span>", _lang(document_foreign_language(pm)), pm.title)


@register.filter(name="doc_foreign")
def doc_foreign(pm) -> str:
    """`pm`'s language when the page is in another one, else ""."""
    return document_foreign_language(pm) or ""


@register.filter(name="item_lang")
def item_lang(item) -> str:
    """` lang="…"` for an action item's title and description: its postmortem's draft
    language, when the page is in another one."""
    code = item_language(item)
    if code is None:
        return ""
    return _lang(document_foreign_language(item.postmortem))


@register.filter(name="item_category")
def item_category(value: str) -> str:
    """An action-item category id (monitoring, automation, ...) as its label."""
    try:
        return str(ItemCategory(value).label)
    except ValueError:
        return value


@register.filter(name="failure_category")
def failure_category(value: str) -> str:
    """A failure category id (scheduling, resource, ...) as the runbook catalogue's title,
    in the page's language; the id when the catalogue does not define it."""
    category = load_catalog().categories.get(value or "")
    return category.title if category is not None else (value or "")


@register.filter(name="similar_reason")
def similar_reason(reason: str) -> str:
    """A similar incident's reason ("same runbook ttft-spike") in the page's language."""
    return reason_text(reason)


# The aging buckets are CSV values too (English there); the page shows them translated.
_AGE_BUCKETS = {
    "0-7 days": gettext_lazy("0-7 days"),
    "8-30 days": gettext_lazy("8-30 days"),
    "31-90 days": gettext_lazy("31-90 days"),
    "over 90 days": gettext_lazy("over 90 days"),
}


@register.filter(name="age_bucket")
def age_bucket(bucket: str) -> str:
    return str(_AGE_BUCKETS.get(bucket, bucket))
