"""Which timeline events become notifications, read from the events themselves after the
writer's transaction commits: the webhook opening and escalating an incident, a person
changing commander, mitigating or resolving, an action run waiting for approval, a
postmortem sent for review."""

import pytest
from django.db import transaction
from django.utils import timezone

from actions import services as action_services
from actions.audit import run_record
from actions.models import ActionRun, ActionRunStatus
from incidents import services as incident_services
from incidents.models import Incident, TimelineEvent
from notifications.events import notice_for
from notifications.models import Delivery, DeliveryStatus, Event
from postmortems import services as postmortem_services
from tests.factories import IncidentFactory
from tests.payloads import alert, notification, resolved

pytestmark = pytest.mark.django_db


@pytest.fixture
def notify_all(webhook_target, make_rule, queued):
    """One rule sending every event to the local webhook target; `queued` lists what
    reached the (fake) broker."""
    make_rule(webhook_target)
    return queued


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run the block and then its on-commit callbacks, as a real commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def events_sent() -> list[str]:
    return list(Delivery.objects.order_by("id").values_list("event", flat=True))


def test_the_webhook_opening_an_incident_queues_a_notification_after_commit(
    post_webhook, notify_all, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert post_webhook(notification([alert(severity="error")])).status_code == 200
    assert not Delivery.objects.exists()  # nothing before the commit
    for callback in callbacks:
        callback()
    (delivery,) = Delivery.objects.all()
    incident = Incident.objects.get()
    assert (delivery.event, delivery.incident, delivery.status) == (
        Event.INCIDENT_OPENED, incident, DeliveryStatus.QUEUED,
    )  # fmt: skip
    assert notify_all == [delivery.pk]
    assert delivery.summary == f"[SEV2] Incident #{incident.pk} opened: {incident.title}"
    body = delivery.body
    assert body["event"] == "incident_opened"
    assert body["incident"]["id"] == incident.pk
    assert body["incident"]["namespace"] == "llm-serving"
    assert body["url"].endswith(f"/incidents/{incident.pk}/")


def test_a_rolled_back_write_notifies_nobody(notify_all, committed):
    incident = IncidentFactory()

    def write_then_fail() -> None:
        with transaction.atomic():
            TimelineEvent.objects.create(
                incident=incident, kind="incident_opened", occurred_at=timezone.now()
            )
            raise RuntimeError("rolled back")

    with committed(), pytest.raises(RuntimeError):
        write_then_fail()
    assert not Delivery.objects.exists()


def test_escalation_then_auto_mitigation_from_alertmanager(post_webhook, notify_all, committed):
    with committed():
        post_webhook(notification([alert(severity="warning")]))
        post_webhook(
            notification([alert(severity="warning"), alert(pod="p2", severity="critical")])
        )
        # Repeats and alerts firing are not news.
        post_webhook(
            notification([alert(severity="warning"), alert(pod="p2", severity="critical")])
        )
        post_webhook(notification([resolved(alert(severity="warning")),
                                   resolved(alert(pod="p2", severity="critical"))]))  # fmt: skip
    assert events_sent() == ["incident_opened", "severity_raised", "incident_mitigated"]
    raised = Delivery.objects.get(event=Event.SEVERITY_RAISED)
    assert raised.body["details"] == {"from": "SEV3", "to": "SEV1"}
    assert "severity raised SEV3 → SEV1" in raised.summary


def test_commander_resolve_and_reopen_by_people(notify_all, committed, people):
    incident = IncidentFactory(severity="SEV1")
    with committed():
        incident_services.incident_acknowledge(incident_id=incident.pk, actor=people["cara"])
        incident_services.incident_note_add(incident_id=incident.pk, actor=people["cara"], text="x")
        incident_services.incident_commander_set(
            incident_id=incident.pk, actor=people["cara"], commander_id=people["cole"].pk
        )
        incident_services.incident_resolve(incident_id=incident.pk, actor=people["cara"])
        incident_services.incident_reopen(
            incident_id=incident.pk, actor=people["cara"], reason="It came back."
        )
    assert events_sent() == [
        "commander_changed",  # cara acknowledged: she took the free seat
        "commander_changed",
        "incident_resolved",
        "incident_reopened",
    ]
    took, commander, resolved_, reopened = Delivery.objects.order_by("id")
    assert took.body["details"] == {"from": None, "to": "cara"}
    assert commander.body["details"] == {"from": "cara", "to": "cole"}
    assert commander.body["actor"] == "cara"
    assert "is now commanded by cole (was cara)" in commander.summary
    assert resolved_.body["incident"]["commander"] == "cole"
    assert reopened.body["details"] == {"previous_status": "resolved", "reopened_by": "by_hand"}
    assert "reopened by hand" in reopened.summary


def test_an_action_run_awaiting_approval_notifies_once(notify_all, committed, people):
    incident = IncidentFactory(severity="SEV1")
    run = ActionRun.objects.create(
        incident=incident, kind="scale_lws", target="leaderworkerset/llm-serving/vllm-chat",
        params={"replicas_delta": 2}, idempotency_key="k1",
        status=ActionRunStatus.AWAITING_APPROVAL, requested_by=people["rita"],
        requested_at=timezone.now(), requires_approval=True, approval_reason="SEV1 incident",
    )  # fmt: skip
    with committed():
        run_record(run, message="Requested. Needs approval: SEV1 incident", actor=people["rita"])
        run_record(run, message="Still waiting", actor=people["rita"])  # the same run: once
        action_services.action_run_approve(run_id=run.pk, actor=people["cara"])
    (delivery,) = Delivery.objects.all()
    assert delivery.event == Event.APPROVAL_WANTED
    assert delivery.event_key == f"approval:{run.pk}"
    assert delivery.body["details"]["run"] == run.pk
    assert delivery.body["url"].endswith(f"/runbooks/actions/{run.pk}/")
    assert "awaits approval" in delivery.summary


def test_a_postmortem_review_round_notifies_once(notify_all, committed, people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    incident = IncidentFactory(status="resolved", severity="SEV2")
    with committed():
        pm = postmortem_services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])
        postmortem_services.postmortem_request_review(
            postmortem_id=pm.pk, actor=people["rita"], reviewers=["cara", "cole"]
        )
        postmortem_services.postmortem_review(
            postmortem_id=pm.pk, actor=people["cara"], approve=True
        )
        postmortem_services.postmortem_review(
            postmortem_id=pm.pk, actor=people["cole"], approve=False
        )
    assert events_sent() == ["postmortem_in_review"]
    # Back in draft, then a second round: news again.
    with committed():
        postmortem_services.postmortem_request_review(
            postmortem_id=pm.pk, actor=people["rita"], reviewers=["cole"]
        )
    assert events_sent() == ["postmortem_in_review", "postmortem_in_review"]
    delivery = Delivery.objects.order_by("id").last()
    assert delivery.body["details"]["postmortem"] == pm.pk
    assert delivery.body["url"].endswith(f"/postmortems/{pm.pk}/")


@pytest.mark.parametrize(
    ("kind", "payload", "expected"),
    [
        ("incident_opened", {}, "incident_opened"),
        ("status_changed", {"from": "resolved", "to": "triggered"}, "incident_reopened"),
        ("status_changed", {"from": "mitigated", "to": "triggered"}, "incident_reopened"),
        ("status_changed", {"from": "mitigated", "to": "acknowledged"}, "incident_reopened"),
        ("status_changed", {"from": "triggered", "to": "acknowledged"}, None),
        ("status_changed", {"from": "acknowledged", "to": "mitigated"}, "incident_mitigated"),
        ("status_changed", {"from": "mitigated", "to": "resolved"}, "incident_resolved"),
        ("severity_changed", {"from": "SEV3", "to": "SEV2"}, "severity_raised"),
        ("severity_changed", {"from": "SEV1", "to": "SEV3"}, None),
        ("commander_changed", {"from": None, "to": "cole"}, "commander_changed"),
        ("action", {"run": 3, "status": "awaiting_approval"}, "approval_wanted"),
        ("action", {"run": 3, "status": "queued"}, None),
        ("postmortem", {"postmortem": 4}, "postmortem_in_review"),
        ("alert_fired", {"count": 1}, None),
        ("note", {}, None),
    ],
)
def test_what_each_timeline_event_means(kind, payload, expected):
    event = TimelineEvent(
        pk=1, incident_id=1, kind=kind, payload=payload, occurred_at=timezone.now()
    )
    notice = notice_for(event)
    assert (notice.event if notice else None) == expected
