"""A ConfigMap changed outside the console is guarded only on an incident whose alerts are
live and about that object (issue 25, item 2). Before, the newest open incident in the
namespace was taken: a simulator reset of the router ConfigMap was watched on a demo
sample incident (nccl-hang, its alert posted once and never re-sent) and rolled back."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from actions.guard import services as guard_services
from actions.revisions import config_revision_store
from tests.factories import AlertFactory, IncidentFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
NS = "llm-serving"


def revision(name: str, data: dict, *, seconds_ago: int):
    at = timezone.now() - timedelta(seconds=seconds_ago)
    with mock.patch("actions.revisions.timezone.now", return_value=at):
        return config_revision_store(
            namespace=NS, name=name, data=data, resource_version="1",
            reason="periodic capture", run=None,
        )  # fmt: skip


def changed(name: str = "vllm-router-config"):
    revision(name, {"routing_logic": "prefixaware"}, seconds_ago=600)
    return revision(name, {"routing_logic": "roundrobin"}, seconds_ago=5)


def incident(alertname: str, runbook: str, *, received_ago: int = 10, status="firing", **extra):
    inc = IncidentFactory(severity="SEV1", runbook=runbook, namespace=NS, **extra)
    AlertFactory(
        incident=inc, alertname=alertname, status=status,
        labels={"alertname": alertname, "namespace": NS, "lws": "vllm-chat"},
        last_received_at=timezone.now() - timedelta(seconds=received_ago),
    )  # fmt: skip
    return inc


def test_an_incident_about_something_else_does_not_get_the_routers_change():
    incident("VLLMEngineStalled", "nccl-hang")  # offers restarts and cordons, no router
    assert guard_services.guard_watch_start_for_revision(revision=changed()) is None


def test_an_alert_alertmanager_stopped_re_sending_is_not_live(settings):
    settings.GUARD_ALERT_LIVE_SECONDS = 3900
    incident("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop", received_ago=2 * 3600)
    assert guard_services.guard_watch_start_for_revision(revision=changed()) is None


def test_a_resolved_alert_or_a_drill_is_not_a_reason_to_guard():
    incident("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop", status="resolved")
    incident("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop", is_drill=True)
    assert guard_services.guard_watch_start_for_revision(revision=changed()) is None


def test_the_live_incident_about_that_configmap_gets_the_watch_not_the_newest():
    router = incident("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    ttft = incident("VLLMHighTTFT", "ttft-spike")  # newer, but acts on the gateway only
    incident("VLLMEngineStalled", "nccl-hang")  # newest
    watch = guard_services.guard_watch_start_for_revision(revision=changed())
    assert watch is not None
    assert watch.incident_id == router.pk
    gateway = guard_services.guard_watch_start_for_revision(revision=changed("llm-gateway-config"))
    assert gateway is not None
    assert gateway.incident_id == ttft.pk  # update_gateway_limits: the gateway ConfigMap
