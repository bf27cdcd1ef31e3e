"""Live triage (runbooks.triage and GET /api/v1/incidents/{id}/triage/) against a small
real HTTP server that answers like Prometheus' /api/v1/query. (Prometheus is not our
code; the real one is used by tests/integration/test_triage_live.py.)"""

import time

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident
from runbooks.triage import incident_triage
from tests.helpers import free_port
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus

pytestmark = pytest.mark.django_db

# ttft-spike: every capacity signal red.
TTFT_ALL_RED = {
    "num_requests_waiting": 25,
    "kv_cache_usage_perc": 0.97,
    "num_preemptions_total": 1.5,
    "llm_gateway_requests_total": 2.1,
    "inter_token_latency_seconds_bucket": 0.03,
}
# nccl-hang: requests in flight, no tokens from this group, the others still serving.
NCCL_HUNG = {
    'pod!="': 850.0,  # other_groups_serving (matched before generation_tokens_total)
    "num_requests_running": 12,
    "generation_tokens_total": 0,
    "DCGM_FI_DEV_GPU_UTIL": 0,
    "NVLINK_CRC": 37,
}


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus()
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    settings.TRIAGE_CACHE_SECONDS = 10
    yield fake
    fake.close()


@pytest.fixture
def incident(post_webhook):
    def _make(runbook: str, alertname: str, **kw) -> Incident:
        body = notification([alert(runbook=runbook, alertname=alertname, **kw)],
                            group_key=f"g-{runbook}", alertname=alertname)  # fmt: skip
        r = post_webhook(body)
        assert r.status_code == 200, r.content
        return Incident.objects.get(pk=r.json()["incidents"][0])

    return _make


def states(result) -> dict[str, str]:
    return {c.id: c.state for c in result.checks}


def test_ttft_spike_with_every_capacity_signal_red_is_capacity(prom, incident):
    prom.answers = TTFT_ALL_RED
    result = incident_triage(incident=incident("ttft-spike", "VLLMHighTTFT"))
    assert result.runbook_slug == "ttft-spike"
    assert states(result) == {
        "waiting_queue": "firing", "kv_usage": "firing", "preemptions": "firing",
        "traffic_vs_yesterday": "firing", "itl_degraded": "ok",
    }  # fmt: skip
    assert result.branch_id == "capacity"
    assert set(result.recommended_actions) == {"scale_lws", "update_gateway_limits"}
    assert dict(result.because) == {
        "waiting_queue": "firing", "kv_usage": "firing", "preemptions": "firing",
        "traffic_vs_yesterday": "firing",
    }  # fmt: skip
    assert result.prometheus_error == ""
    waiting = result.checks[0]
    assert waiting.value == 25.0
    assert 'namespace="llm-serving"' in waiting.promql
    assert 'lws="vllm-chat"' in waiting.promql


def test_no_data_from_yesterday_is_capacity_unconfirmed(prom, incident):
    prom.answers = {**TTFT_ALL_RED, "llm_gateway_requests_total": None}
    result = incident_triage(incident=incident("ttft-spike", "VLLMHighTTFT"))
    assert states(result)["traffic_vs_yesterday"] == "no_data"
    assert result.checks[3].value is None
    assert result.branch_id == "capacity_unconfirmed"


def test_several_series_take_the_largest_and_say_so(prom, incident):
    prom.answers = {**TTFT_ALL_RED, "kv_cache_usage_perc": [0.2, 0.95, 0.4]}
    result = incident_triage(incident=incident("ttft-spike", "VLLMHighTTFT"))
    kv = next(c for c in result.checks if c.id == "kv_usage")
    assert kv.value == 0.95
    assert kv.state == "firing"
    assert "3 series" in kv.message


def test_nccl_hang_without_a_node_label_is_hang_and_the_node_check_needs_it(prom, incident):
    prom.answers = NCCL_HUNG
    result = incident_triage(incident=incident("nccl-hang", "VLLMEngineStalled"))
    assert states(result) == {
        "requests_running": "firing", "throughput_zero": "firing",
        "other_groups_serving": "firing", "gpus_idle": "firing",
        "nvlink_crc_errors": "needs_label",
    }  # fmt: skip
    nvlink = next(c for c in result.checks if c.id == "nvlink_crc_errors")
    assert nvlink.message == "needs label node"
    assert nvlink.value is None
    assert result.branch_id == "hang"
    assert 'pod="vllm-chat-0"' in result.checks[0].promql
    assert not any("NVLINK" in q for q in prom.requests), "a check needing a label was run"


def test_nccl_hang_with_a_node_label_and_crc_errors_is_hang_nvlink(prom, incident):
    prom.answers = NCCL_HUNG
    inc = incident("nccl-hang", "VLLMEngineStalled", extra_labels={"node": "gpu-node-3"})
    result = incident_triage(incident=inc)
    assert states(result)["nvlink_crc_errors"] == "firing"
    assert result.branch_id == "hang_nvlink"


def test_prometheus_refusing_connections_makes_every_check_error(settings, incident):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    result = incident_triage(incident=incident("ttft-spike", "VLLMHighTTFT"))
    assert {c.state for c in result.checks} == {"error"}
    assert (
        result.prometheus_error == f"Prometheus at {settings.PROMETHEUS_URL} refused the connection"
    )
    assert all(c.message == result.prometheus_error for c in result.checks)
    assert result.branch_id == "before_engine"  # the catch-all: nothing known
    assert result.because == ()


def test_a_slow_prometheus_is_given_up_on_after_the_timeout(prom, incident):
    prom.answers = TTFT_ALL_RED
    prom.delay = 1.5
    inc = incident("ttft-spike", "VLLMHighTTFT")
    started = time.monotonic()
    result = incident_triage(incident=inc)
    elapsed = time.monotonic() - started
    assert result.prometheus_error == f"Prometheus at {prom.url} did not answer in 0.5 s"
    assert {c.state for c in result.checks} == {"error"}
    assert elapsed < 1.4, "waited for more than one timeout"
    assert sum(prom.requests.values()) == 1, "kept asking a Prometheus that does not answer"


def test_a_bad_query_is_an_error_of_that_check_with_prometheus_message(prom, incident):
    prom.status = 400
    result = incident_triage(incident=incident("ttft-spike", "VLLMHighTTFT"))
    assert {c.state for c in result.checks} == {"error"}
    assert result.checks[0].message == f"Prometheus at {prom.url} answered 400: parse error"


def test_answers_are_cached_so_viewers_share_queries(prom, incident, settings):
    # Long enough that a loaded machine cannot let the answers expire between the calls.
    settings.TRIAGE_CACHE_SECONDS = 600
    prom.answers = TTFT_ALL_RED
    inc = incident("ttft-spike", "VLLMHighTTFT")
    first = incident_triage(incident=inc)
    second = incident_triage(incident=inc)
    assert states(first) == states(second)
    assert len(prom.requests) == 5
    assert set(prom.requests.values()) == {1}


def test_an_incident_without_a_matching_runbook(prom, incident):
    inc = incident("no-such-runbook", "SomethingElse")
    Incident.objects.filter(pk=inc.pk).update(runbook="")
    inc.refresh_from_db()
    result = incident_triage(incident=inc)
    assert result.runbook_slug == ""
    assert result.checks == ()
    assert "No runbook" in result.message
    assert not prom.requests


# --- the API ----------------------------------------------------------------------------
def api(make_user, role):
    user = make_user(role or "norole", role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


def url(incident_id: int) -> str:
    return f"/api/v1/incidents/{incident_id}/triage/"


def test_api_answers_the_documented_shape(prom, incident, make_user, django_assert_max_num_queries):
    prom.answers = NCCL_HUNG
    inc = incident("nccl-hang", "VLLMEngineStalled")
    client = api(make_user, roles.VIEWER)
    # + one per recommended action (the approval policy's look for open incidents about
    # it) and one for the last auto-triage entry (is this branch news to the timeline?)
    with django_assert_max_num_queries(6 + 2 + 1):
        r = client.get(url(inc.pk))
    assert r.status_code == 200, r.content
    body = r.json()
    assert set(body) == {"incident", "runbook", "title", "message", "message_i18n", "checks",
                         "decision", "prometheus", "evaluated_at", "lead"}  # fmt: skip
    assert body["incident"] == inc.pk
    assert body["lead"] is None  # it is part of no other incident (incidents/related)
    assert body["runbook"] == "nccl-hang"
    assert body["decision"]["branch"] == "hang"
    assert body["decision"]["recommended_actions"] == ["restart_lws_group", "cordon_node"]
    assert {"check": "throughput_zero", "state": "firing"} in body["decision"]["because"]
    assert body["prometheus"] == {"url": prom.url, "error": "", "error_i18n": None}
    check = body["checks"][0]
    assert set(check) == {"id", "question", "promql", "value", "state", "comparator",
                          "threshold", "unit", "unit_label", "message",
                          "message_i18n"}  # fmt: skip
    assert check["value"] == 12.0
    assert check["state"] == "firing"


def test_api_with_prometheus_down_still_answers_200(settings, incident, make_user):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    inc = incident("ttft-spike", "VLLMHighTTFT")
    r = api(make_user, roles.VIEWER).get(url(inc.pk))
    assert r.status_code == 200
    assert "refused the connection" in r.json()["prometheus"]["error"]
    assert {c["state"] for c in r.json()["checks"]} == {"error"}


def test_api_permissions(prom, incident, make_user):
    inc = incident("ttft-spike", "VLLMHighTTFT")
    assert api(make_user, roles.VIEWER).get(url(inc.pk)).status_code == 200
    assert api(make_user, None).get(url(inc.pk)).status_code == 403
    assert APIClient().get(url(inc.pk)).status_code == 401
    r = api(make_user, roles.RESPONDER).get(url(inc.pk + 1000))
    assert r.status_code == 404
    assert "does not exist" in r.json()["detail"]
