"""Markdown for postmortem text fields, rendered to HTML that is safe to put in a page.

Two layers, so a gap in one is not an XSS: markdown-it runs with raw HTML off (any `<tag>`
typed by a user comes out as text) and rejects `javascript:`-style link targets; then nh3
(ammonia) keeps only an explicit allowlist of tags, attributes and URL schemes, whatever the
Markdown renderer produced.
"""

import re

import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# The page already uses h1/h2 for the postmortem and its sections, so a "# Heading" in a
# field is shifted down to sit under them (h1 -> h3, h2 -> h4, ... capped at h6).
HEADING_SHIFT = 2

TAGS = {
    "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}}
# Table column alignment, as markdown-it writes it; any other style is dropped.
_ALIGN = {f"text-align:{side}" for side in ("left", "center", "right")}
TAG_ATTRIBUTE_VALUES = {"th": {"style": _ALIGN}, "td": {"style": _ALIGN}}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "noopener noreferrer nofollow"
# What a fenced block's info string becomes ("```python" -> class="language-python").
_CODE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}")


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    if tag == "code" and attribute == "class":
        return value if _CODE_CLASS.fullmatch(value) else None
    return value


_CLEANER = nh3.Cleaner(
    tags=TAGS,
    # Dropped with their content rather than unwrapped, in case raw HTML ever gets turned on.
    clean_content_tags={"script", "style", "iframe", "object", "embed", "template", "svg"},
    attributes=ATTRIBUTES,
    tag_attribute_values=TAG_ATTRIBUTE_VALUES,
    attribute_filter=_attribute_filter,
    url_schemes=URL_SCHEMES,
    link_rel=LINK_REL,
    strip_comments=True,
)


def sanitize(html: str) -> str:
    """The allowlist on its own, for HTML that did not come from `render_markdown`."""
    return _CLEANER.clean(html)


def _image_as_link(renderer, tokens, idx, options, env) -> str:
    # No <img>: a remote image in an internal postmortem is a tracking pixel at best. The
    # image becomes a link to it, which nh3 then checks like any other link.
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a href="{escape(token.attrGet("src") or "")}">{escape(alt)}</a>'


_MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_MD.add_render_rule("image", _image_as_link)
# markdown-it writes ~~x~~ as <s>; <del> is the element that means "removed text".
_MD.add_render_rule("s_open", lambda *_: "<del>")
_MD.add_render_rule("s_close", lambda *_: "</del>")


def render_markdown(text: str) -> SafeString:
    """HTML for a Markdown text field, sanitised; empty string for empty or None."""
    if not text:
        return mark_safe("")
    tokens = _MD.parse(text)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + HEADING_SHIFT, 6)}"
    html = _MD.renderer.render(tokens, _MD.options, {})
    return mark_safe(sanitize(html))  # noqa: S308 - nh3 output, allowlisted above
