"""The postmortem, action-item, report and notification pages in Simplified Chinese: no
English sentence is left in what a person reads (stored text, names and code aside), a
refusal is Chinese on the page and English in the API.

Runs once the compiled catalogue exists (the lead builds it from every slice's part)."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from postmortems import services
from postmortems.models import ActionItem
from tests.unit.postmortems.test_pages import incident, people, prom  # noqa: F401 (fixtures)


def _compiled() -> bool:
    return any(
        (Path(p) / "zh_Hans" / "LC_MESSAGES" / "django.mo").is_file() for p in settings.LOCALE_PATHS
    )


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not _compiled(), reason="the zh_Hans catalogue is not compiled yet"),
]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
# Three English words in a row is a sentence someone forgot to mark.
SENTENCE = re.compile(r"[A-Za-z]{2,}(?:[ ,;:'\u2019-]+[A-Za-z]{2,}){2,}")
# Stored text (drafted lines, alert names, markdown the authors wrote), code and names.
SKIPPED_CLASSES = {"mono", "chip", "pm-md", "pm-entry-text", "pm-diff", "rb-code"}
SKIPPED_TAGS = {"script", "style", "code", "pre", "textarea", "time"}
READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}
VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "source"}


class _Reader(HTMLParser):
    """The words a person reads on the page, stored text left out."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self._skip: list[bool] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        skip = tag in SKIPPED_TAGS or bool(
            set((values.get("class") or "").split()) & SKIPPED_CLASSES
        )
        if not any(self._skip):
            self.words += [v for k, v in attrs if k in READ_ATTRIBUTES and v]
        if tag not in VOID:
            self._skip.append(skip)

    def handle_endtag(self, tag):
        if tag not in VOID and self._skip:
            self._skip.pop()

    def handle_data(self, data):
        if not any(self._skip) and data.strip():
            self.words.append(data.strip())


def english(html: str, *, data: tuple[str, ...] = ()) -> list[str]:
    reader = _Reader()
    reader.feed(html)
    text = "\n".join(reader.words)
    for value in data:
        text = text.replace(value, " ")
    return SENTENCE.findall(text)


def page(client, url: str) -> str:
    response = client.get(url, **ZH)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


@pytest.fixture
def zh_pm(incident, people):  # noqa: F811 (the imported fixtures)
    with translation.override("zh-hans"):  # drafted by someone reading Chinese
        pm = services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])
    return pm


def stored(pm) -> tuple[str, ...]:
    """Text the page shows as it was written: titles, drafted lines, suggestions."""
    texts = [pm.title, pm.incident.title, *(e.text for e in pm.entries.all())]
    texts += [s.get(k, "") for s in pm.suggestions for k in ("title", "description")]
    texts += [snap.title for snap in pm.snapshots.all()]
    texts.append("YYYY-MM-DD HH:MM")  # the time field's format, as typed
    return tuple(sorted(filter(None, texts), key=len, reverse=True))


def test_the_draft_is_written_in_chinese(zh_pm):
    assert zh_pm.language == "zh-hans"
    assert zh_pm.title.startswith("复盘：")
    assert "后发现" in zh_pm.summary
    assert "- 告警：" in zh_pm.impact


def test_the_postmortem_pages_are_chinese(client, zh_pm, people):  # noqa: F811
    client.force_login(people["rita"])
    data = stored(zh_pm)
    detail = page(client, reverse("postmortems:detail", args=[zh_pm.pk]))
    assert "时间线" in detail
    assert "根因" in detail
    assert "评审" in detail
    assert english(detail, data=data) == []
    for name in ("list", "items", "notifications", "reports"):
        assert english(page(client, reverse(f"postmortems:{name}")), data=data) == [], name
    for name in ("history", "print"):
        url = reverse(f"postmortems:{name}", args=[zh_pm.pk])
        assert english(page(client, url), data=data) == [], name
    panel = page(client, reverse("postmortems:incident-panel", args=[zh_pm.incident_id]))
    assert english(panel, data=data) == []


def test_the_action_item_list_is_chinese(client, zh_pm, people):  # noqa: F811
    services.action_item_create(
        incident_id=zh_pm.incident_id,
        actor=people["ada"],
        values={"title": "Alert on KV cache", "owner": "rita"},
        postmortem_id=zh_pm.pk,
    )
    assert ActionItem.objects.exists()
    client.force_login(people["ada"])
    listing = page(client, reverse("postmortems:items"))
    assert "负责人" in listing
    assert "1 个行动项" in listing
    assert english(listing, data=("Alert on KV cache",)) == []


def test_a_refusal_is_chinese_on_the_page_and_english_in_the_api(client, zh_pm, people):  # noqa: F811
    client.force_login(people["cara"])
    # Publishing a draft nobody reviewed: the move is refused, in the page's language.
    refused = client.post(reverse("postmortems:publish", args=[zh_pm.pk]), **ZH, follow=True)
    assert "无法把复盘" in refused.content.decode()
    item = services.action_item_create(
        incident_id=zh_pm.incident_id, actor=people["ada"], values={"title": "x"}
    )
    client.force_login(people["ada"])
    api = client.patch(
        reverse("postmortems_api:item", args=[item.pk]),
        {"status": "wont_do"},  # no reason given: the service refuses
        content_type="application/json",
        **ZH,
    )
    assert api.status_code in (400, 409), api.content
    assert api.json()["detail"] == "reason: say why this will not be done."


def test_the_deliveries_page_is_chinese(client, people):  # noqa: F811
    client.force_login(people["ada"])
    listing = page(client, reverse("notifications:list"))
    assert "通知" in listing
    assert english(listing) == []
