"""Alertmanager in HA (issue 23, finding 9): two or three real Alertmanager replicas
(Debian's prometheus-alertmanager) clustered on loopback, or standing alone with no
gossip, each given the same alerts (Prometheus sends every alert to every replica) and
each notifying the live server's webhook.

Replicas deliver at least once by design: a clustered replica skips a notification only
if a peer's notification log reached it within `--cluster.peer-timeout`; replicas that
cannot gossip all deliver, at the same moment. Whatever happened, the console holds:
one incident per group, one timeline entry per change, one outgoing notification
(Delivery) per transition, and every delivery of every replica answered 200 (a receipt
each: more receipts than changes is expected)."""

import json
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from incidents.models import Alert, Incident, TimelineEvent, WebhookReceipt
from notifications.models import Delivery, Rule, Target, TargetKind
from tests.conftest import need_service
from tests.helpers import free_port, wait_for
from tests.integration.conftest import ALERTMANAGER_BINARY, ALERTMANAGER_CONFIG
from tests.payloads import stalled_engine_alert

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    pytest.mark.django_db(transaction=True),
]
PODS = ("vllm-chat-3-0", "vllm-chat-3-1")
PEER_TIMEOUT = 0.5  # seconds a replica waits per position before it delivers
# Prometheus sends each alert to every Alertmanager; a replica's nflog entry, gossiped
# every 50ms, reaches its peers well within PEER_TIMEOUT, usually.
CLUSTER_FLAGS = (
    "--cluster.gossip-interval=50ms",
    "--cluster.pushpull-interval=1s",
    "--cluster.probe-interval=200ms",
    f"--cluster.peer-timeout={int(PEER_TIMEOUT * 1000)}ms",
    "--cluster.settle-timeout=5s",
    "--cluster.reconnect-interval=1s",
)


@dataclass
class Replica:
    url: str
    proc: subprocess.Popen
    log_path: Path


@pytest.fixture
def replicas(live_server, tmp_path):
    """Start `count` Alertmanager replicas notifying the live server's webhook with the
    same bearer token, clustered on loopback (`gossip`) or each on its own; returns them
    once every one is ready (and, clustered, sees all its peers and has settled)."""
    need_service("Alertmanager", ALERTMANAGER_BINARY is not None, "install prometheus-alertmanager")
    config = tmp_path / "am.yml"
    config.write_text(
        ALERTMANAGER_CONFIG.format(url=live_server.url + "/api/v1/alerts/alertmanager")
    )
    started: list[Replica] = []

    def start(count: int, *, gossip: bool) -> list[Replica]:
        web = [free_port() for _ in range(count)]
        cluster = [free_port() for _ in range(count)]
        for i in range(count):
            url = f"http://127.0.0.1:{web[i]}"
            storage = tmp_path / f"am-{i}"
            storage.mkdir()
            args = [
                str(ALERTMANAGER_BINARY), f"--config.file={config}", f"--storage.path={storage}",
                f"--web.listen-address=127.0.0.1:{web[i]}",
                # The externalURL in each body is how receipts tell the replicas apart.
                f"--web.external-url={url}",
            ]  # fmt: skip
            if gossip:
                args += [
                    f"--cluster.listen-address=127.0.0.1:{cluster[i]}",
                    f"--cluster.advertise-address=127.0.0.1:{cluster[i]}",
                    *(f"--cluster.peer=127.0.0.1:{p}" for j, p in enumerate(cluster) if j != i),
                    *CLUSTER_FLAGS,
                ]
            else:
                args.append("--cluster.listen-address=")  # HA off: nothing to dedupe with
            log_path = tmp_path / f"am-{i}.log"
            with open(log_path, "w") as log:
                proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
            started.append(Replica(url, proc, log_path))
        mine = started[-count:]
        for replica in mine:
            wait_for(lambda r=replica: _ready(r, count if gossip else 0), timeout=30,
                     what=f"Alertmanager {replica.url} to be ready")  # fmt: skip
        return mine

    yield start
    for replica in started:
        replica.proc.terminate()
    for replica in started:
        try:
            replica.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            replica.proc.kill()
        print(replica.url, replica.log_path.read_text()[-3000:])  # shown only on failure


def _ready(replica: Replica, peers: int) -> bool:
    if replica.proc.poll() is not None:
        raise AssertionError(f"{replica.url} exited:\n{replica.log_path.read_text()[-3000:]}")
    status = requests.get(replica.url + "/api/v2/status", timeout=1).json()
    if not peers:
        return True
    cluster = status["cluster"]
    return cluster["status"] == "ready" and len(cluster.get("peers") or []) == peers


@pytest.fixture
def notify_everything(redis_broker):
    """A webhook target told about incidents opening, being mitigated and resolved (its
    deliveries are queued on this run's own Redis keys, which redis_broker clears)."""
    target = Target.objects.create(
        name="ops", kind=TargetKind.WEBHOOK, url="http://127.0.0.1:9/hook", secret="s3cret"
    )
    rule = Rule.objects.create(
        name="incidents", events=["incident_opened", "incident_mitigated", "incident_resolved"]
    )
    rule.targets.set([target])
    return target


def send_to_all(replicas: list[Replica], alerts: list[dict]) -> None:
    for replica in replicas:
        r = requests.post(replica.url + "/api/v2/alerts", json=alerts, timeout=5)
        assert r.status_code == 200, r.text


_SENT = re.compile(r'^alertmanager_notifications_total\{[^}]*integration="webhook"[^}]*\} (\S+)$')
_FAILED = re.compile(
    r'^alertmanager_notifications_failed_total\{[^}]*integration="webhook"[^}]*\} (\S+)$'
)


def sent_and_failed(replica: Replica) -> tuple[int, int]:
    """The webhook notifications this replica has attempted, and how many of them failed."""
    text = requests.get(replica.url + "/metrics", timeout=5).text
    sent = failed = 0
    for line in text.splitlines():
        if m := _SENT.match(line):
            sent += int(float(m.group(1)))
        elif m := _FAILED.match(line):
            failed += int(float(m.group(1)))
    return sent, failed


def accepted() -> list[WebhookReceipt]:
    return list(WebhookReceipt.objects.order_by("pk"))


def quiesce(replicas: list[Replica]) -> list[WebhookReceipt]:
    """Once every replica is past its turn (position x peer-timeout, plus a flush), each
    notification a replica attempted has its receipt, answered 200: none failed."""
    time.sleep(len(replicas) * PEER_TIMEOUT + 1.5)

    def settled():
        counts = [sent_and_failed(r) for r in replicas]
        assert sum(f for _, f in counts) == 0, f"a replica's delivery failed: {counts}"
        receipts = accepted()
        return receipts if sum(s for s, _ in counts) == len(receipts) else None

    return wait_for(settled, timeout=15, what="every replica's deliveries to have receipts")


def external_urls(receipts: list[WebhookReceipt]) -> Counter:
    return Counter(json.loads(r.body)["externalURL"] for r in receipts)


@pytest.mark.parametrize(
    ("count", "gossip"),
    [(2, True), (3, True), (2, False), (3, False)],
    ids=["2-clustered", "3-clustered", "2-no-gossip", "3-no-gossip"],
)
def test_replicas_make_one_incident_one_entry_per_change_one_notification_per_transition(
    replicas, notify_everything, count, gossip
):
    ams = replicas(count, gossip=gossip)
    starts = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    valid_until = datetime.now(UTC) + timedelta(minutes=5)
    send_to_all(ams, [stalled_engine_alert(p, starts, valid_until) for p in PODS])

    incident = wait_for(
        lambda: Incident.objects.filter(alerts__isnull=False).distinct().first(),
        timeout=30, what="the replicas to notify the console",
    )  # fmt: skip
    wait_for(lambda: incident.alerts.count() == 2, timeout=15, what="both alerts")
    firing = quiesce(ams)
    assert firing
    assert all(r.http_status == 200 and r.outcome == "accepted" for r in firing)
    if not gossip:  # each replica on its own: every one of them delivered, at least once
        # (a busy machine makes Alertmanager send a group again: at least once by design)
        assert set(external_urls(firing)) == {am.url for am in ams}

    resolved_at = datetime.now(UTC) - timedelta(seconds=1)
    send_to_all(ams, [stalled_engine_alert(p, starts, resolved_at) for p in PODS])
    wait_for(
        lambda: Incident.objects.get(pk=incident.pk).status == "mitigated",
        timeout=30, what="the incident to be mitigated",
    )  # fmt: skip
    receipts = quiesce(ams)
    assert all(r.http_status == 200 and r.outcome == "accepted" for r in receipts)
    if not gossip:
        assert all(n >= 2 for n in external_urls(receipts).values()), external_urls(receipts)
        assert set(external_urls(receipts)) == {am.url for am in ams}
    assert len(receipts) >= 2  # at least once per change

    assert Incident.objects.count() == 1
    assert set(Alert.objects.values_list("status", flat=True)) == {"resolved"}
    events = list(TimelineEvent.objects.filter(incident=incident).order_by("pk"))
    assert [e.kind for e in events] == [
        "incident_opened", "alert_fired", "alert_resolved", "status_changed",
    ], [(e.kind, e.message) for e in events]  # fmt: skip
    for kind in ("alert_fired", "alert_resolved"):  # each alert's change listed once
        (event,) = (e for e in events if e.kind == kind)
        assert sorted(a["pod"] for a in event.payload["alerts"]) == list(PODS)
    deliveries = Counter(
        Delivery.objects.filter(target=notify_everything).values_list("event", flat=True)
    )
    assert deliveries == Counter({"incident_opened": 1, "incident_mitigated": 1})
