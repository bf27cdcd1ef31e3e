"""Walk the console's pages in a browser and its API, and list the English a Chinese reader
would see. Used by tests/integration/i18n/test_zh_walk.py.

A page's text is what a reader sees: text nodes whose element is rendered (after every
<details> is opened and the page scrolled, so lazy panels load), plus placeholders,
tooltips (title) and button values; never <code>, <pre>, <kbd>, <samp>, [translate=no],
scripts or styles. Text marked as another language (lang="en": the switcher's own button,
a postmortem drafted in English) is listed apart, not counted. The data's own strings
(names.py) and ids are taken out before the words are counted.
"""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urlsplit

from tests.english_words import english_words
from tests.integration.i18n.names import strip_phrases

TEXTS_JS = """() => {
  const SKIP = "code, pre, kbd, samp, [translate=no], script, style, noscript, template";
  // Text marked as another language (the switcher's "English" button) is meant so.
  const foreign = el => !(el.closest("[lang]")?.lang || "zh").toLowerCase().startsWith("zh");
  const out = [], marked = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.nodeValue.replace(/\\s+/g, " ").trim();
    const el = n.parentElement;
    if (!text || !el || el.closest(SKIP)) continue;
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    (foreign(el) ? marked : out).push(text);
  }
  const attrs = "[placeholder], [title], input[type=submit][value], input[type=button][value]";
  for (const el of document.querySelectorAll(attrs)) {
    if (el.closest(SKIP) || foreign(el) || !el.checkVisibility({visibilityProperty: true})) {
      continue;
    }
    for (const a of ["placeholder", "title"]) if (el.getAttribute(a)) out.push(el.getAttribute(a));
    if (el.matches("input[type=submit], input[type=button]")) out.push(el.value);
  }
  return {texts: out, marked: marked};
}"""
LINKS_JS = "() => Array.from(document.querySelectorAll('a[href]'), a => a.href)"
OPEN_JS = """() => {
  document.querySelectorAll("details:not([open])").forEach(d => { d.open = true; });
  window.scrollTo(0, document.body.scrollHeight);
}"""

# Not walked: signing out, the Django admin, files (CSV, Markdown, iCal, a raw webhook
# body) and the JSON API (checked by api_check), one-tap links (they act on GET).
SKIP = re.compile(
    r"^/(logout|admin|api|static|media|oidc)/|\.(csv|md|ics|json|txt)$|/body/$|/export|"
    r"/pager/ack/|/pager/feeds/"
)
NUMBER = re.compile(r"/\d+(?=/|$)")
# Ids and flags taken out first, also inside a longer chunk (english_words judges whole
# chunks): a run of ASCII id characters mixing letters and digits is an id (a fingerprint
# d8449bdea3d4111e, meta-llama/Llama-3.1-70B-Instruct, x86_64, a feed URL's key); a
# command-line flag is a code (--gpu-memory-utilization).
ASCII_RUN = re.compile(r"(?<![A-Za-z0-9_./:=+-])[A-Za-z0-9][A-Za-z0-9_./:=+-]*")
FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w.-]*(=\S*)?")


def codes_out(text: str) -> str:
    def mixed(m: re.Match) -> str:
        run = m.group(0)
        is_id = any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        return " " if is_id else run

    return ASCII_RUN.sub(mixed, FLAG.sub(" ", text))


# Codes no data row names: Kubernetes enum values (a restartPolicy shown as evidence) and
# the commands the console tells people to run where no <code> can mark them (a tooltip).
K8S_VALUES = {"Always", "Never", "OnFailure", "RecreateGroupOnPodRestart"}
COMMANDS = ["make run"]


@dataclass
class Finding:
    url: str
    words: list[str]
    lines: list[str]  # the texts holding them


@dataclass
class Walk:
    base: str
    words: set[str]  # names allowed
    phrases: list[str]  # data strings stripped first
    per_pattern: int = 4  # demo rows of one kind of page: that many are enough
    queries: int = 2  # variants of one path by query string (filters, pages)
    seen: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)
    errors: list[tuple[str, int | str]] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    marked: dict[str, list[str]] = field(default_factory=dict)  # English marked lang="en"

    def english(self, texts: list[str]) -> tuple[list[str], list[str]]:
        """The English words in `texts`, and the lines holding them as counted."""
        words, lines = [], []
        for text in texts:
            bare = codes_out(strip_phrases(text, [*self.phrases, *COMMANDS]))
            found = english_words(bare, allowed=self.words | K8S_VALUES)
            if found:  # the line as counted: the data's own strings already taken out
                words += found
                lines.append(" ".join(bare.split())[:300])
        return words, lines

    def check(self, url: str, texts: list[str]) -> None:
        words, lines = self.english(texts)
        if words:
            self.findings.append(Finding(url, words, lines))

    def walk(self, page, must: list[str], timeout_ms: int = 15000) -> None:
        """Visit `must` (paths) and every same-origin page they link to, breadth first;
        of the pages that differ only by an id, `per_pattern` beyond those in `must`."""
        queue = list(dict.fromkeys(must))
        required = set(queue)
        counts: dict[str, int] = defaultdict(int)
        # A panel htmx loads that fails leaves its text out: the failure is a finding.
        failed: list[str] = []
        page.on("response", lambda r: failed.append(f"{r.status} {r.request.method} {r.url}")
                if r.status >= 500 and r.url.startswith(self.base)
                and r.request.resource_type != "document" else None)  # fmt: skip
        while queue:
            path = queue.pop(0)
            if path in self.seen:
                continue
            self.seen.add(path)
            split = urlsplit(path)
            pattern = NUMBER.sub("/{n}", split.path) + ("?" if split.query else "")
            if path not in required:
                limit = self.queries if split.query else self.per_pattern
                if counts[pattern] >= limit:
                    continue
            counts[pattern] += 1
            failed.clear()
            response = self.goto(page, path, timeout_ms)
            if isinstance(response, str):
                if response:
                    self.errors.append((path, response))
                continue
            status = response.status if response is not None else 0
            self.visited.append(path)
            if status >= 400 or "/login/" in page.url:
                self.errors.append((path, status if status >= 400 else 302))
                continue
            settle(page)
            page.evaluate(OPEN_JS)
            settle(page)
            self.errors += [(path, f"a request failed: {f}") for f in failed]
            found = page.evaluate(TEXTS_JS)
            self.check(path, found["texts"])
            if self.english(found["marked"])[0]:
                self.marked[path] = found["marked"]
            for href in page.evaluate(LINKS_JS):
                link = self.local(href)
                if link and link not in self.seen:
                    queue.append(link)

    def goto(self, page, path: str, timeout_ms: int):
        """The response, or why there is none ("" for a download: a file, not a page). A
        failed navigation leaves Chromium on its error page, which would interrupt the
        next one: the page goes blank first, and a navigation interrupted is tried again."""
        from playwright.sync_api import Error as PlaywrightError

        why = ""
        for _ in range(2):
            try:
                return page.goto(self.base + path, wait_until="load", timeout=timeout_ms)
            except PlaywrightError as exc:
                why = str(exc).splitlines()[0][:200]
                with contextlib.suppress(PlaywrightError):
                    page.goto("about:blank")
                if "Download is starting" in why:
                    return ""
        return why

    def local(self, href: str) -> str | None:
        href = urldefrag(href)[0]
        if not href.startswith(self.base):
            return None
        # "?{% querystring %}" doubles the "?" (the tag writes its own): walked as meant.
        path = (href[len(self.base) :] or "/").replace("??", "?")
        return None if SKIP.search(urlsplit(path).path) else path

    def report(self, limit: int = 12) -> str:
        """Each page with its English words, then (up to `limit`) the lines holding them."""
        lines = []
        for f in self.findings:
            lines.append(f"{f.url}: {', '.join(sorted(set(f.words)))}")
            lines += [f"    | {line}" for line in f.lines[:limit]]
        lines += [f"{path}: " + (f"HTTP {why}" if isinstance(why, int) else why)
                  for path, why in self.errors]  # fmt: skip
        if self.marked:  # not failures: the page says this text is in another language
            lines.append("English marked lang=en (not counted):")
            for path, texts in self.marked.items():
                lines.append(f"  {path}: {' | '.join(dict.fromkeys(texts))[:300]}")
        return "\n".join(lines)


def settle(page, timeout_ms: int = 4000) -> None:
    """Let htmx load what the page asks for; a page that polls never goes idle, and is
    read as it stands after the timeout."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_load_state("networkidle", timeout=timeout_ms)


# --- the API ----------------------------------------------------------------------------
# Keys whose values are data, not the console's words: labels, parameters, queries,
# addresses, stored payloads, unit ids (`unit_label` holds the words), names, titles (an
# incident's, a postmortem's, an item's: what people or alerts wrote; the catalogue's
# titles are read on the pages).
DATA_KEYS = {
    "labels", "annotations", "group_labels", "params", "query", "promql", "expr", "url",
    "generator_url", "runbook_url", "grouping_key", "fingerprint", "payload", "body", "diff",
    "headers", "matchers", "plan_snapshot", "fault_changes", "title", "comment", "note",
    "username", "name", "slug", "target", "namespace", "lws", "runbook", "kind", "status",
    "data", "current", "desired", "before", "after", "value", "user_agent", "unit",
}  # fmt: skip


def api_texts(value, key: str = "") -> list[tuple[str, str]]:
    """Every (key, string) of a JSON answer a client would show as text: strings with a
    space (one word values are states and ids), outside the data keys and `_i18n`. An
    object that says its text is in another language (a postmortem drafted in English,
    its action items: `draft_language`, `language`) is that document's, never translated."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        language = value.get("draft_language") or value.get("language")
        if isinstance(language, str) and language and not language.startswith("zh"):
            return out
        for k, v in value.items():
            if k in DATA_KEYS or k.endswith(("_i18n", "_at", "_url")):
                continue
            out += api_texts(v, k)
    elif isinstance(value, list):
        for v in value:
            out += api_texts(v, key)
    elif isinstance(value, str) and " " in value.strip():
        out.append((key, value))
    return out


def api_check(walk: Walk, session, urls: list[str]) -> None:
    """GET each API URL in Chinese (Accept-Language: zh-hans) and check its texts. The
    report's lines are the fields as counted (the data's own strings taken out)."""
    for url in urls:
        r = session.get(walk.base + url, headers={"Accept-Language": "zh-hans"}, timeout=30)
        if r.status_code >= 400:
            walk.errors.append(("API " + url, r.status_code))
            continue
        texts = api_texts(r.json())
        words, _ = walk.english([v for _, v in texts])
        if words:
            lines = [f"{k}: {line}" for k, v in texts for line in walk.english([v])[1]]
            walk.findings.append(Finding("API " + url, words, lines))
