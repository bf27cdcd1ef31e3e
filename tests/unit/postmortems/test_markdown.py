from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.template import Context, Template
from django.utils.safestring import SafeString

from postmortems.markdown.html import ATTRIBUTES, TAGS, render_markdown, sanitize


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.elements


def assert_inert(html: str) -> None:
    """What a browser would see: only allowlisted tags and attributes, and no link that can
    run script. Parsed rather than grepped, so escaped text like "&lt;script&gt;" is fine."""
    for tag, attrs in elements(html):
        assert tag in TAGS, html
        for name, value in attrs.items():
            allowed = (
                ATTRIBUTES.get(tag, set()) | {"rel"} | ({"style"} if tag in {"th", "td"} else set())
            )
            assert name in allowed, html
            if name == "href":
                # Browsers drop tabs/newlines and leading spaces before reading the scheme.
                cleaned = "".join(ch for ch in value or "" if ch not in "\t\n\r").strip()
                assert urlsplit(cleaned).scheme.lower() in {"", "http", "https", "mailto"}, html
            if name == "rel":
                assert value == "noopener noreferrer nofollow", html
            if name == "style":
                assert value in {"text-align:left", "text-align:center", "text-align:right"}


XSS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=https://evil.example></iframe>",
    "<svg onload=alert(1)>",
    "<style>body{display:none}</style>",
    "[x](&#106;avascript:alert(1))",
    "[x](&#x6A;avascript&colon;alert(1))",
    "[x](java&#x09;script:alert(1))",
    "[x](java\tscript:alert(1))",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "![x](javascript:alert(1))",
    '![a" onerror="alert(1)](https://example.com/a.png)',
    '[x](https://example.com/" onmouseover="alert(1))',
    '[x](https://example.com "t\\" onmouseover=\\"alert(1)")',
    '```python" onclick="alert(1)\ncode\n```',
    "<!-- <script>alert(1)</script> -->",
    "| a |\n|---|\n| <script>alert(1)</script> |",
    "**<img src=x onerror=alert(1)>**",
]


@pytest.mark.parametrize("text", XSS)
def test_xss_attempts_come_out_inert(text):
    html = render_markdown(text)
    assert_inert(html)
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()


def test_hostile_markup_is_shown_as_text_not_dropped():
    # A responder pasting an HTML error page should see what they pasted.
    assert render_markdown("<script>alert(1)</script>") == (
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )
    assert "[x](javascript:alert(1))" in render_markdown("[x](javascript:alert(1))")


HOSTILE_HTML = [
    "<script>alert(1)</script>ok",
    '<img src=x onerror="alert(1)">ok',
    '<a href="javascript:alert(1)">ok</a>',
    '<a href="JaVaScRiPt:alert(1)">ok</a>',
    '<a href="&#106;avascript:alert(1)">ok</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD4=">ok</a>',
    '<a href="https://example.com" onclick="alert(1)" rel="opener">ok</a>',
    "<iframe src=https://evil.example>fallback</iframe>ok",
    "<svg onload=alert(1)><circle/></svg>ok",
    "<style>*{x:y}</style>ok",
    '<code class="language-python evil">ok</code>',
    '<td style="background:url(javascript:alert(1))">ok</td>',
    '<p style="position:fixed">ok</p>',
    "<form action=https://evil.example><input name=x></form>ok",
]


@pytest.mark.parametrize("html", HOSTILE_HTML)
def test_the_sanitiser_holds_even_if_markdown_let_html_through(html):
    # Second layer on its own: markdown-it has raw HTML off, but nh3 must not depend on it.
    cleaned = sanitize(html)
    assert_inert(cleaned)
    assert "ok" in cleaned
    for bad in ("<script", "<iframe", "<svg", "<style", "<form", "onclick", "onerror"):
        assert bad not in cleaned.lower()


def test_benign_markdown_renders():
    text = (
        "# Summary\n\n## Impact\n\n### Detail\n\n"
        "- **bold** and *em* and ~~struck~~\n- `inline`\n\n"
        "1. first\n2. second\n\n"
        "> quoted\n\n"
        "```python\nprint('hi')\n```\n\n"
        "| Time | Event |\n|:-----|------:|\n| 02:00 | paged |\n\n"
        "---\n\n"
        '[runbook](https://example.com/rb "Runbook") <https://example.com/a> '
        "<mailto:oncall@example.com> [incident](/incidents/7)"
    )
    html = render_markdown(text)
    assert isinstance(html, SafeString)
    assert_inert(html)
    # The page owns h1/h2, so field headings sit under them.
    assert "<h3>Summary</h3>" in html
    assert "<h4>Impact</h4>" in html
    assert "<h5>Detail</h5>" in html
    assert "<h1" not in html
    assert "<h2" not in html
    assert "<strong>bold</strong>" in html
    assert "<em>em</em>" in html
    assert "<del>struck</del>" in html
    assert "<code>inline</code>" in html
    assert "<ol>" in html
    assert "<li>first</li>" in html
    assert "<blockquote>" in html
    assert "<pre><code class=\"language-python\">print('hi')" in html
    assert '<th style="text-align:left">Time</th>' in html
    assert '<td style="text-align:right">paged</td>' in html
    assert "<hr>" in html
    rel = 'rel="noopener noreferrer nofollow"'
    assert f'<a href="https://example.com/rb" title="Runbook" {rel}>runbook</a>' in html
    assert f'<a href="https://example.com/a" {rel}>' in html
    assert f'<a href="mailto:oncall@example.com" {rel}>' in html
    assert f'<a href="/incidents/7" {rel}>incident</a>' in html


def test_images_become_links_so_nothing_loads_from_elsewhere():
    html = render_markdown("![latency *p99*](https://grafana.example/p99.png)")
    assert html == (
        '<p><a href="https://grafana.example/p99.png" rel="noopener noreferrer nofollow">'
        "latency p99</a></p>\n"
    )


def test_empty_text_renders_nothing():
    assert render_markdown("") == ""
    assert isinstance(render_markdown(""), SafeString)


def test_template_filter_renders_once_and_stays_safe():
    template = Template("{% load postmortem_text %}<div>{{ text|markdown }}</div>")
    html = template.render(Context({"text": "**ok** <script>alert(1)</script>"}))
    assert html == ("<div><p><strong>ok</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div>")
    assert template.render(Context({"text": None})) == "<div></div>"
