"""A delivery's summary is sent in its target's language and stored as parts too: the
deliveries page and the API word it in their reader's language, while what was sent (the
summary column, the body) stays in the target's."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from console.texts import msg, render
from notifications import services
from notifications.events import Notice
from notifications.messages import email_text
from notifications.models import Delivery, Event, Target, TargetKind
from tests.english_words import english_words
from tests.factories import IncidentFactory
from tests.unit.notifications.test_pages_api import login

pytestmark = pytest.mark.django_db
CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"
needs_catalogue = pytest.mark.skipif(
    not CATALOGUE.exists(), reason="locale/zh_Hans/LC_MESSAGES/django.mo is not compiled yet"
)
TITLE = "TTFT p99 above 2s"
ZH = {"accept-language": "zh-hans"}


def target(name: str, language: str) -> Target:
    return Target.objects.create(
        name=name, kind=TargetKind.EMAIL, recipients=f"{name}@example.test", language=language
    )


def record(notice_for, *targets: Target, make_rule) -> dict[str, Delivery]:
    make_rule(*targets)
    incident = IncidentFactory(title=TITLE)
    services.deliveries_record(notices=[notice_for(incident)])
    return {d.target.name: d for d in Delivery.objects.select_related("target")}


def overdue(incident) -> Notice:
    return Notice(
        event=Event.ACTION_ITEM_OVERDUE,
        key="overdue:1:2026-01-01",
        incident_id=incident.pk,
        occurred_at=timezone.now(),
        details={"action_item": 1, "title": "Alert on KV cache", "days_overdue": 3,
                 "owner": None},
    )  # fmt: skip


def opened(incident) -> Notice:
    return Notice(
        event=Event.INCIDENT_OPENED, key="timeline:1", incident_id=incident.pk,
        occurred_at=timezone.now(), details={"reopened": False},
        text="nobody", text_msg=msg("notifications.nobody").stored,
    )  # fmt: skip


def test_the_summary_is_stored_as_parts_beside_what_was_sent(make_rule):
    deliveries = record(overdue, target("en-mail", "en"), make_rule=make_rule)
    delivery = deliveries["en-mail"]
    sent = "Action item #1 is 3 days overdue: Alert on KV cache (incident #%s, owner nobody)"
    assert delivery.summary == sent % delivery.incident_id
    assert delivery.texts["summary"] == delivery.body["summary_msg"]
    assert delivery.texts["summary"][0][0] == "notifications.summary.action_item_overdue"
    assert render(delivery.texts["summary"], language="en") == delivery.summary


@needs_catalogue
def test_the_page_words_the_summary_in_the_viewers_language(client, people, make_rule):
    deliveries = record(overdue, target("en-mail", "en"), make_rule=make_rule)
    delivery = deliveries["en-mail"]
    zh = render(delivery.texts["summary"], language="zh-hans")
    assert english_words(zh, ["Alert", "on", "KV", "cache"]) == [], zh
    login(client, people, "ada")
    page = client.get(reverse("notifications:list"), headers=ZH).content.decode()
    assert zh in page
    assert delivery.summary not in page
    # What was sent does not change with who reads the page.
    delivery.refresh_from_db()
    assert delivery.summary.startswith("Action item #1 is 3 days overdue")
    english = client.get(reverse("notifications:list"), headers={"accept-language": "en"})
    assert delivery.summary in english.content.decode()


@needs_catalogue
def test_a_chinese_target_is_sent_chinese_and_an_english_reader_reads_english(
    client, people, make_rule
):
    deliveries = record(opened, target("zh-mail", "zh-hans"), make_rule=make_rule)
    delivery = deliveries["zh-mail"]
    pk = delivery.incident_id
    assert delivery.summary == f"[SEV2] 事件 #{pk} 已创建：{TITLE}"
    # The timeline's sentence, stored as parts, is sent in the target's language too.
    assert delivery.body["text_msg"]
    assert delivery.body["text"] != "nobody"
    assert (
        english_words(email_text(delivery.body), [*TITLE.split(), "ttft-spike", "llm-serving"])
        == []
    )
    login(client, people, "ada")
    page = client.get(reverse("notifications:list"), headers={"accept-language": "en"})
    assert f"[SEV2] Incident #{pk} opened: {TITLE}" in page.content.decode()


def test_the_api_renders_the_request_language_and_returns_the_ids(client, people, make_rule):
    deliveries = record(opened, target("zh-mail", "zh-hans"), make_rule=make_rule)
    pk = deliveries["zh-mail"].incident_id
    login(client, people, "ada")
    url = reverse("notifications:api-deliveries")
    (row,) = client.get(url).json()["results"]
    assert row["summary"] == f"[SEV2] Incident #{pk} opened: {TITLE}"
    assert row["summary_i18n"][0]["id"] == "notifications.summary.opened"
    assert row["summary_i18n"][0]["params"]["ref"] == [
        {"id": "notifications.summary.ref", "params": {"severity": "SEV2", "id": pk}}
    ]
    if CATALOGUE.exists():
        (row,) = client.get(url, headers=ZH).json()["results"]
        assert row["summary"] == f"[SEV2] 事件 #{pk} 已创建：{TITLE}"


def test_a_delivery_recorded_before_parts_is_shown_as_stored(client, people, slack_row):
    login(client, people, "ada")
    (row,) = client.get(reverse("notifications:api-deliveries"), headers=ZH).json()["results"]
    assert (row["summary"], row["summary_i18n"]) == ("stored words", None)
    page = client.get(reverse("notifications:list"), headers=ZH).content.decode()
    assert "stored words" in page


@pytest.fixture
def slack_row():
    return Delivery.objects.create(
        target=target("old", "en"), event=Event.TEST, event_key="test:old", summary="stored words",
        body={}, created_at=timezone.now(),
    )  # fmt: skip
