"""A postmortem is shown in the language it was drafted in (issue 28, zh walk E1-E6, C1):
its stored text is marked with `lang` where the page is in another language, the page
says which language it was drafted in, and everything the console itself says around it
(category labels, dates, chart axes, the not-captured reason, the history, the similar
incidents' reasons) reads in the reader's language.

The Chinese checks need the merged catalogue (the lead compiles /tmp/po/*.po): they skip
while this slice's msgids are not translated yet."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import translation
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from postmortems import services
from postmortems.models import ActionItem, MetricSnapshot
from postmortems.templatetags.postmortem_text import failure_category, item_category
from runbooks.catalog import load_catalog
from tests.english_words import english_words
from tests.unit.postmortems.test_pages import incident, prom  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def merged() -> bool:
    """This slice's Chinese is in the compiled catalogue."""
    with translation.override("zh-hans"):
        return translation.gettext("Approvals withdrawn") != "Approvals withdrawn"


needs_zh = pytest.mark.skipif(not merged(), reason="fix-postmortems.po is not merged yet")

SKIPPED = {"script", "style", "code", "pre", "kbd", "samp", "textarea", "title"}
VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "source"}


class _Reader(HTMLParser):
    """What the zh walk counts: text outside code and outside elements marked with another
    language than the page's (`foreign` collects those)."""

    def __init__(self) -> None:
        super().__init__()
        self.page_lang = ""
        self.text: list[str] = []
        self.foreign: list[str] = []
        self._stack: list[tuple[bool, bool]] = []  # (skipped, foreign)

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "html":
            self.page_lang = values.get("lang", "")
            return
        lang = values.get("lang")
        foreign = bool(lang) and lang != self.page_lang
        if tag not in VOID:
            self._stack.append((tag in SKIPPED, foreign))

    def handle_endtag(self, tag):
        if tag not in VOID and tag != "html" and self._stack:
            self._stack.pop()

    def handle_data(self, data):
        if not data.strip() or any(s for s, _f in self._stack):
            return
        (self.foreign if any(f for _s, f in self._stack) else self.text).append(data.strip())


def read(html: str) -> _Reader:
    reader = _Reader()
    reader.feed(html)
    return reader


def names(pm) -> set[str]:
    """Data a reader sees as written: alert names and labels, the runbook, people."""
    found = {
        "ttft-spike",
        "vllm-chat",
        "llm-serving",
        "PromQL",
        "console-guard",
        "console",
        "guard",
    }
    for user in User.objects.all():
        found.update({user.username, user.first_name, user.last_name})
    for alert in pm.incident.alerts.all():
        found.update(str(v) for v in (alert.labels or {}).values())
        found.update(str(k) for k in (alert.labels or {}))
    found.update(re.findall(r"[A-Za-z][\w-]*", pm.incident.title))
    return found


def zh_page(client, url: str) -> str:
    response = client.get(url, **ZH)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


@pytest.fixture
def en_pm(incident, people):  # noqa: F811 (the imported fixtures)
    """Drafted in English (as the demo history is), one suggestion accepted."""
    pm = services.postmortem_draft(incident_id=incident.pk, actor=people["rita"], language="en")
    services.action_item_accept_suggestion(
        postmortem_id=pm.pk, actor=people["ada"], source=pm.suggestions[0]["source"]
    )
    return pm


# --- E2: the document's text is marked with its language ---------------------------------
def test_an_english_draft_is_marked_lang_en_on_a_chinese_page(client, en_pm, people):
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:detail", args=[en_pm.pk]))
    assert 'data-testid="drafted-in"' in html
    assert re.search(r'<h1 data-testid="pm-title" lang="en">', html)
    assert re.search(r'data-testid="section-summary" lang="en"', html)
    assert re.search(r'class="pm-entry-text" lang="en"', html)
    assert re.search(r'data-testid="item-title" lang="en"', html)  # the accepted item
    assert re.search(r'class="muted small" lang="en"', html)  # a suggestion's description
    reader = read(html)
    assert reader.page_lang == "zh-hans"
    foreign = " ".join(reader.foreign)
    assert en_pm.summary.split(".")[0] in foreign  # shown, as written, marked


def test_the_same_draft_has_no_lang_marks_for_an_english_reader(client, en_pm, people):
    client.force_login(people["rita"])
    html = client.get(reverse("postmortems:detail", args=[en_pm.pk])).content.decode()
    assert 'data-testid="drafted-in"' not in html
    assert 'data-testid="pm-title">' in html
    assert 'data-testid="section-summary">' in html
    assert 'class="pm-entry-text">' in html


@needs_zh
def test_a_chinese_reader_sees_no_english_outside_the_marked_document(client, en_pm, people):
    client.force_login(people["rita"])
    allowed = names(en_pm)
    for url in (
        reverse("postmortems:detail", args=[en_pm.pk]),
        reverse("postmortems:print", args=[en_pm.pk]),
        reverse("postmortems:history", args=[en_pm.pk]),
        reverse("postmortems:items"),
    ):
        reader = read(zh_page(client, url))
        text = "\n".join(reader.text)
        assert english_words(text, allowed) == [], (url, english_words(text, allowed))
    detail = zh_page(client, reverse("postmortems:detail", args=[en_pm.pk]))
    assert "以英语撰写" in detail or "以英文撰写" in detail


def test_print_and_history_mark_the_document_text(client, en_pm, people):
    services.postmortem_update(
        postmortem_id=en_pm.pk, actor=people["rita"], version=en_pm.version,
        changes={"summary": "Queue grew."},
    )  # fmt: skip
    client.force_login(people["rita"])
    printed = zh_page(client, reverse("postmortems:print", args=[en_pm.pk]))
    assert re.search(r'<div class="pm-md" lang="en">', printed)
    assert re.search(r'<td lang="en">', printed)  # a timeline line
    assert 'data-testid="drafted-in"' in printed
    history = zh_page(client, reverse("postmortems:history", args=[en_pm.pk]))
    assert re.search(r'class="pm-diff pm-new" lang="en">Queue grew\.', history)


def test_demo_postmortems_are_drafted_in_english(monkeypatch):
    from postmortems.demo import documents

    assert documents.DEMO_LANGUAGE == "en"


# --- E1: suggestions come from the catalogue edition of the draft's language ------------
def test_suggestions_are_drafted_in_the_drafts_language(incident, people, client):  # noqa: F811
    with translation.override("en"):  # the drafter reads English, the draft is Chinese
        pm = services.postmortem_draft(
            incident_id=incident.pk, actor=people["rita"], language="zh-hans"
        )
    zh = load_catalog().edition("zh-hans").get(pm.runbook)
    en = load_catalog().edition("en").get(pm.runbook)
    assert [s["title"] for s in pm.suggestions] == [t.title for t in zh.long_term]
    assert [s["description"] for s in pm.suggestions] == [t.description for t in zh.long_term]
    assert zh.long_term[0].title != en.long_term[0].title
    item = services.action_item_accept_suggestion(
        postmortem_id=pm.pk, actor=people["ada"], source=pm.suggestions[0]["source"]
    )
    assert item.title == zh.long_term[0].title
    # An English reader sees it as written, marked Chinese, on the list and the document.
    client.force_login(people["ada"])
    listing = client.get(reverse("postmortems:items")).content.decode()
    assert re.search(r'data-testid="item-title" lang="zh-hans"', listing)
    assert re.search(r'pm-item-desc" lang="zh-hans"', listing)
    doc = client.get(reverse("postmortems:detail", args=[pm.pk])).content.decode()
    assert 'data-testid="drafted-in"' in doc
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=people['ada'])[1]}")
    body = api.get(reverse("postmortems_api:item", args=[item.pk])).json()
    assert body["language"] == "zh-hans"


# --- C1: ids shown as labels ------------------------------------------------------------
def test_categories_are_shown_as_labels(client, en_pm, people):
    with translation.override("zh-hans"):
        assert item_category("automation") == str(
            ActionItem._meta.get_field("category").flatchoices[1][1]
        )
        assert failure_category(en_pm.category) == load_catalog().categories[en_pm.category].title
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:detail", args=[en_pm.pk]))
    title = load_catalog().edition("zh-hans").categories[en_pm.category].title
    assert f" · {title}</dd>" in html
    chips = re.findall(r'<span class="chip">([^<]+)</span> <span class="chip">P\d', html)
    assert chips
    assert not any(c in ("automation", "config", "monitoring") for c in chips)


# --- E3: dates in the reader's format ---------------------------------------------------
def test_charts_and_months_use_the_readers_formats(client, en_pm, people):
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:detail", args=[en_pm.pk]))
    assert 'data-time-format="%H:%M&lt;br&gt;%-m月%-d日"' in html
    printed = zh_page(client, reverse("postmortems:print", args=[en_pm.pk]))
    assert "data-time-format=" in printed


@needs_zh
def test_the_reports_month_axis_is_chinese(client, en_pm, people):
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:reports"))
    assert '"tickformat": "%Y\\u5e74%-m\\u6708"' in html  # json_script escapes it
    assert re.search(r"\d{4}年\d{1,2}月", html)
    assert not re.search(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b", html)


# --- E4: the not-captured reason in the reader's language -------------------------------
def test_a_snapshot_error_is_worded_when_read(client, en_pm, people):
    snap = en_pm.snapshots.first() or MetricSnapshot.objects.create(
        postmortem=en_pm, chart_id="ttft_p95", title="TTFT", promql="up", start=en_pm.created_at,
        end=en_pm.created_at, step_seconds=30, captured_at=en_pm.created_at,
    )  # fmt: skip
    error = "Prometheus at http://127.0.0.1:9 refused the connection"
    MetricSnapshot.objects.filter(pk=snap.pk).update(series=[], error=error)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=people['vic'])[1]}")
    body = api.get(reverse("postmortems_api:detail", args=[en_pm.pk]), **ZH).json()
    shot = next(s for s in body["snapshots"] if s["chart_id"] == snap.chart_id)
    assert shot["error_i18n"][0]["id"] == "runbooks.prometheus.refused"
    assert shot["error_i18n"][0]["params"]["url"] == "http://127.0.0.1:9"
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:detail", args=[en_pm.pk]))
    assert "refused the connection" not in html
    assert "http://127.0.0.1:9" in html
    assert english_words(shot["error"]) == []


# --- E5: keys are marked as keys --------------------------------------------------------
def test_the_print_hint_marks_keys(client, en_pm, people):
    client.force_login(people["rita"])
    printed = client.get(reverse("postmortems:print", args=[en_pm.pk])).content.decode()
    assert "<kbd>Ctrl</kbd>+<kbd>P</kbd>" in printed


# --- the history words what the console wrote -------------------------------------------
def test_the_history_words_refreshes_and_statuses(client, en_pm, people):
    services.postmortem_refresh(postmortem_id=en_pm.pk, actor=people["rita"])
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:history", args=[en_pm.pk]))
    assert 'data-field="refresh"' in html
    assert ">refresh<" not in html


@needs_zh
def test_the_history_refresh_row_reads_chinese(client, en_pm, people):
    services.postmortem_refresh(postmortem_id=en_pm.pk, actor=people["rita"])
    client.force_login(people["rita"])
    html = zh_page(client, reverse("postmortems:history", args=[en_pm.pk]))
    assert "已从事件" in html
    assert "facts refreshed" not in html


# --- E6: similar incidents' reasons in the request's language ---------------------------
def test_similar_reasons_are_worded_with_ids(make_user):
    from tests.unit.postmortems.test_similar import LABELS, api
    from tests.unit.postmortems.test_similar import incident as similar_incident

    before = similar_incident(runbook="ttft-spike", hours_ago=5, **LABELS)
    now = similar_incident(runbook="ttft-spike", hours_ago=1, **LABELS)
    client = api(make_user, roles.VIEWER, "viv")
    body = client.get(f"/api/v1/incidents/{now.pk}/similar/", **ZH).json()
    row = next(s for s in body["similar"] if s["id"] == before.pk)
    ids = sorted(i[0]["id"] for i in row["reasons_i18n"])
    assert ids == [
        "postmortems.similar.lws",
        "postmortems.similar.node",
        "postmortems.similar.runbook",
    ]
    whats = {i[0]["params"]["what"] for i in row["reasons_i18n"]}
    assert whats == {"ttft-spike", "llm-serving/vllm-chat", "gpu-node-3"}
    allowed = whats | {"ttft-spike", "llm-serving", "vllm-chat", "gpu-node-3"}
    for reason in row["reasons"]:
        assert english_words(reason, allowed) == [], reason
    english = client.get(f"/api/v1/incidents/{now.pk}/similar/").json()
    row = next(s for s in english["similar"] if s["id"] == before.pk)
    assert "same runbook ttft-spike" in row["reasons"]
