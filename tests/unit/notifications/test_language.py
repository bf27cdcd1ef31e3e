"""Each target hears in its own language: the summary and body are worded when the
delivery is recorded, and Slack and email are rendered in the language the body carries,
so a retry says exactly what the first attempt did. The API answers in the request's
language (Accept-Language), English when it names none."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone, translation

from notifications import services
from notifications.events import Notice
from notifications.messages import email_text, slack_text
from notifications.models import Delivery, Event, Target, TargetKind
from tests.factories import IncidentFactory
from tests.unit.notifications.test_pages_api import login

pytestmark = pytest.mark.django_db

# The lead compiles the merged catalogue at the end; until then Chinese cannot render.
CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"
needs_catalogue = pytest.mark.skipif(
    not CATALOGUE.exists(), reason="locale/zh_Hans/LC_MESSAGES/django.mo is not compiled yet"
)


def email_target(name: str, language: str) -> Target:
    return Target.objects.create(
        name=name, kind=TargetKind.EMAIL, recipients=f"{name}@example.test", language=language
    )


def record_opened(*targets: Target, make_rule) -> dict[str, Delivery]:
    make_rule(*targets)
    incident = IncidentFactory(title="TTFT p99 above 2s")
    notice = Notice(
        event=Event.INCIDENT_OPENED,
        key="timeline:1",
        incident_id=incident.pk,
        occurred_at=timezone.now(),
        details={"reopened": False},
    )
    services.deliveries_record(notices=[notice])
    return {d.target.name: d for d in Delivery.objects.select_related("target", "incident")}


def test_a_new_target_speaks_the_consoles_default_language():
    target = Target.objects.create(name="m", kind=TargetKind.EMAIL, recipients="a@example.test")
    assert target.language == settings.LANGUAGE_CODE == "en"
    assert [code for code, _ in Target._meta.get_field("language").choices] == [
        code for code, _ in settings.LANGUAGES
    ]


def test_an_english_target_gets_english_whatever_the_active_language(make_rule):
    with translation.override("zh-hans"):  # e.g. recorded during a Chinese viewer's request
        deliveries = record_opened(email_target("en-mail", "en"), make_rule=make_rule)
    delivery = deliveries["en-mail"]
    incident = delivery.incident
    assert delivery.summary == f"[SEV2] Incident #{incident.pk} opened: TTFT p99 above 2s"
    assert delivery.body["language"] == "en"
    assert delivery.body["event_label"] == "Incident opened"
    text = email_text(delivery.body)
    assert "SEV2 · triggered · llm-serving · runbook ttft-spike · commander nobody" in text
    assert "Event: Incident opened (timeline:1)" in text
    assert slack_text(delivery.body).endswith(f"Open in the console: {delivery.body['url']}")


@needs_catalogue
def test_a_chinese_target_gets_chinese_and_an_english_one_english(make_rule):
    deliveries = record_opened(
        email_target("zh-mail", "zh-hans"), email_target("en-mail", "en"), make_rule=make_rule
    )
    zh, en = deliveries["zh-mail"], deliveries["en-mail"]
    pk = zh.incident_id
    assert zh.summary == f"[SEV2] 事件 #{pk} 已创建：TTFT p99 above 2s"
    assert en.summary == f"[SEV2] Incident #{pk} opened: TTFT p99 above 2s"
    assert zh.body["language"] == "zh-hans"
    assert zh.body["event_label"] == "事件已创建"
    # The stored identifiers and data stay as they are: only the words change.
    assert zh.body["event"] == en.body["event"] == "incident_opened"
    assert zh.body["incident"] == en.body["incident"]
    text = email_text(zh.body)
    assert "指挥官" in text
    assert "事件已创建（timeline:1）" in text
    assert "Incident" not in text.replace("TTFT", "")
    assert "在控制台中打开：" in slack_text(zh.body)


def test_a_body_recorded_before_targets_had_a_language_renders_in_english():
    body = {
        "version": 1, "event": "test", "event_label": "Test notification", "id": "test:1",
        "occurred_at": "2026-01-01T00:00:00+00:00", "summary": "s", "text": "",
        "url": "http://console.test/notifications/", "actor": "ada", "incident": None,
        "details": {},
    }  # fmt: skip
    assert email_text(body).splitlines()[2:] == [
        "By ada", "", "http://console.test/notifications/", "",
        "Event: Test notification (test:1), 2026-01-01T00:00:00+00:00",
    ]  # fmt: skip


def test_the_test_notification_is_worded_in_the_targets_language(people):
    target = email_target("zh-mail", "zh-hans")
    delivery = services.delivery_test(target_id=target.pk, actor=people["ada"])
    assert delivery.body["language"] == "zh-hans"
    if CATALOGUE.exists():
        assert delivery.summary == "来自 vLLM 事件控制台的测试通知"


def test_the_admin_form_edits_the_language(client, people):
    login(client, people, "ada")
    target = email_target("oncall-mail", "en")
    url = reverse("admin:notifications_target_change", args=[target.pk])
    assert 'name="language"' in client.get(url).content.decode()
    response = client.post(
        url,
        {"name": "oncall-mail", "kind": "email", "enabled": "on", "language": "zh-hans",
         "url": "", "secret": "", "recipients": "oncall-mail@example.test"},
    )  # fmt: skip
    assert response.status_code == 302
    target.refresh_from_db()
    assert target.language == "zh-hans"


def test_the_api_words_event_labels_in_the_requests_language(client, people, make_rule):
    record_opened(email_target("zh-mail", "zh-hans"), make_rule=make_rule)
    login(client, people, "ada")
    url = reverse("notifications:api-deliveries")
    (row,) = client.get(url).json()["results"]
    assert row["event_label"] == "Incident opened"
    if CATALOGUE.exists():
        (row,) = client.get(url, headers={"accept-language": "zh-hans"}).json()["results"]
        assert row["event_label"] == "事件已创建"
