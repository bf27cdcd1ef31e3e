"""Hostile webhook bodies: each one that can never succeed gets a 4xx naming the problem
(Alertmanager retries 5xx forever), and its receipt is kept, raw bytes included."""

import json

import pytest
from django.urls import reverse

from incidents.models import Alert, Incident, ReceiptOutcome, WebhookReceipt
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db


def refused(r, *words: str) -> WebhookReceipt:
    """A 400 whose message names the problem, with the body kept as a dead letter."""
    assert r.status_code == 400, r.content[:300]
    data = r.json()
    for word in words:
        assert word in data["error"], data
    receipt = WebhookReceipt.objects.get(pk=data["receipt"])
    assert receipt.outcome == ReceiptOutcome.REJECTED
    assert receipt.http_status == 400
    assert not Incident.objects.exists()
    return receipt


def with_alert(**fields) -> dict:
    a = alert()
    a.update(fields)
    return notification([a])


def test_deeply_nested_json_is_refused(post_webhook):
    depth = 100_000
    raw = b'{"alerts": [], "x": ' + b"[" * depth + b"]" * depth + b"}"
    receipt = refused(post_webhook(None, raw=raw), "nested")
    assert receipt.body_bytes == len(raw)


def test_a_number_with_thousands_of_digits_is_refused(post_webhook):
    raw = b'{"alerts": [], "truncatedAlerts": ' + b"9" * 5000 + b"}"
    refused(post_webhook(None, raw=raw), "5000 digits")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(post_webhook, token):
    raw = ('{"alerts": [], "x": ' + token + "}").encode()
    refused(post_webhook(None, raw=raw), token)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("startsAt", "0001-01-01T00:00:00+01:00"),  # shifting to UTC leaves year 1
        ("startsAt", "9999-12-31T23:59:59-01:00"),  # ... or year 9999
        ("startsAt", "0001-01-01T00:00:00Z"),  # Go's zero time is no start
        ("startsAt", "9999-12-31T23:59:59Z"),  # shown in a zone east of UTC: overflow
        ("endsAt", "9999-12-31T23:59:59-01:00"),
    ],
)
def test_timestamps_outside_the_supported_range_are_refused(post_webhook, field, value):
    r = post_webhook(with_alert(**{field: value}))
    receipt = refused(r, f"alerts[0].{field}", "range")
    assert receipt.error_field == f"alerts[0].{field}"


@pytest.mark.parametrize("zero", ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00"])
def test_go_zero_end_time_in_any_zone_means_no_end(post_webhook, zero):
    assert post_webhook(with_alert(endsAt=zero)).status_code == 200
    assert Alert.objects.get().ends_at is None


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_extreme_but_valid_times_are_stored_and_every_page_shows_them(
    post_webhook, client, make_user, settings, zone
):
    settings.TIME_ZONE = zone  # +14h and -11h: where year 9999 and year 1 overflow
    a = alert()
    a["startsAt"] = "1970-01-01T00:00:00Z"
    late = alert(pod="p-late")
    late.update(startsAt="9998-12-31T23:59:59.999999999+00:00", endsAt="9998-12-31T23:59:59Z")
    late["status"] = "resolved"
    r = post_webhook(notification([a, late]))
    assert r.status_code == 200, r.content
    incident = Incident.objects.get()
    client.force_login(make_user("cmd", role="commander"))
    for url in (
        reverse("incidents:detail", args=[incident.pk]),
        reverse("incidents:receipt-detail", args=[r.json()["receipt"]]),
        reverse("incidents:receipts"),
        reverse("incidents:alerts", args=[incident.pk]),
        reverse("incidents:timeline", args=[incident.pk]),
        reverse("incidents:list"),
        reverse("incidents_api:incident-list"),
        reverse("incidents_api:incident-detail", args=[incident.pk]),
        reverse("incidents_api:incident-timeline", args=[incident.pk]),
    ):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize(
    ("escaped", "shown"),
    [("\\u0000", "NUL character"), ("\\ud800", "lone surrogate")],
)
@pytest.mark.parametrize("where", ["value", "key", "ignored"])
def test_strings_postgresql_cannot_store_are_refused_by_name(post_webhook, escaped, shown, where):
    body = json.dumps(notification([alert()]))
    if where == "value":
        body = body.replace('"pod": "vllm-chat-0"', f'"pod": "vllm{escaped}-0"')
        path = "alerts[0].labels.pod"
    elif where == "key":
        body = body.replace('"pod": "vllm-chat-0"', f'"po{escaped}d": "x"')
        path = "alerts[0].labels"
    else:
        body = body[:-1] + f', "extra": {{"note": "a{escaped}"}}}}'
        path = "extra.note"
    receipt = refused(post_webhook(None, raw=body.encode()), shown, path)
    assert receipt.body == body  # still text: the escape is plain ASCII


def test_a_raw_nul_byte_is_refused_and_the_exact_bytes_are_kept(post_webhook):
    raw = json.dumps(notification([alert()])).encode().replace(b'"pod"', b'"p\x00od"')
    receipt = refused(post_webhook(None, raw=raw), f"NUL character at byte {raw.index(0)}")
    assert bytes(receipt.body_raw) == raw


def test_a_body_that_is_not_utf8_is_refused_and_the_exact_bytes_are_kept(post_webhook):
    raw = b'{"alerts": [], "receiver": "caf\xe9"}'
    receipt = refused(post_webhook(None, raw=raw), "not UTF-8", "byte 31")
    assert bytes(receipt.body_raw) == raw
    assert receipt.body_bytes == len(raw)


def test_utf16_json_is_refused_as_not_utf8(post_webhook):
    raw = json.dumps(notification([alert()])).encode("utf-16")
    refused(post_webhook(None, raw=raw), "not UTF-8")


def test_receipt_page_shows_binary_bodies_escaped_with_a_download(post_webhook, client, make_user):
    raw = b'{"alerts": [], "x": "<script>\xff\x00</script>"}'
    receipt = refused(post_webhook(None, raw=raw))
    client.force_login(make_user("cmd", role="commander"))
    page = client.get(reverse("incidents:receipt-detail", args=[receipt.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "<script>" not in html.split("<main", 1)[-1]
    assert "\\xff\\x00" in html
    download = reverse("incidents:receipt-body", args=[receipt.pk])
    assert download in html
    got = client.get(download)
    assert got.status_code == 200
    assert got["Content-Type"] == "application/octet-stream"
    assert "attachment" in got["Content-Disposition"]
    assert b"".join(got.streaming_content if got.streaming else [got.content]) == raw


def test_text_bodies_download_as_they_were_received(post_webhook, client, make_user):
    raw = b'{"alerts": [1]}'
    receipt = refused(post_webhook(None, raw=raw))
    download = reverse("incidents:receipt-body", args=[receipt.pk])
    client.force_login(make_user("responder"))
    assert client.get(download).status_code == 403  # receipts are for commanders
    client.force_login(make_user("cmd", role="commander"))
    assert client.get(download).content == raw


def test_replaying_a_binary_dead_letter_refuses_it_again(post_webhook):
    from incidents.services import webhook_receipt_replay

    raw = b'{"alerts": [], "receiver": "\xff"}'
    original = refused(post_webhook(None, raw=raw))
    replay = webhook_receipt_replay(receipt_id=original.pk)
    assert replay.outcome == ReceiptOutcome.REJECTED
    assert "not UTF-8" in replay.error
    assert bytes(replay.body_raw) == raw
