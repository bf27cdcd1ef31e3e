"""Notification targets are no way into the console's network (issue 23, finding 2): the
admin refuses an internal or credential-carrying URL when it is saved, a target saved
before (or whose name now points inside) is refused when sent, the receiver's answer is
never echoed to commanders, and every send has an overall deadline."""

import time

import pytest
from apprise.plugins.slack import NotifySlack
from django.core.exceptions import ValidationError
from django.urls import reverse

from notifications import services
from notifications.models import Delivery, DeliveryStatus, Target, TargetKind
from tests.unit.console.outgoing_servers import Dripper, Recorder
from tests.unit.notifications.conftest import SECRET, send

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
        ("http://[::ffff:127.0.0.1]:5432/", "::ffff:127.0.0.1 is an IPv4-mapped IPv6 address"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http://127.0.0.1:6379/", "127.0.0.1 is a loopback address"),
        ("http://10.0.0.7:9093/api/v2/silences", "10.0.0.7 is a private address"),
    ],
)
def test_a_webhook_target_at_an_internal_or_credentialed_url_is_refused(url, says):
    target = Target(name="w", kind=TargetKind.WEBHOOK, url=url, secret=SECRET)
    with pytest.raises(ValidationError) as refused:
        target.full_clean()
    (message,) = refused.value.message_dict["url"]
    assert says in message
    if "address" in says:
        assert "OUTGOING_URL_ALLOWLIST" in message


def test_a_slack_url_with_credentials_is_refused():
    target = Target(
        name="s", kind=TargetKind.SLACK, url="https://u:p@hooks.slack.com/services/T/B/x"
    )
    with pytest.raises(ValidationError, match="user name or password"):
        target.full_clean()


def test_the_allowlist_admits_an_internal_receiver(settings):
    settings.OUTGOING_URL_ALLOWLIST = "10.0.0.0/8"
    Target(
        name="w", kind=TargetKind.WEBHOOK, url="http://10.0.0.7/hook", secret=SECRET
    ).full_clean()


def test_the_admin_refuses_the_metadata_address(client, people):
    client.force_login(people["ada"])
    page = client.post(
        reverse("admin:notifications_target_add"),
        {"name": "w", "kind": "webhook", "url": "http://169.254.169.254/latest/meta-data",
         "secret": SECRET, "language": "en", "recipients": ""},
    )  # fmt: skip
    assert page.status_code == 200  # the form again, not a 5xx
    assert "169.254.169.254 is a link-local address" in page.content.decode()
    assert not Target.objects.exists()


def test_a_test_notification_does_not_show_the_receivers_answer(people, receiver):
    target = Target.objects.create(
        name="ops", kind=TargetKind.WEBHOOK, url=f"{receiver.url}/hook", secret=SECRET
    )
    receiver.answer(*[500] * 20)  # and "receiver says no" as the body
    delivery = services.delivery_test(target_id=target.pk, actor=people["ada"])
    send(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert "answered HTTP 500" in delivery.last_error
    assert "receiver says no" not in delivery.last_error


@pytest.fixture
def internal():
    """A service on loopback that must never hear from a target (nothing allowlisted)."""
    server = Recorder("127.0.0.1")
    server.body = b"+PONG internal secret"
    yield server
    server.close()


def test_a_saved_target_that_reaches_inside_is_refused_when_sent(people, internal):
    # Saved before the guard existed (or written around the admin): no validation ran.
    target = Target.objects.create(
        name="old", kind=TargetKind.WEBHOOK, url=f"{internal.url}/", secret=SECRET
    )
    delivery = services.delivery_test(target_id=target.pk, actor=people["ada"])
    send(delivery.pk)
    delivery.refresh_from_db()
    assert internal.requests == []
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 1  # refused for good, not retried
    assert "127.0.0.1 is a loopback address" in delivery.last_error
    assert "PONG" not in delivery.last_error


def test_slack_through_apprise_is_guarded_too(people, internal, monkeypatch):
    # apprise posts to its own Slack address; point it inside, as a hostile DNS could.
    monkeypatch.setattr(NotifySlack, "webhook_url", f"{internal.url}/services")
    target = Target.objects.create(
        name="slack", kind=TargetKind.SLACK,
        url="https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefGHIJKLmnop",
    )  # fmt: skip
    delivery = services.delivery_test(target_id=target.pk, actor=people["ada"])
    send(delivery.pk)
    delivery.refresh_from_db()
    assert internal.requests == []
    assert delivery.status == DeliveryStatus.FAILED
    assert "127.0.0.1 is a loopback address" in delivery.last_error


@pytest.fixture
def dripper(settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.NOTIFY_TIMEOUT_SECONDS = 1.0
    settings.NOTIFY_MAX_RETRIES = 0
    server = Dripper()
    yield server
    server.close()


def test_a_webhook_that_drips_its_answer_is_cut_at_the_deadline(people, dripper):
    target = Target.objects.create(
        name="slow", kind=TargetKind.WEBHOOK, url=f"{dripper.url}/hook", secret=SECRET
    )
    delivery = services.delivery_test(target_id=target.pk, actor=people["ada"])
    started = time.monotonic()
    send(delivery.pk)
    assert time.monotonic() - started < 10
    delivery = Delivery.objects.get(pk=delivery.pk)
    assert delivery.status == DeliveryStatus.FAILED
    assert "did not answer within 1 s" in delivery.last_error


def test_slack_that_drips_its_answer_is_cut_at_the_deadline(people, dripper, monkeypatch):
    monkeypatch.setattr(NotifySlack, "webhook_url", f"{dripper.url}/services")
    target = Target.objects.create(
        name="slow-slack", kind=TargetKind.SLACK,
        url="https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefGHIJKLmnop",
    )  # fmt: skip
    delivery = services.delivery_test(target_id=target.pk, actor=people["ada"])
    started = time.monotonic()
    send(delivery.pk)
    assert time.monotonic() - started < 10
    delivery = Delivery.objects.get(pk=delivery.pk)
    assert delivery.status == DeliveryStatus.FAILED
    assert "did not answer within 1 s" in delivery.last_error
