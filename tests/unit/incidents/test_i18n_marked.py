"""The incident console's pages in Simplified Chinese: no English sentence is left on them
(stored data and names aside), while the JSON API keeps answering in English.

Runs once the compiled catalogue exists (the lead builds locale/zh_Hans from every
slice's part file); until then there is nothing Chinese to check."""

import re
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from console import roles
from incidents.models import ReceiptOutcome, WebhookReceipt
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory


def _catalogue_compiled() -> bool:
    paths = [Path(p) for p in settings.LOCALE_PATHS]
    return any((p / "zh_Hans" / "LC_MESSAGES" / "django.mo").is_file() for p in paths)


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not _catalogue_compiled(), reason="locale/zh_Hans/LC_MESSAGES/django.mo not built yet"
    ),
]

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
HTMX = {"HTTP_HX_REQUEST": "true"}
# Three English words in a row is a sentence someone forgot to mark.
SENTENCE = re.compile(r"[A-Za-z]{2,}(?:[ ,;:'\u2019-]+[A-Za-z]{2,}){2,}")
# Not prose: code, names and stored data a page shows as they are.
SKIPPED_TAGS = {"script", "style", "code", "pre", "kbd", "samp"}
SKIPPED_CLASSES = {"mono", "chip", "ev-msg", "ev-who"}
READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}
VOID = {"br", "hr", "img", "input", "meta", "link", "wbr", "source"}


class _Text(HTMLParser):
    """The text a person reads: element text and the attributes read aloud or hovered."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skipping: list[bool] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        classes = set((values.get("class") or "").split())
        skip = tag in SKIPPED_TAGS or bool(classes & SKIPPED_CLASSES)
        if not any(self._skipping):
            self.parts += [v for k, v in attrs if k in READ_ATTRIBUTES and v]
        if tag not in VOID:
            self._skipping.append(skip)

    def handle_endtag(self, tag):
        if tag not in VOID and self._skipping:
            self._skipping.pop()

    def handle_data(self, data):
        if not any(self._skipping) and data.strip():
            self.parts.append(data.strip())


def english_sentences(html: str, *, data: tuple[str, ...] = ()) -> list[str]:
    """Runs of English words left in `html`; `data` is stored text the test put there."""
    reader = _Text()
    reader.feed(html)
    text = "\n".join(reader.parts)
    for value in data:
        text = text.replace(value, " ")
    return SENTENCE.findall(text)


@pytest.fixture
def commander(client, make_user):
    client.force_login(make_user("cara", roles.COMMANDER))
    return client


@pytest.fixture
def incident():
    incident = IncidentFactory(
        title="VLLMHighTTFT", triggered_at=timezone.now() - timedelta(minutes=7)
    )
    AlertFactory(incident=incident, annotations={}, labels={"alertname": "VLLMHighTTFT"})
    TimelineEventFactory(incident=incident, kind="note", message="kv")
    incident.alert_count, incident.firing_count = 1, 1
    incident.save()
    return incident


def _page(client, url: str, **extra) -> str:
    response = client.get(url, **ZH, **extra)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_the_incident_list_is_chinese(commander, incident):
    page = _page(commander, reverse("incidents:list"))
    assert "事件" in page
    assert english_sentences(page) == []
    table = _page(commander, reverse("incidents:list"), **HTMX)
    assert "分钟前" in table  # "7m ago", by the relative-time filter
    assert english_sentences(table) == []


def test_the_incident_page_and_its_live_parts_are_chinese(commander, incident):
    # The default silence comment goes to Alertmanager as written: data, not UI.
    comment = f"#{incident.pk} VLLMHighTTFT - silenced from the console by cara"
    page = _page(commander, reverse("incidents:detail", args=[incident.pk]))
    assert "认领" in page
    assert "时间线" in page
    assert english_sentences(page, data=(comment,)) == []
    for name in ("header", "alerts", "timeline"):
        part = _page(commander, reverse(f"incidents:{name}", args=[incident.pk]), **HTMX)
        assert english_sentences(part) == [], name


def test_the_silence_form_and_list_are_chinese(commander, incident):
    # Nothing listens at ALERTMANAGER_URL in tests: the list says so, the form refuses.
    listing = _page(commander, reverse("incidents:silences", args=[incident.pk]))
    assert "ALERTMANAGER_URL" in listing
    assert english_sentences(listing) == []
    refused = commander.post(
        reverse("incidents:silence-create", args=[incident.pk]),
        {"scope": "group", "duration": "9999m", "comment": "x"},
        **ZH,
        **HTMX,
    )
    assert refused.status_code == 409
    form = refused.content.decode()
    assert "静默时长" in form
    comment = f"#{incident.pk} VLLMHighTTFT - silenced from the console by cara"
    assert english_sentences(form, data=(comment,)) == []


def test_the_receipt_pages_are_chinese(commander):
    receipt = WebhookReceipt.objects.create(
        received_at=timezone.now(),
        outcome=ReceiptOutcome.REJECTED,
        http_status=400,
        error="bad",
        error_field="alerts",
        body="{}",
        body_bytes=2,
    )
    listing = _page(commander, reverse("incidents:receipts"))
    assert "Webhook 回执" in listing
    assert english_sentences(listing) == []
    detail = _page(commander, reverse("incidents:receipt-detail", args=[receipt.pk]))
    assert "重放" in detail
    assert english_sentences(detail) == []


def test_the_login_page_is_chinese(client):
    page = _page(client, reverse("login"))
    assert "登录" in page
    assert english_sentences(page) == []


def test_a_refusal_is_chinese_on_the_page_and_english_in_the_api(commander, incident):
    incident.status = "mitigated"
    incident.save()
    flash = commander.post(
        reverse("incidents:acknowledge", args=[incident.pk]), **ZH, **HTMX
    ).content.decode()
    assert "事件" in flash
    assert english_sentences(flash) == []
    api = commander.post(
        reverse("incidents_api:incident-acknowledge", args=[incident.pk]),
        content_type="application/json",
        **ZH,
    )
    assert api.status_code == 409
    assert api.json()["detail"].startswith(f"Incident #{incident.pk} ")
