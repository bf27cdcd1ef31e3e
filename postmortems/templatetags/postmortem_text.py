"""`{% load postmortem_text %}` then `{{ postmortem.summary|markdown }}`."""

from django import template
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy

from postmortems.markdown.html import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(value: object) -> SafeString:
    """Render a Markdown field as sanitised HTML (see postmortems.markdown.html)."""
    return render_markdown("" if value is None else str(value))


# The API answers these reasons in English ("same runbook ttft-spike"); the page words them
# in the viewer's language, keeping the identifier as it is.
_REASONS = (
    ("same runbook ", gettext_lazy("same runbook %(what)s")),
    ("same LWS ", gettext_lazy("same LWS %(what)s")),
    ("same node ", gettext_lazy("same node %(what)s")),
)


@register.filter(name="similar_reason")
def similar_reason(reason: str) -> str:
    for prefix, words in _REASONS:
        if reason.startswith(prefix):
            return str(words) % {"what": reason[len(prefix) :]}
    return reason


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
