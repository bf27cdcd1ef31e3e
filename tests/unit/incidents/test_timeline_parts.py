"""Every timeline line incidents and runbooks write is stored as parts (payload["msg"])
and reads in Chinese for a Chinese reader: driven through the services that write them,
rendered in zh-hans, with no English left but names."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from console.texts import msg, render
from incidents import services
from incidents.alertmanager_view import services as am_view
from incidents.models import Incident, TimelineEvent
from incidents.related import services as related
from incidents.silences import client as am_client
from incidents.silences import services as silences
from incidents.silences.client import Silence
from incidents.timeline_text import timeline_text
from runbooks import services as runbook_services
from runbooks.auto_triage import evaluation
from tests.english_words import english_words
from tests.factories import AlertFactory, IncidentFactory
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db

# Names the data puts in the lines (alert names, runbooks, users, namespaces).
NAMES = (
    "VLLMHighTTFT", "ttft-spike", "nccl-hang", "rita", "carl", "cora", "llm-prod", "vllm-chat",
    "Alertmanager", "Prometheus",
    "above", "on",  # the alert's summary, in the title (tests/payloads.py)
)  # fmt: skip


def zh(event: TimelineEvent) -> str:
    """The line as a Chinese reader sees it; it must have parts."""
    assert event.payload.get("msg"), f"{event.kind}: {event.message!r} has no parts"
    return render(event.payload["msg"], language="zh-hans")


def assert_chinese(event: TimelineEvent, *allowed: str) -> None:
    text = zh(event)
    assert not english_words(text, (*NAMES, *allowed)), (event.kind, text)


def ingest(post_webhook, **kw) -> Incident:
    r = post_webhook(notification([alert(**kw)]))
    assert r.status_code == 200, r.content
    return Incident.objects.get(pk=r.json()["incidents"][0])


def test_ingest_and_people_write_parts_that_read_in_chinese(post_webhook, make_user):
    rita = make_user("rita", roles.RESPONDER)
    carl = make_user("carl", roles.COMMANDER)
    incident = ingest(post_webhook)
    # Firing: a person mitigates with a reason, confirming the firing alert.
    services.incident_acknowledge(incident_id=incident.pk, actor=rita)
    services.incident_mitigate(
        incident_id=incident.pk, actor=rita, reason="scaled vllm-chat", confirm=True
    )
    services.incident_resolve(incident_id=incident.pk, actor=carl, reason="over", confirm=True)
    services.incident_reopen(incident_id=incident.pk, actor=carl, reason="back")
    services.incident_commander_set(incident_id=incident.pk, actor=carl, commander_id=carl.pk)
    # Alertmanager resolves (mitigated by the ingestion), fires again (re-triggered).
    post_webhook(notification([alert(status="resolved")]))
    post_webhook(notification([alert()]))
    events = list(incident.events.order_by("id"))
    kinds = {e.kind for e in events}
    assert {"incident_opened", "alert_fired", "alert_resolved", "status_changed"} <= kinds
    assert "commander_changed" in kinds
    for event in events:
        assert_chinese(event, "scaled", "over", "back")
    lines = [zh(e) for e in events]
    assert any("scaled vllm-chat" in line for line in lines)  # the reason as typed


def test_ingestion_reasons_and_severity_are_parts(post_webhook):
    incident = ingest(post_webhook, severity="warning")
    post_webhook(notification([alert(severity="critical", alertname="VLLMHighTTFT", pod="p2")]))
    raised = incident.events.filter(kind="severity_changed")
    for event in raised:
        assert_chinese(event)


def test_runbook_change_step_and_declare_are_parts(post_webhook, make_user):
    cora = make_user("cora", roles.COMMANDER)
    incident = ingest(post_webhook)
    runbook_services.runbook_change(incident_id=incident.pk, actor=cora, slug="nccl-hang")
    services.incident_runbook_set(incident_id=incident.pk, actor=cora, slug="", reason="wrong")
    runbook_services.runbook_step_check(incident_id=incident.pk, actor=cora, step="root_cause")
    for event in incident.events.filter(kind__in=("runbook_changed", "runbook_step")):
        assert_chinese(event, "wrong")
    declared = services.incident_declare(actor=cora, title="Slow chat", severity="SEV2")
    (opened,) = declared.events.filter(kind="incident_opened")
    assert_chinese(opened, "Slow", "chat")


def test_related_link_merge_unlink_are_parts(make_user):
    rita = make_user("rita", roles.RESPONDER)
    now = timezone.now()
    lead = IncidentFactory(severity="SEV1", runbook="ttft-spike", triggered_at=now)
    other = IncidentFactory(severity="SEV3", runbook="", triggered_at=now)
    related._attach(other, lead, now, related.rules.compare(other, lead).why)
    AlertFactory(incident=other)
    related.incident_related_merge(incident_id=other.pk, actor=rita)
    third = IncidentFactory(severity="SEV2", related_to=lead, triggered_at=now)
    related.incident_related_unlink(incident_id=third.pk, actor=rita)
    events = TimelineEvent.objects.filter(incident__in=[lead, other, third])
    assert {"incident_linked", "incident_merged", "incident_unlinked"} <= {e.kind for e in events}
    for event in events:
        assert_chinese(event)


def test_silence_created_and_expired_are_parts(monkeypatch):
    a = AlertFactory(labels={"alertname": "VLLMHighTTFT", "namespace": "llm-prod"})
    now = timezone.now()
    made = Silence(
        id="0b4d3c2a-1111-4222-8333-444455556666", state="active", matchers=(),
        starts_at=now, ends_at=now + timedelta(minutes=90), created_by="cora", comment="c",
    )  # fmt: skip
    monkeypatch.setattr(am_client, "silence_post", lambda **kw: made.id)
    monkeypatch.setattr(silences.scope_of, "other_incidents_covered", lambda *a, **k: ([], 0))
    entry, _ = silences._created_entry(
        made, scope="alert", scope_words=msg("incidents.silence.scope.alert", name="VLLMHighTTFT"),
        alert_id=a.pk, duration_minutes=90,
    )  # fmt: skip
    assert not english_words(render(entry.stored, language="zh-hans"), NAMES)
    confirmed = silences._confirmed(
        "cora", [silences.scope_of.NOT_CREATED_HERE, "broader_than_incident"]
    )
    assert not english_words(render(confirmed.stored, language="zh-hans"), NAMES)
    group = msg(
        "incidents.silence.scope.part", scope=msg("incidents.silence.scope.group"), n=1, total=2
    )
    assert not english_words(render(group.stored, language="zh-hans"), NAMES)


def test_alertmanager_view_lines_are_parts():
    alerts = [SimpleNamespace(alertname=f"A{i}") for i in range(8)]
    for line in (
        am_view._ended_text("resolved", alerts),
        am_view._ended_text("unlisted", alerts[:1]),
        msg("incidents.am.again", what=am_view._what(alerts[:2])),
    ):
        text = render(line.stored, language="zh-hans")
        assert not english_words(text, NAMES), text


def test_receipt_replay_and_auto_triage_down_are_parts():
    replay = msg("incidents.receipt.replayed", receipt=3, replay=4)
    assert replay.english == "Webhook body #3 replayed (receipt #4)."
    assert not english_words(render(replay.stored, language="zh-hans"))
    result = SimpleNamespace(runbook_slug="ttft-spike", prometheus_error="x")
    message, _ = evaluation._entry(result, [])
    assert "could not ask Prometheus" in message.english
    # "spike": english_words does not split "（ttft-spike）" off the Chinese around it.
    assert not english_words(render(message.stored, language="zh-hans"), (*NAMES, "spike"))


def test_old_rows_without_parts_still_read_as_before():
    from django.utils import translation

    with translation.override("zh-hans"):
        assert timeline_text("status_changed", "Incident mitigated.", {"verb": "mitigated"}) == (
            "事件已止损。"
        )
        assert timeline_text("note", "typed by hand", {}) == "typed by hand"


def test_the_timeline_api_answers_in_the_request_language(post_webhook, make_user):
    incident = ingest(post_webhook)
    client = APIClient()
    user = make_user("vic", roles.VIEWER)
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    url = f"/api/v1/incidents/{incident.pk}/timeline/"
    english = client.get(url).json()["results"]
    chinese = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").json()["results"]
    assert [e["message"] for e in english] == [
        e.message for e in incident.events.order_by("occurred_at", "id")
    ] or english
    for row in chinese:
        assert row["message_i18n"], row
        assert row["message_i18n"][0]["id"].startswith("incidents.")
        assert not english_words(row["message"], NAMES), row["message"]
    opened = next(e for e in english if e["kind"] == "incident_opened")
    assert opened["message"].startswith("Incident opened: ")
