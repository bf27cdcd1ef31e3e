"""POST /api/v1/alerts/alertmanager: answers, idempotency, grouping, late resolve, flapping."""

import json
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from incidents import services
from incidents.models import (
    Alert,
    Incident,
    ReceiptOutcome,
    TimelineEvent,
    WebhookReceipt,
)
from tests.payloads import BASE, alert, notification, resolved

pytestmark = pytest.mark.django_db
OTHER_GROUP = '{}/{runbook=~".+"}:{alertname="VLLMEngineStalled", lws="vllm-chat"}'


def snapshot():
    """What a person would see: incidents, alert states, timeline length."""
    return (
        sorted(Incident.objects.values_list("id", "status", "severity", "reopen_count")),
        sorted(Alert.objects.values_list("fingerprint", "status", "ends_at", "incident_id")),
        TimelineEvent.objects.count(),
    )


# --- answers ---------------------------------------------------------------------------
def test_answers_200_with_a_summary(post_webhook):
    r = post_webhook(notification([alert(pod="p0"), alert(pod="p1")]))
    assert r.status_code == 200
    data = r.json()
    incident = Incident.objects.get()
    assert data["received"] == 2
    assert data["incidents"] == [incident.pk]
    assert data["opened"] == [incident.pk]
    assert WebhookReceipt.objects.get(pk=data["receipt"]).outcome == ReceiptOutcome.ACCEPTED


@pytest.mark.parametrize(
    "header",
    [None, "Bearer wrong", "Basic dGVzdDp0ZXN0", "Bearer", "test-alertmanager-token"],
)
def test_bad_or_missing_token_is_401_and_stores_nothing(client, header):
    headers = {"HTTP_AUTHORIZATION": header} if header else {}
    r = client.post(
        "/api/v1/alerts/alertmanager",
        data=json.dumps(notification([alert()])),
        content_type="application/json",
        **headers,
    )
    assert r.status_code == 401
    assert not Incident.objects.exists()
    assert not WebhookReceipt.objects.exists()


def test_token_scheme_is_case_insensitive(post_webhook, client):
    r = client.post(
        "/api/v1/alerts/alertmanager",
        data=json.dumps(notification([alert()])),
        content_type="application/json",
        HTTP_AUTHORIZATION="bearer test-alertmanager-token",
    )
    assert r.status_code == 200


def test_empty_configured_token_refuses_everyone(post_webhook, settings):
    settings.ALERTMANAGER_TOKEN = ""
    assert post_webhook(notification([alert()]), token="").status_code == 401


def test_get_is_not_allowed(client):
    assert client.get("/api/v1/alerts/alertmanager").status_code == 405


def test_oversized_body_is_413(post_webhook, settings):
    settings.WEBHOOK_MAX_BYTES = 2000
    many = notification([alert(pod=f"vllm-chat-{i}") for i in range(20)])
    r = post_webhook(many)
    assert r.status_code == 413
    assert "max_alerts" in r.json()["error"]
    assert not Incident.objects.exists()


def test_malformed_json_is_400_and_kept_as_a_dead_letter(post_webhook):
    r = post_webhook(None, raw=b'{"alerts": [')
    assert r.status_code == 400
    data = r.json()
    assert data["field"] == "body"
    receipt = WebhookReceipt.objects.get(pk=data["receipt"])
    assert receipt.outcome == ReceiptOutcome.REJECTED
    assert receipt.body == '{"alerts": ['
    assert receipt.http_status == 400


def test_bad_field_is_400_naming_it_with_the_body_kept(post_webhook):
    b = notification([alert(), alert(pod="p2")])
    b["alerts"][1]["startsAt"] = "not-a-time"
    r = post_webhook(b)
    assert r.status_code == 400
    assert r.json()["field"] == "alerts[1].startsAt"
    assert "alerts[1].startsAt" in r.json()["error"]
    receipt = WebhookReceipt.objects.get()
    assert receipt.error_field == "alerts[1].startsAt"
    assert json.loads(receipt.body) == b
    assert not Incident.objects.exists()  # nothing half-applied


# --- idempotency and grouping -----------------------------------------------------------
def test_same_payload_twice_changes_nothing(post_webhook):
    body = notification([alert(pod="p0"), alert(pod="p1")])
    post_webhook(body)
    before = snapshot()
    r = post_webhook(body)
    assert r.status_code == 200
    assert r.json()["opened"] == []
    assert snapshot() == before
    assert Alert.objects.filter(receive_count=2).count() == 2


def test_resend_with_new_annotation_value_updates_the_alert_not_the_incident(post_webhook):
    a = alert()
    post_webhook(notification([a]))
    a["annotations"]["description"] = "TTFT p99 is now 12s"
    post_webhook(notification([a]))
    assert Alert.objects.get().annotations["description"] == "TTFT p99 is now 12s"
    assert Incident.objects.count() == 1


def test_alerts_of_one_group_share_an_incident_and_groups_do_not(post_webhook):
    post_webhook(notification([alert(pod="p0")]))
    post_webhook(notification([alert(pod="p1")]))
    post_webhook(
        notification(
            [alert(alertname="VLLMEngineStalled", runbook="nccl-hang")],
            group_key=OTHER_GROUP,
            alertname="VLLMEngineStalled",
        )
    )
    assert Incident.objects.count() == 2
    ttft = Incident.objects.get(runbook="ttft-spike")
    assert ttft.alerts.count() == 2
    assert Incident.objects.get(runbook="nccl-hang").alerts.count() == 1


def test_grouping_by_configured_labels(post_webhook, settings):
    settings.INCIDENT_GROUP_BY = ["alertname", "pod"]
    post_webhook(notification([alert(pod="p0"), alert(pod="p1")]))
    assert Incident.objects.count() == 2
    assert set(Incident.objects.values_list("grouping_key", flat=True)) == {
        "labels:alertname=VLLMHighTTFT,pod=p0",
        "labels:alertname=VLLMHighTTFT,pod=p1",
    }


def test_one_open_incident_per_group_is_a_database_constraint():
    now = timezone.now()
    Incident.objects.create(title="a", severity="SEV1", grouping_key="g", triggered_at=now)
    with pytest.raises(IntegrityError), transaction.atomic():
        Incident.objects.create(title="b", severity="SEV1", grouping_key="g", triggered_at=now)
    Incident.objects.filter(grouping_key="g").update(status="resolved", resolved_at=now)
    Incident.objects.create(title="c", severity="SEV1", grouping_key="g", triggered_at=now)


def test_incident_fields_come_from_the_alert(post_webhook):
    post_webhook(notification([alert(severity="warning")]))
    inc = Incident.objects.get()
    assert inc.title == "VLLMHighTTFT: TTFT p99 above 2s on vllm-chat"
    assert inc.severity == "SEV3"
    assert inc.runbook == "ttft-spike"
    assert inc.namespace == "llm-serving"
    assert inc.status == "triggered"
    assert inc.started_at == BASE
    assert inc.group_labels == {"alertname": "VLLMHighTTFT", "lws": "vllm-chat"}
    kinds = list(inc.events.values_list("kind", flat=True))
    assert kinds == ["incident_opened", "alert_fired"]


def test_title_does_not_repeat_the_alert_name(post_webhook):
    a = alert()
    a["annotations"]["summary"] = "VLLMHighTTFT on vllm-chat: p99 9.8s"
    post_webhook(notification([a]))
    assert Incident.objects.get().title == "VLLMHighTTFT on vllm-chat: p99 9.8s"


@pytest.mark.parametrize(
    ("severity", "sev"),
    [("critical", "SEV1"), ("error", "SEV2"), ("warning", "SEV3"), ("info", "SEV4"), ("", "SEV3")],
)
def test_severity_mapping(post_webhook, severity, sev):
    post_webhook(notification([alert(severity=severity)]))
    assert Incident.objects.get().severity == sev


def test_a_more_severe_alert_raises_the_incident_severity(post_webhook):
    post_webhook(notification([alert(pod="p0", severity="warning")]))
    post_webhook(notification([alert(pod="p1", severity="critical")]))
    inc = Incident.objects.get()
    assert inc.severity == "SEV1"
    assert inc.events.filter(kind="severity_changed").count() == 1
    post_webhook(notification([alert(pod="p2", severity="info")]))
    assert Incident.objects.get().severity == "SEV1"  # never lowered automatically


def test_invalid_runbook_label_is_ignored(post_webhook):
    post_webhook(notification([alert(runbook="../../etc/passwd")]))
    assert Incident.objects.get().runbook == ""


# --- resolution, late resolve, flapping -----------------------------------------------
def test_all_alerts_resolved_moves_the_incident_to_mitigated(post_webhook):
    a0, a1 = alert(pod="p0"), alert(pod="p1")
    post_webhook(notification([a0, a1]))
    post_webhook(notification([resolved(a0), a1]))
    inc = Incident.objects.get()
    assert inc.status == "triggered"
    r = post_webhook(notification([resolved(a0), resolved(a1)]))
    assert r.json()["mitigated"] == [inc.pk]
    inc.refresh_from_db()
    assert inc.status == "mitigated"
    assert inc.mitigated_at is not None
    assert inc.resolved_at is None  # a person resolves
    event = inc.events.filter(kind="status_changed").get()
    assert {k: v for k, v in event.payload.items() if k != "msg"} == {
        "from": "triggered",
        "to": "mitigated",
        "verb": "mitigated",
    }
    assert event.source == "alertmanager"


def test_resolved_alert_keeps_its_end_time(post_webhook):
    a = alert()
    post_webhook(notification([a]))
    post_webhook(notification([resolved(a, timedelta(minutes=7))]))
    assert Alert.objects.get().ends_at == BASE + timedelta(minutes=7)


def test_late_resolved_never_opens_an_incident(post_webhook):
    r = post_webhook(notification([resolved(alert())]))
    assert r.status_code == 200
    assert not Incident.objects.exists()
    orphan = Alert.objects.get()
    assert orphan.status == "resolved"
    assert orphan.incident is None


def test_late_resolved_after_a_person_resolved_opens_nothing(post_webhook, make_user):
    commander = make_user("cmd", role="commander")
    a = alert()
    post_webhook(notification([a]))
    inc = Incident.objects.get()
    services.incident_resolve(
        confirm_no_commander=True,
        incident_id=inc.pk,
        actor=commander,
        confirm=True,
        reason="alert lags",
    )
    post_webhook(notification([resolved(a)]))
    assert Incident.objects.count() == 1
    inc.refresh_from_db()
    assert inc.status == "resolved"


def test_resend_of_a_firing_alert_after_a_person_resolved_does_not_reopen(post_webhook, make_user):
    commander = make_user("cmd", role="commander")
    a = alert()
    post_webhook(notification([a]))
    inc = Incident.objects.get()
    services.incident_resolve(
        confirm_no_commander=True,
        incident_id=inc.pk,
        actor=commander,
        confirm=True,
        reason="alert lags",
    )
    post_webhook(notification([a]))  # repeat_interval re-send of the same episode
    inc.refresh_from_db()
    assert inc.status == "resolved"
    assert Incident.objects.count() == 1


def test_firing_again_within_the_flap_window_reopens_the_same_incident(post_webhook, make_user):
    commander = make_user("cmd", role="commander")
    a = alert()
    post_webhook(notification([a]))
    post_webhook(notification([resolved(a)]))
    inc = Incident.objects.get()
    services.incident_resolve(confirm_no_commander=True, incident_id=inc.pk, actor=commander)
    again = alert(starts_at=BASE + timedelta(minutes=20))
    r = post_webhook(notification([again]))
    assert r.json()["reopened"] == [inc.pk]
    inc.refresh_from_db()
    assert Incident.objects.count() == 1
    assert inc.status == "triggered"
    assert inc.reopen_count == 1
    assert inc.resolved_at is None
    assert inc.alerts.count() == 2


def test_firing_again_after_the_flap_window_opens_a_new_incident(post_webhook, make_user, settings):
    commander = make_user("cmd", role="commander")
    a = alert()
    post_webhook(notification([a]))
    first = Incident.objects.get()
    services.incident_resolve(
        confirm_no_commander=True,
        incident_id=first.pk,
        actor=commander,
        confirm=True,
        reason="alert lags",
    )
    Incident.objects.filter(pk=first.pk).update(
        resolved_at=timezone.now() - timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS + 5)
    )
    r = post_webhook(notification([alert(starts_at=BASE + timedelta(hours=2))]))
    assert r.json()["opened"] != [first.pk]
    assert Incident.objects.count() == 2
    first.refresh_from_db()
    assert first.status == "resolved"


def test_mitigated_incident_firing_again_goes_back_to_where_it_was(post_webhook, make_user):
    responder = make_user("r1")
    a = alert()
    post_webhook(notification([a]))
    inc = Incident.objects.get()
    services.incident_acknowledge(incident_id=inc.pk, actor=responder)
    post_webhook(notification([resolved(a)]))
    inc.refresh_from_db()
    assert inc.status == "mitigated"
    post_webhook(notification([alert(starts_at=BASE + timedelta(minutes=3))]))
    inc.refresh_from_db()
    assert inc.status == "acknowledged"
    assert inc.mitigated_at is None


def test_orphan_joins_when_its_group_opens(post_webhook):
    post_webhook(notification([resolved(alert(pod="p0"))]))
    post_webhook(notification([alert(pod="p1")]))
    inc = Incident.objects.get()
    assert inc.alerts.count() == 2


def test_duplicate_alert_inside_one_payload_counts_once(post_webhook):
    # Same facts as a firing delivery followed by a resolved one, so the same result.
    a = alert()
    r = post_webhook(notification([a, resolved(a)]))
    assert r.status_code == 200
    assert Alert.objects.get().status == "resolved"
    assert Incident.objects.get().status == "mitigated"


def test_legacy_and_current_payloads_update_the_same_alert(post_webhook):
    a = alert()
    post_webhook(notification([a], legacy=True))
    post_webhook(notification([resolved(a)], newest=True))
    assert Alert.objects.count() == 1
    assert Incident.objects.get().status == "mitigated"


def test_earlier_episode_of_the_same_alert_is_left_alone(post_webhook, make_user):
    # Same labels (fingerprint), earlier startsAt, inside the new delivery's range.
    commander = make_user("cmd", role="commander")
    first = alert(starts_at=BASE)
    post_webhook(notification([first]))
    post_webhook(notification([resolved(first)]))
    old = Incident.objects.get()
    services.incident_resolve(confirm_no_commander=True, incident_id=old.pk, actor=commander)
    Incident.objects.filter(pk=old.pk).update(resolved_at=timezone.now() - timedelta(days=1))
    later = alert(starts_at=BASE + timedelta(hours=1))
    other = alert(pod="p9", starts_at=BASE - timedelta(minutes=1))
    post_webhook(notification([later, other]))
    new = Incident.objects.exclude(pk=old.pk).get()
    assert set(new.alerts.values_list("starts_at", flat=True)) == {
        BASE + timedelta(hours=1),
        BASE - timedelta(minutes=1),
    }
    assert Alert.objects.get(starts_at=BASE).incident_id == old.pk


def test_orphan_older_than_the_window_is_not_adopted(post_webhook, settings):
    post_webhook(notification([resolved(alert(pod="stale"))]))
    Alert.objects.update(
        last_received_at=timezone.now()
        - timedelta(seconds=settings.INCIDENT_REOPEN_WINDOW_SECONDS + 60)
    )
    post_webhook(notification([alert(pod="fresh")]))
    assert Incident.objects.get().alerts.count() == 1
    assert Alert.objects.get(labels__pod="stale").incident is None


def test_an_alert_routed_to_two_groups_opens_no_empty_incident(post_webhook):
    # Two routes with `continue: true` send the same alert under two groupKeys.
    a = alert()
    post_webhook(notification([a]))
    r = post_webhook(notification([a, alert(pod="p-other")], group_key=OTHER_GROUP))
    assert r.status_code == 200
    assert Incident.objects.count() == 2
    for incident in Incident.objects.all():
        assert incident.alerts.exists(), incident
    post_webhook(notification([a], group_key='{}:{lws="third"}'))
    assert Incident.objects.count() == 2  # nothing new: the alert already has one
