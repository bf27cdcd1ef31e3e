"""Rules pick what goes where: events, severities, namespaces (shell patterns), drills;
a target hears of one event once however many rules match it."""

import pytest
from django.utils import timezone

from incidents.models import TimelineEvent
from notifications import services
from notifications.models import Delivery, Rule, Target, TargetKind
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


def opened(**incident_fields) -> TimelineEvent:
    incident = IncidentFactory(**incident_fields)
    # bulk_create, as ingestion writes: no signal of its own, only what the test sends.
    (event,) = TimelineEvent.objects.bulk_create(
        [TimelineEvent(incident=incident, kind="incident_opened", occurred_at=timezone.now())]
    )
    return event


def targets_told(event: TimelineEvent) -> list[str]:
    services.timeline_events_notify(events=[event])
    return sorted(
        Delivery.objects.filter(event_key=f"timeline:{event.pk}").values_list(
            "target__name", flat=True
        )
    )


@pytest.fixture
def slack():
    return Target.objects.create(
        name="slack", kind=TargetKind.SLACK, url="https://hooks.slack.com/services/T1/B1/x"
    )


@pytest.fixture
def mail():
    return Target.objects.create(name="mail", kind=TargetKind.EMAIL, recipients="a@b.test")


def test_namespace_patterns_severities_and_events(make_rule, slack, mail, queued):
    make_rule(
        slack, name="prod pages", namespaces="llm-prod-*, gateway", severities=["SEV1", "SEV2"]
    )
    make_rule(mail, name="resolutions", events=["incident_resolved"])
    assert targets_told(opened(namespace="llm-prod-eu", severity="SEV1")) == ["slack"]
    assert targets_told(opened(namespace="gateway", severity="SEV2")) == ["slack"]
    assert targets_told(opened(namespace="llm-prod-eu", severity="SEV3")) == []
    assert targets_told(opened(namespace="llm-staging", severity="SEV1")) == []
    assert len(queued) == 2


def test_one_delivery_per_target_however_many_rules_match(make_rule, slack, mail, queued):
    make_rule(slack, mail, name="everything")
    make_rule(slack, name="sev1", severities=["SEV1"])
    event = opened(severity="SEV1")
    assert targets_told(event) == ["mail", "slack"]
    # The same event announced again (a redelivered signal) records nothing new.
    assert targets_told(event) == ["mail", "slack"]
    assert Delivery.objects.count() == 2
    assert len(queued) == 2


def test_disabled_rules_and_targets_and_drills_send_nothing(make_rule, slack, mail, queued):
    make_rule(slack, name="off", enabled=False)
    Target.objects.filter(pk=mail.pk).update(enabled=False)
    make_rule(mail, name="to a disabled target")
    assert targets_told(opened()) == []
    Rule.objects.filter(name="off").update(enabled=True)
    assert targets_told(opened(is_drill=True)) == []
    Rule.objects.filter(name="off").update(include_drills=True)
    assert targets_told(opened(is_drill=True)) == ["slack"]


def test_no_rule_costs_one_query(django_assert_num_queries, slack):
    event = opened()
    with django_assert_num_queries(1):
        services.timeline_events_notify(events=[event])


def test_a_storm_costs_a_fixed_number_of_queries(
    make_rule, slack, mail, queued, django_assert_max_num_queries
):
    make_rule(slack, mail)
    events = [opened(namespace=f"ns-{i}") for i in range(30)]
    with django_assert_max_num_queries(8):
        services.timeline_events_notify(events=events)
    assert Delivery.objects.count() == 60
    assert len(queued) == 60


def test_rule_matching():
    rule = Rule(namespaces="llm-*", severities=["SEV1"], events=["incident_opened"])
    match = {
        "event": "incident_opened",
        "severity": "SEV1",
        "namespace": "llm-a",
        "is_drill": False,
    }
    assert rule.matches(**match)
    assert not rule.matches(**{**match, "event": "incident_resolved"})
    assert not rule.matches(**{**match, "severity": "SEV2"})
    assert not rule.matches(**{**match, "namespace": "other"})
    assert not rule.matches(**{**match, "is_drill": True})
    assert Rule().matches(event="test", severity="SEV4", namespace="", is_drill=False)
