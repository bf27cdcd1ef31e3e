"""The Watchdog through real Alertmanager replicas (Debian's prometheus-alertmanager): two
replicas, standing alone as replicas without gossip do, each given the always-firing
Watchdog (as Prometheus sends every alert to every replica) and each delivering it to
the live server's webhook with its own externalURL, every second here (the production
route does it every minute). The console keeps one heartbeat per replica; when one
replica stops, only its heartbeat goes missing and pages (a HeartbeatMissing incident),
while the other keeps beating. Intervals are shortened through the settings."""

import subprocess
from datetime import UTC, datetime, timedelta

import pytest
import requests

from incidents.models import Alert, Incident
from pager.heartbeats import receivers
from pager.heartbeats.services import heartbeats_check
from pager.models import Heartbeat, HeartbeatKind, HeartbeatState
from tests.conftest import TOKEN, need_service
from tests.helpers import free_port, wait_for
from tests.integration.conftest import ALERTMANAGER_BINARY

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    pytest.mark.django_db(transaction=True),
]

# The production route (deploy/alertmanager/alertmanager.yml) with seconds for minutes.
CONFIG = """
route:
  receiver: console
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
  routes:
    - matchers: [alertname="Watchdog"]
      receiver: console
      group_wait: 0s
      group_interval: 1s
      repeat_interval: 1s
receivers:
  - name: console
    webhook_configs:
      - url: {url}
        send_resolved: true
        max_alerts: 0
        http_config:
          authorization:
            type: Bearer
            credentials: {token}
"""


@pytest.fixture
def short_heartbeats(settings):
    # A replica silent for 6 s is missing; the live one delivers every second.
    settings.HEARTBEAT_WATCHDOG_INTERVAL_SECONDS = 3
    settings.HEARTBEAT_GRACE_SECONDS = 3
    receivers.connect()  # what PagerConfig.ready() does, for the live server's requests


@pytest.fixture
def two_replicas(live_server, tmp_path):
    need_service("Alertmanager", ALERTMANAGER_BINARY is not None, "install prometheus-alertmanager")
    config = tmp_path / "am.yml"
    config.write_text(
        CONFIG.format(url=live_server.url + "/api/v1/alerts/alertmanager", token=TOKEN)
    )
    procs: dict[str, subprocess.Popen] = {}
    for name in ("a", "b"):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        storage = tmp_path / f"am-{name}"
        storage.mkdir()
        log = open(tmp_path / f"am-{name}.log", "w")  # noqa: SIM115
        procs[url] = subprocess.Popen(
            [str(ALERTMANAGER_BINARY), f"--config.file={config}", f"--storage.path={storage}",
             f"--web.listen-address=127.0.0.1:{port}", f"--web.external-url={url}",
             "--cluster.listen-address="],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    for url in procs:
        wait_for(lambda u=url: requests.get(u + "/-/ready", timeout=1).ok, timeout=30,
                 what=f"Alertmanager {url} to start")  # fmt: skip
    yield procs
    for proc in procs.values():
        proc.terminate()
    for proc in procs.values():
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    for name in ("a", "b"):
        print(name, (tmp_path / f"am-{name}.log").read_text()[-3000:])  # shown on failure


def send_watchdog(url: str) -> None:
    """What Prometheus posts for `vector(1)`: firing, valid for a while unless re-sent."""
    now = datetime.now(UTC)
    alert = {
        "labels": {"alertname": "Watchdog", "severity": "none"},
        "annotations": {"summary": "Always firing: the alerting pipeline is alive"},
        "startsAt": (now - timedelta(minutes=1)).isoformat(),
        "endsAt": (now + timedelta(minutes=10)).isoformat(),
        "generatorURL": "http://prometheus:9090/graph?g0.expr=vector%281%29",
    }
    r = requests.post(url + "/api/v2/alerts", json=[alert], timeout=5)
    assert r.status_code == 200, r.text


def watchdogs() -> dict[str, Heartbeat]:
    return {h.source: h for h in Heartbeat.objects.filter(kind=HeartbeatKind.WATCHDOG)}


def test_the_replica_that_stops_is_the_one_that_goes_missing(short_heartbeats, two_replicas):
    urls = list(two_replicas)
    for url in urls:
        send_watchdog(url)
    wait_for(
        lambda: set(watchdogs()) == set(urls)
        and all(h.state == HeartbeatState.OK for h in watchdogs().values()),
        timeout=30, what="a heartbeat per replica",
    )  # fmt: skip
    assert not Alert.objects.exists()  # the Watchdog opens nothing

    stopped, alive = urls
    two_replicas[stopped].terminate()
    two_replicas[stopped].wait(timeout=10)

    def stopped_is_missing():
        heartbeats_check()
        return watchdogs()[stopped].state == HeartbeatState.MISSING

    wait_for(stopped_is_missing, timeout=60, what="the stopped replica's heartbeat to go missing")
    beating = watchdogs()[alive]
    assert beating.state == HeartbeatState.OK, beating.last_seen_at
    lost = watchdogs()[stopped]
    incident = Incident.objects.get(group_labels__heartbeat=lost.slug)
    assert incident.title.startswith(f"HeartbeatMissing: Alertmanager {stopped[len('http://') :]}")
    assert lost.incident_id == incident.pk
    assert not Incident.objects.filter(group_labels__heartbeat=beating.slug).exists()
