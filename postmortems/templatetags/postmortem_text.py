"""`{% load postmortem_text %}` then `{{ postmortem.summary|markdown }}`."""

from django import template
from django.utils.safestring import SafeString

from postmortems.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(value: object) -> SafeString:
    """Render a Markdown field as sanitised HTML (see postmortems.markdown)."""
    return render_markdown("" if value is None else str(value))
