"""Why a delivery failed is stored as parts beside its English (Delivery.texts
["last_error"]) wherever the console words it, and reads Chinese for a Chinese reader;
what a remote server or library said stays a parameter, as it came (issue 28)."""

import pytest
from django.utils import timezone, translation
from kombu.exceptions import OperationalError

from console.outgoing import OutgoingRefused
from console.texts import render
from notifications import services, tasks
from notifications.models import Delivery, DeliveryStatus, Event, Target
from notifications.services.errors import last_error_i18n, last_error_shown, refused
from tests.english_words import english_words
from tests.unit.notifications.conftest import send
from tests.unit.notifications.test_delivery import BODY, delivery_for

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
SUMMARY = {"summary": [["notifications.summary.test", {}]]}


def parts(delivery: Delivery) -> list:
    delivery.refresh_from_db()
    found = (delivery.texts or {}).get("last_error")
    assert found, f"last_error stored without parts: {delivery.last_error!r}"
    return found


def chinese(stored: list, *names: str) -> str:
    text = render(stored, language=ZH)
    assert english_words(text, allowed=names) == [], text
    return text


def test_giving_up_on_a_500_is_stored_as_parts_and_reads_chinese(
    receiver, webhook_target, settings
):
    receiver.answer(*[500] * 20)
    delivery = delivery_for(webhook_target, texts=SUMMARY)
    send(delivery.pk)
    stored = parts(delivery)
    attempts = settings.NOTIFY_MAX_RETRIES + 1
    assert delivery.last_error == (
        f"{webhook_target.destination} answered HTTP 500. Gave up after {attempts} attempts."
    )
    assert render(stored, language="en") == delivery.last_error
    text = chinese(stored, webhook_target.destination)
    assert "HTTP 500" in text
    assert delivery.texts["summary"] == SUMMARY["summary"]  # the summary's parts are kept


def test_a_refused_secret_and_an_unreachable_target_read_chinese(receiver, webhook_target):
    receiver.answer(403)
    delivery = delivery_for(webhook_target)
    send(delivery.pk)
    chinese(parts(delivery), webhook_target.destination)
    receiver.close()
    again = delivery_for(webhook_target, key="timeline:2")
    send(again.pk)
    # The library's own words ("Connection refused") are a parameter, as they came.
    text = render(parts(again), language=ZH)
    assert "Could not reach" not in text
    assert "refused" in text.lower()


def test_a_disabled_target_and_a_dead_worker_read_chinese(receiver, webhook_target):
    delivery = delivery_for(webhook_target)
    Target.objects.filter(pk=webhook_target.pk).update(enabled=False)
    send(delivery.pk)
    chinese(parts(delivery))
    other = delivery_for(webhook_target, key="timeline:2")
    services.delivery_fail(delivery_id=other.pk, error=TimeoutError("time limit"))
    text = render(parts(other), language=ZH)
    assert "TimeoutError('time limit')" in text
    assert "The worker failed" not in text
    # A string from elsewhere is shown as written, and old parts never speak for it.
    services.delivery_fail(delivery_id=other.pk, error="The worker failed: boom")
    other.refresh_from_db()
    assert last_error_shown(other) == "The worker failed: boom"


def test_a_broker_outage_is_stored_as_parts_per_row(
    webhook_target, make_rule, monkeypatch, settings
):
    settings.CELERY_BROKER_URL = "redis://user:secret@redis:6379/0"

    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(tasks.delivery_send_task, "apply_async", broker_down)
    rows = [delivery_for(webhook_target, key=f"timeline:{n}", texts=SUMMARY) for n in (1, 2)]
    assert services.deliveries_enqueue(delivery_ids=[r.pk for r in rows]) == 0
    for row in rows:
        stored = parts(row)
        assert row.texts["summary"] == SUMMARY["summary"]
        assert row.last_error.startswith("Could not queue it for the worker (Error 111")
        assert "secret" not in row.last_error
        # The broker's words; "broker" as the page's own Chinese keeps it (list.html).
        detail = ("Error", "connecting", "to", "Connection", "refused", "broker")
        text = chinese(stored, *detail)
        assert "Error 111 connecting to redis:6379" in text  # the broker's words, as they came


def test_the_guards_refusal_reads_chinese():
    said = refused(OutgoingRefused("The URL names no host."))
    assert said.english == "The URL names no host."
    with translation.override(ZH):
        assert str(said) == translation.gettext("The URL names no host.")
    exc = OutgoingRefused(
        "%(host)s does not resolve (%(error)s); check the host name.",
        params={"host": "hooks.invalid", "error": "Name or service not known"},
    )
    said = refused(exc)
    assert said.english == str(exc)
    with translation.override(ZH):
        assert str(said) == exc.translated()


def test_the_reader_helpers_word_it_and_ignore_parts_of_an_earlier_attempt(webhook_target):
    failed = Delivery.objects.create(
        target=webhook_target, event=Event.TEST, event_key="test:1", summary="s", body=BODY,
        created_at=timezone.now(), status=DeliveryStatus.FAILED,
        last_error="The target was disabled before this could be sent.",
        texts={"last_error": [["notifications.error.target_disabled", {}]]},
    )  # fmt: skip
    with translation.override(ZH):
        assert english_words(last_error_shown(failed)) == []
    assert last_error_i18n(failed) == [{"id": "notifications.error.target_disabled", "params": {}}]
    failed.last_error = ""  # queued again: the column is cleared, the parts may linger
    assert (last_error_shown(failed), last_error_i18n(failed)) == ("", None)
    old = Delivery(last_error="written before parts", texts=None)
    assert (last_error_shown(old), last_error_i18n(old)) == ("written before parts", None)
