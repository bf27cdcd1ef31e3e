"""Sending a page through each kind of contact method, against local servers speaking the
service's protocol (tests/pager_receivers.py): what arrives, in whose language, and what
never leaks (a token in an address)."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from console.preferences.services import preference_set
from pager.models import ContactKind, DeliveryState, PageStatus
from pager.paging.ack import ack_link, page_for_token
from pager.paging.messages import SMS_MAX, page_text, plain
from pager.paging.services import page_send
from tests.factories import IncidentFactory
from tests.pager_receivers import contact, gotify_url, ntfy_url, page_for

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.pager_receivers"]

K = ContactKind
SECRET = "receiver-signing-key-0123456789"
ACK_LINK = re.compile(r"http://testserver/pager/ack/([^/\s]+)/")


def links_to(page, text: str) -> bool:
    """`text` carries a one-tap link that acknowledges `page` (tokens carry the second
    they were made, so the link is checked, not compared)."""
    found = ACK_LINK.search(text)
    return found is not None and page_for_token(token=found.group(1)) == page


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def incident():
    return IncidentFactory(
        pk=42,
        severity="SEV1",
        title="VLLMHighTTFT: TTFT p99 above 2s",
        namespace="llm-prod",
        group_labels={"alertname": "VLLMHighTTFT", "lws": "vllm-chat"},
    )


def test_a_page_reaches_a_self_hosted_ntfy_topic(alice, incident, ntfy):
    contact(alice, K.NTFY, ntfy_url(ntfy, "alice-pages"))
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [message] = ntfy.messages["alice-pages"]
    assert message["title"] == "[SEV1] Incident #42: VLLMHighTTFT: TTFT p99 above 2s"
    assert "http://testserver/incidents/42/" in message["message"]
    assert links_to(page, message["message"])
    assert message["headers"]["X-Priority"] == "high"  # a page wakes the phone
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED
    assert page.first_sent_at is not None
    [delivery] = page.deliveries.all()
    assert (delivery.state, delivery.attempts, delivery.error) == (DeliveryState.SENT, 1, "")
    event = incident.events.get(kind="page")
    assert event.message == "Paged alice by ntfy."
    assert event.payload["event"] == "delivered"


def test_a_page_reaches_gotify_with_the_application_token(alice, incident, gotify):
    contact(alice, K.GOTIFY, gotify_url(gotify))
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [message] = gotify.messages["AppTok3nForTests"]
    assert message["title"].startswith("[SEV1] Incident #42")
    assert message["priority"] == 8
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED


def test_a_wrong_gotify_token_fails_with_advice_and_without_the_token(alice, incident, gotify):
    contact(alice, K.GOTIFY, gotify_url(gotify, "WrongTok3nAbc"))
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    page.refresh_from_db()
    assert page.status == PageStatus.FAILED
    [delivery] = page.deliveries.all()
    assert delivery.state == DeliveryState.FAILED
    assert f"Gotify (gotify://{gotify.host}) answered HTTP 401" in delivery.error
    assert "token" in delivery.error
    event = incident.events.get(kind="page")
    assert event.message.startswith("Page to alice failed through every method: Gotify:")
    for text in (delivery.error, event.message, str(event.payload)):
        assert "WrongTok3nAbc" not in text


def test_a_webhook_page_is_signed_and_carries_the_incident(alice, incident, webhook):
    contact(alice, K.WEBHOOK, f"{webhook.url}/pages#secret={SECRET}")
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [request] = webhook.requests
    assert request.path == "/pages"  # the fragment (the key) is never sent
    assert SECRET not in request.path
    assert SECRET.encode() not in request.body
    assert webhook.signature_ok(request, SECRET)
    assert not webhook.signature_ok(request, "another-key-0123456789")
    body = request.json()
    assert body["event"] == "page"
    assert request.headers["X-Console-Event"] == "page"
    assert body["incident"]["id"] == 42
    assert body["incident"]["severity"] == "SEV1"
    assert body["recipient"] == "alice"
    assert links_to(page, body["ack_url"])
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED


def test_an_email_page_goes_through_a_real_smtp_server(alice, incident, smtp):
    contact(alice, K.EMAIL, "alice@example.com")
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [mail] = smtp.mails
    assert mail.recipients == ["alice@example.com"]
    assert mail.subject == "[SEV1] Incident #42: VLLMHighTTFT: TTFT p99 above 2s"
    assert links_to(page, mail.text())
    assert "Severity SEV1" in mail.text()
    assert "Namespace: llm-prod" in mail.text()
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED
    assert incident.events.get(kind="page").message == "Paged alice by email."


def test_a_refused_recipient_fails_the_email_method_with_what_to_fix(alice, incident, smtp):
    smtp.refuse_recipients("550 5.1.1 No such user")
    contact(alice, K.EMAIL, "alice@example.com")
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [delivery] = page.deliveries.all()
    assert delivery.state == DeliveryState.FAILED
    assert "refused a…@example.com; check the address" in delivery.error
    assert delivery.attempts == 1  # a refusal is not transient: not tried again


def test_the_page_speaks_the_persons_language(alice, incident, ntfy):
    preference_set(user=alice, language="zh-hans")
    contact(alice, K.NTFY, ntfy_url(ntfy, "alice-zh"))
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [message] = ntfy.messages["alice-zh"]
    with translation.override("zh-hans"):
        status = str(incident.get_status_display())
    assert status != "Triggered"
    assert status in message["message"]
    assert links_to(page, message["message"])


def test_the_sms_text_is_one_segment_with_the_whole_link(alice, incident):
    incident.group_labels = {"alertname": "VLLMHighTTFT" * 8, "lws": "vllm-chat"}
    page = page_for(alice, incident)
    link = ack_link(page)

    short = page_text(page, ack_url=link).short

    assert len(short) <= SMS_MAX
    assert short.startswith("[SEV1] #42 VLLMHighTTFT")
    assert short.endswith(f" - ack: {link}")
    assert short.isascii()


def test_the_short_text_names_the_alert_and_where(alice, incident):
    page = page_for(alice, incident)
    link = ack_link(page)

    short = page_text(page, ack_url=link).short

    assert short == f"[SEV1] #42 VLLMHighTTFT llm-prod/vllm-chat - ack: {link}"


def test_label_text_cannot_mention_a_whole_channel(alice, incident, ntfy):
    incident.title = "<!channel> @here wake everyone @everyone\x07"
    incident.save()
    contact(alice, K.NTFY, ntfy_url(ntfy, "alice-pages"))
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [message] = ntfy.messages["alice-pages"]
    for mention in ("<!channel>", "@here", "@everyone", "\x07"):
        assert mention not in message["title"]
        assert mention not in message["message"]
    assert plain("@channel") == "@\u200bchannel"


def test_a_hosted_service_url_is_shown_by_its_vendor_not_its_token(alice, incident, settings):
    # Telegram's "host" is the bot token. The call fails here (no route to Telegram, or
    # the guard), and neither the error nor the timeline shows the token.
    settings.PAGER_RETRY_BACKOFF_SECONDS = 0
    token = "123456789:ABCdefGhIJKlmnopqrstu-vwxyz12345"
    contact(alice, K.TELEGRAM, f"tgram://{token}/987654")
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    [delivery] = page.deliveries.all()
    assert delivery.state == DeliveryState.FAILED
    assert delivery.error.startswith("Telegram (tgram://telegram.org)")
    event = incident.events.get(kind="page")
    for text in (delivery.error, event.message, str(event.payload)):
        assert token not in text
        assert "ABCdefGhIJ" not in text
