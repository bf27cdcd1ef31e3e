"""Alertmanager's Watchdog as heartbeats, through the real webhook view: one heartbeat per
replica (its externalURL), no incident and no alert row for the Watchdog itself, only the
replica that stops goes missing, ingest's query count stays constant; and the deploy
files that make Alertmanager send it every minute."""

import copy
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from incidents.models import Alert, Incident, WebhookReceipt
from pager.heartbeats import receivers
from pager.heartbeats.services import heartbeats_check
from pager.models import Heartbeat, HeartbeatKind, HeartbeatState, Team
from tests.payloads import BASE, GO_ZERO, alert, notification, rfc3339

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]
AM_A, AM_B = "http://am-a.monitoring:9093", "http://am-b.monitoring:9093"


@pytest.fixture(autouse=True)
def connected():
    receivers.connect()  # PagerConfig.ready() does this once wired; connecting is idempotent


def watchdog(*, status="firing", replica="prometheus-k8s-0", name="Watchdog"):
    labels = {"alertname": name, "severity": "none", "prometheus": "monitoring/k8s",
              "prometheus_replica": replica}  # fmt: skip
    return {
        "status": status,
        "labels": labels,
        "annotations": {"summary": "An alert that should always be firing."},
        "startsAt": rfc3339(BASE, 123),
        "endsAt": GO_ZERO if status == "firing" else rfc3339(timezone.now()),
        "generatorURL": "http://prometheus:9090/graph?g0.expr=vector%281%29",
    }


def body(external_url, *alerts, name="Watchdog"):
    group_key = f'{{}}/{{alertname="{name}"}}:{{alertname="{name}"}}'
    sent = notification(list(alerts) or [watchdog(name=name)], alertname=name, group_key=group_key)
    sent["externalURL"] = external_url
    sent["groupLabels"] = {"alertname": name}
    sent["commonLabels"] = {"alertname": name}
    return sent


@pytest.fixture
def deliver(post_webhook, django_capture_on_commit_callbacks):
    """POST a body to the webhook as a replica does; the receivers run on commit."""

    def _deliver(sent):
        with django_capture_on_commit_callbacks(execute=True):
            response = post_webhook(sent)
        assert response.status_code == 200, response.content
        return response.json()

    return _deliver


def replica(url):
    return Heartbeat.objects.get(kind=HeartbeatKind.WATCHDOG, source=url)


def test_each_replica_is_a_heartbeat_and_the_watchdog_opens_nothing(deliver):
    sre = Team.objects.create(slug="sre", name="SRE", is_default=True)
    for url in (AM_A, AM_B, AM_A):
        answer = deliver(body(url))
        assert answer["incidents"] == [] and answer["received"] == 1  # noqa: PT018
    a, b = replica(AM_A), replica(AM_B)
    assert (a.name, b.name) == (
        "Alertmanager am-a.monitoring:9093",
        "Alertmanager am-b.monitoring:9093",
    )
    assert a.slug != b.slug
    assert {a.state, b.state} == {HeartbeatState.OK}
    assert a.team == sre
    assert a.interval_seconds == 300
    assert a.grace_seconds == 60
    assert not Incident.objects.exists()
    assert not Alert.objects.exists()
    receipts = WebhookReceipt.objects.all()
    assert len(receipts) == 3  # every delivery is recorded
    assert {r.alert_count for r in receipts} == {1}


def test_only_the_replica_that_stops_goes_missing(deliver):
    deliver(body(AM_A))
    deliver(body(AM_B))
    # Replica A has been silent for ten minutes; B delivers as usual.
    Heartbeat.objects.filter(source=AM_A).update(
        last_seen_at=timezone.now() - timedelta(minutes=10)
    )
    deliver(body(AM_B))
    assert heartbeats_check() == 1
    assert replica(AM_A).state == HeartbeatState.MISSING
    assert replica(AM_B).state == HeartbeatState.OK
    incident = Incident.objects.get()
    assert incident.title.startswith("HeartbeatMissing: Alertmanager am-a.monitoring:9093 has not")
    assert incident.group_labels["heartbeat"] == replica(AM_A).slug

    # A delivers again: the next check resolves its alert, the incident is mitigated.
    deliver(body(AM_A))
    assert heartbeats_check() == 1
    assert replica(AM_A).state == HeartbeatState.OK
    assert Incident.objects.get().status == "mitigated"


def test_a_resolved_watchdog_is_no_beat(deliver):
    """Alertmanager resolves it when Prometheus stopped sending it: the very failure."""
    deliver(body(AM_A, watchdog(status="resolved")))
    assert not Heartbeat.objects.filter(kind=HeartbeatKind.WATCHDOG).exists()
    assert not Incident.objects.exists()
    assert not Alert.objects.exists()


def test_a_body_with_a_watchdog_and_a_real_alert_opens_an_incident_for_the_real_one(deliver):
    sent = body(AM_A, watchdog(), alert(pod="vllm-chat-0"))
    answer = deliver(sent)
    assert len(answer["opened"]) == 1
    assert list(Alert.objects.values_list("alertname", flat=True)) == ["VLLMHighTTFT"]
    assert replica(AM_A).state == HeartbeatState.OK


def test_the_alertnames_come_from_the_setting(deliver, settings):
    settings.HEARTBEAT_ALERTNAMES = ["DeadMansSwitch"]
    deliver(body(AM_A, name="DeadMansSwitch"))
    assert replica(AM_A).state == HeartbeatState.OK
    assert not Incident.objects.exists()
    deliver(body(AM_B, name="Watchdog"))  # an ordinary alert now
    assert Incident.objects.count() == 1
    assert not Heartbeat.objects.filter(source=AM_B).exists()


def test_beat_is_judged_on_watchdog_deliveries(deliver):
    """Beat sends the check; when it is dead, Alertmanager's deliveries still come."""
    heartbeats_check()
    Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE, source="beat").update(
        last_seen_at=timezone.now() - timedelta(minutes=10)
    )
    deliver(body(AM_A))
    beat = Heartbeat.objects.get(kind=HeartbeatKind.CONSOLE, source="beat")
    assert beat.state == HeartbeatState.MISSING
    assert "Console beat" in Incident.objects.get().title


def queries(deliver, sent):
    with CaptureQueriesContext(connection) as ctx:
        deliver(sent)
    return len(ctx.captured_queries)


def test_watchdog_deliveries_cost_a_constant_number_of_queries(deliver):
    deliver(body(AM_A))
    deliver(body(AM_B))
    heartbeats_check()  # the console's heartbeats exist
    one = queries(deliver, body(AM_A))
    # Two Prometheus replicas each send their own Watchdog (prometheus_replica differs).
    several = body(AM_A, *(watchdog(replica=f"prometheus-k8s-{i}") for i in range(5)))
    assert queries(deliver, several) == one
    assert one <= 6  # the receipt, the heartbeat's UPDATE, the look at beat


def test_a_watchdog_beside_real_alerts_adds_only_the_heartbeat_queries(deliver):
    deliver(body(AM_A))
    heartbeats_check()
    alerts = [alert(pod=f"vllm-chat-{i}") for i in range(20)]
    plain = notification(alerts)
    deliver(plain)  # opened; the next ones are repeats
    without = queries(deliver, plain)
    mixed = copy.deepcopy(plain)
    mixed["alerts"].append({**watchdog(), "fingerprint": "00000000000000aa"})
    mixed["externalURL"] = AM_A
    with_watchdog = queries(deliver, mixed)
    assert with_watchdog - without <= 2


# --- the deploy files ----------------------------------------------------------------------
def test_alertmanager_sends_the_watchdog_to_the_console_every_minute():
    config = yaml.safe_load((ROOT / "deploy/alertmanager/alertmanager.yml").read_text())
    (route,) = [r for r in config["route"]["routes"] if r["matchers"] == ['alertname="Watchdog"']]
    assert route["receiver"] == "incident-console"
    assert (route["group_wait"], route["group_interval"], route["repeat_interval"]) == (
        "0s",
        "1m",
        "1m",
    )
    assert not route.get("continue")


def test_prometheus_fires_the_watchdog_always():
    prom = ROOT / "deploy/prometheus"
    rules = [
        rule
        for path in sorted((prom / "watchdog-rules").glob("*.yml"))
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
    ]
    (watchdog_rule,) = [r for r in rules if r.get("alert") == "Watchdog"]
    assert watchdog_rule["expr"].strip() == "vector(1)"
    loaded = yaml.safe_load((prom / "prometheus.yml").read_text())["rule_files"]
    assert "watchdog-rules/*.yml" in loaded
