"""Sending: the signed webhook, Slack through apprise and email through Django's mail,
each against a real receiver; retries on a 500, giving up, and what the row records."""

import hashlib
import hmac
import json
import time

import pytest
from apprise.plugins.slack import NotifySlack
from django.core import mail
from django.utils import timezone

from notifications.models import Delivery, DeliveryStatus, Event, Target, TargetKind
from notifications.transports import signature
from tests.unit.notifications.conftest import SECRET, send

pytestmark = pytest.mark.django_db

BODY = {
    "version": 1,
    "event": "incident_opened",
    "event_label": "Incident opened or reopened",
    "id": "timeline:1",
    "occurred_at": "2026-01-01T00:00:00+00:00",
    "summary": "[SEV1] Incident #7 opened: VLLMHighTTFT <!channel> & co",
    "text": "Incident opened: VLLMHighTTFT <!channel> & co",
    "url": "http://console.test/incidents/7/",
    "actor": None,
    "incident": {"id": 7, "severity": "SEV1", "status": "triggered", "namespace": "llm-prod",
                 "runbook": "ttft-spike", "commander": None},
    "details": {"reopened": False},
}  # fmt: skip


def delivery_for(target: Target, **fields) -> Delivery:
    return Delivery.objects.create(
        target=target, event=Event.INCIDENT_OPENED, event_key=fields.pop("key", "timeline:1"),
        summary=BODY["summary"], body=BODY, created_at=timezone.now(), **fields,
    )  # fmt: skip


def test_webhook_gets_the_json_body_signed_over_timestamp_and_body(receiver, webhook_target):
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    (got,) = receiver.received
    assert got.path == "/hook"
    assert json.loads(got.body) == BODY
    assert got.headers["Content-Type"] == "application/json"
    assert got.headers["X-Console-Event"] == "incident_opened"
    assert got.headers["X-Console-Delivery"] == str(delivery.pk)
    timestamp = got.headers["X-Console-Timestamp"]
    assert abs(int(timestamp) - time.time()) < 60
    # What a receiver does (README): HMAC-SHA256 of "<timestamp>.<raw body>".
    expected = hmac.new(SECRET.encode(), f"{timestamp}.".encode() + got.body, hashlib.sha256)
    assert got.headers["X-Console-Signature"] == "sha256=" + expected.hexdigest()
    # A replay under a fresh timestamp does not verify.
    assert (
        signature(SECRET, str(int(timestamp) + 600), got.body) != got.headers["X-Console-Signature"]
    )
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == (DeliveryStatus.SENT, 1, "")
    assert delivery.sent_at is not None


def test_a_500_is_retried_then_succeeds(receiver, webhook_target):
    receiver.answer(500, 503)
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    assert len(receiver.received) == 3
    # Every attempt is the same message (the receiver can deduplicate by its id).
    assert len({r.body for r in receiver.received}) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == (DeliveryStatus.SENT, 3, "")


def test_retries_are_bounded_and_the_last_error_says_why(receiver, webhook_target, settings):
    receiver.answer(*[500] * 20)
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    attempts = settings.NOTIFY_MAX_RETRIES + 1
    assert len(receiver.received) == attempts
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == attempts
    assert "answered HTTP 500" in delivery.last_error
    assert "receiver says no" not in delivery.last_error  # the answer's body is not shown
    assert f"Gave up after {attempts} attempts" in delivery.last_error


def test_a_4xx_is_not_retried(receiver, webhook_target):
    receiver.answer(403)
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    assert len(receiver.received) == 1
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert "answered HTTP 403" in delivery.last_error
    assert "current secret" in delivery.last_error


def test_an_unreachable_target_is_named_in_the_error(webhook_target, receiver):
    receiver.close()  # nothing listens there any more
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert f"Could not reach http://127.0.0.1:{receiver.server.server_port}/hook" in (
        delivery.last_error
    )
    assert "refused" in delivery.last_error.lower()


def test_a_sent_delivery_is_not_sent_twice(receiver, webhook_target):
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    send(delivery.pk)  # a redelivered message
    assert len(receiver.received) == 1


def test_a_disabled_target_sends_nothing(receiver, webhook_target):
    delivery = delivery_for(webhook_target)
    Target.objects.filter(pk=webhook_target.pk).update(enabled=False)
    send(delivery.pk)
    assert receiver.received == []
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert "disabled" in delivery.last_error


@pytest.fixture
def slack_target(receiver, monkeypatch):
    # apprise posts Slack webhooks to hooks.slack.com; here it posts to the local receiver.
    monkeypatch.setattr(NotifySlack, "webhook_url", f"{receiver.url}/services")
    return Target.objects.create(
        name="sre-slack", kind=TargetKind.SLACK,
        url="https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefGHIJKLmnop",
    )  # fmt: skip


def test_slack_through_apprise_with_mentions_escaped(receiver, slack_target):
    receiver.answer(500)
    delivery = delivery_for(slack_target)
    send(delivery.pk)
    assert len(receiver.received) == 2  # the 500 was retried
    got = receiver.received[-1]
    assert got.path == "/services/T0AAAAAAA/B0BBBBBBB/abcdefGHIJKLmnop"
    (attachment,) = json.loads(got.body)["attachments"]
    assert attachment["title"].startswith("[SEV1] Incident #7 opened: VLLMHighTTFT")
    # An alert label must not ping the channel: Slack's control characters are escaped.
    assert "<!channel>" not in got.body.decode()
    assert "&lt;!channel&gt; &amp; co" in attachment["text"]
    assert "&lt;!channel&gt; &amp; co" in attachment["title"]
    assert "Open in the console: http://console.test/incidents/7/" in attachment["text"]
    assert "SEV1 · triggered · llm-prod · runbook ttft-spike" in attachment["text"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SENT, 2)


def test_slack_failure_is_recorded(receiver, slack_target):
    receiver.answer(*[404] * 20)
    delivery = delivery_for(slack_target)
    send(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert "Slack did not take the message" in delivery.last_error
    assert "404" in delivery.last_error


def test_email_goes_through_django_mail(settings):
    settings.DEFAULT_FROM_EMAIL = "console@example.test"
    target = Target.objects.create(
        name="oncall-mail", kind=TargetKind.EMAIL, recipients="a@example.test, b@example.test"
    )
    delivery = delivery_for(target)
    send(delivery.pk)
    (message,) = mail.outbox
    assert message.to == ["a@example.test", "b@example.test"]
    assert message.from_email == "console@example.test"
    assert message.subject == BODY["summary"]
    assert "http://console.test/incidents/7/" in message.body
    assert "SEV1 · triggered · llm-prod" in message.body
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.SENT


def test_email_server_down_is_retried_then_recorded(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1
    target = Target.objects.create(name="m", kind=TargetKind.EMAIL, recipients="a@example.test")
    delivery = delivery_for(target)
    send(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == settings.NOTIFY_MAX_RETRIES + 1
    assert "Could not send mail through 127.0.0.1:9" in delivery.last_error
