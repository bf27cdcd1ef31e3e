"""Real Alertmanager (Debian's prometheus-alertmanager, the `alertmanager` fixture in
conftest) notifies the console's webhook: alerts posted to Alertmanager's API become one
incident, re-notification changes nothing, and resolving them mitigates it. Also proves
our fingerprint for legacy payloads equals the one Alertmanager computes."""

from datetime import UTC, datetime, timedelta

import pytest
import requests

from incidents.ingest.parse import labels_fingerprint
from incidents.models import Alert, Incident, TimelineEvent
from tests.helpers import wait_for
from tests.payloads import stalled_engine_alert

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    pytest.mark.django_db(transaction=True),
]


def post_alerts(base: str, alerts: list[dict]) -> None:
    r = requests.post(base + "/api/v2/alerts", json=alerts, timeout=5)
    assert r.status_code == 200, r.text


def test_alertmanager_notifications_become_one_incident_then_mitigated(alertmanager):
    starts = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    pods = ["vllm-chat-3-0", "vllm-chat-3-1"]
    post_alerts(alertmanager, [stalled_engine_alert(p, starts) for p in pods])

    incident = wait_for(
        lambda: Incident.objects.filter(alerts__isnull=False).distinct().first(),
        timeout=30, what="Alertmanager to notify the console",
    )  # fmt: skip
    wait_for(lambda: incident.alerts.count() == 2, timeout=15, what="both alerts")
    assert incident.runbook == "nccl-hang"
    assert incident.severity == "SEV1"
    assert incident.grouping_key.endswith('{alertname="VLLMEngineStalled", lws="vllm-chat"}')
    for row in Alert.objects.all():
        # Alertmanager's own fingerprint equals ours for the same labels.
        assert row.fingerprint == labels_fingerprint(row.labels)
        assert row.starts_at == starts

    # Resolve both (endsAt in the past); Alertmanager sends the resolved notification.
    ends = datetime.now(UTC) - timedelta(seconds=1)
    post_alerts(alertmanager, [stalled_engine_alert(p, starts, ends) for p in pods])
    wait_for(
        lambda: Incident.objects.get(pk=incident.pk).status == "mitigated",
        timeout=30, what="the incident to be mitigated",
    )  # fmt: skip
    assert Incident.objects.count() == 1
    assert TimelineEvent.objects.filter(incident=incident, kind="status_changed").count() == 1
    assert set(Alert.objects.values_list("status", flat=True)) == {"resolved"}
