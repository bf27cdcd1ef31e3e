"""What the zh-Hans walk found on the incident pages (items B1, B2, B3, F3): a silence's
default comment, the timeline's sources, the receipt labels and the receipts' empty
state read in Chinese; Alertmanager still gets the comment in English."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from console import roles
from incidents.models import ReceiptOutcome, WebhookReceipt
from incidents.silences import services
from incidents.silences.comments import comment_shown, default_comment
from tests.english_words import english_words
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory
from tests.unit.incidents.alertmanager_fake import FakeAlertmanager

pytestmark = pytest.mark.django_db
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
TITLE = "VLLMHighTTFT p99"


@pytest.fixture
def am(settings):
    fake = FakeAlertmanager()
    settings.ALERTMANAGER_URL = fake.url
    yield fake
    fake.close()


@pytest.fixture
def cara(client, make_user):
    user = make_user("cara", roles.COMMANDER)
    client.force_login(user)
    return user


def _text(html: str) -> str:
    """The page's words outside code (the walker skips code too)."""
    html = re.sub(r"<(script|style|code)\b.*?</\1>", " ", html, flags=re.S)
    attributes = " ".join(re.findall(r'(?:placeholder|title)="([^"]*)"', html))
    return re.sub(r"<[^>]+>", " ", html) + " " + attributes


def test_the_default_comment_goes_to_alertmanager_in_english_and_reads_in_chinese(client, cara, am):
    incident = IncidentFactory(title=TITLE)
    AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", "namespace": "llm"})
    services.incident_silence_create(incident_id=incident.pk, actor=cara)
    (sent,) = am.silences.values()
    english = f"#{incident.pk} {TITLE} - silenced from the console by cara"
    assert sent["comment"] == english == default_comment(incident, cara)

    with translation.override("zh-hans"):
        shown = comment_shown(english)
        assert comment_shown("people's own words") == "people's own words"
    assert shown == f"#{incident.pk} {TITLE} - 由 cara 在控制台静默"

    listing = client.get(reverse("incidents:silences", args=[incident.pk]), **ZH)
    assert shown in listing.content.decode()
    assert "silenced from the console" not in listing.content.decode()
    page = client.get(reverse("incidents:detail", args=[incident.pk]), **ZH).content.decode()
    assert f'placeholder="{shown}"' in page
    assert "silenced from the console" not in page


def test_the_timeline_says_who_wrote_an_entry_in_the_readers_words(client, cara):
    incident = IncidentFactory(title=TITLE)
    for source in ("system", "pager", "auto-triage", "alertmanager", "worker", "mystery"):
        TimelineEventFactory(incident=incident, kind="note", message="x", source=source)
    part = client.get(reverse("incidents:timeline", args=[incident.pk]), **ZH).content.decode()
    whos = re.findall(r'data-source="([^"]+)">(.*?)</span>', part)
    shown = dict(whos)
    assert shown["system"] == "系统"
    assert shown["pager"] == "值班呼叫"
    assert shown["auto-triage"] == "自动排查"
    assert shown["alertmanager"] == "Alertmanager"
    assert shown["mystery"] == "<code>mystery</code>"  # an unknown source is an id
    assert not english_words(_text(" ".join(shown.values())))


def test_the_receipt_pages_have_no_english_label(client, cara):
    listing = client.get(reverse("incidents:receipts"), **ZH).content.decode()
    assert "接收器" in listing
    assert "receiver" not in _text(listing)
    receipt = WebhookReceipt.objects.create(
        received_at=timezone.now(),
        outcome=ReceiptOutcome.REJECTED,
        http_status=400,
        error="bad",
        body="{}",
        body_bytes=2,
    )
    detail = client.get(reverse("incidents:receipt-detail", args=[receipt.pk]), **ZH)
    text = detail.content.decode()
    assert "<dt>用户代理</dt>" in text
    assert "User agent" not in text
