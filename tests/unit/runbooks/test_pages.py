"""Runbook pages and the incident page's runbook partials (live triage, golden-signal
charts), against a small real HTTP server that answers like Prometheus' query API."""

import json
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console import roles
from incidents.models import Incident
from runbooks.catalog import load_catalog
from tests.helpers import free_port
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
# ttft-spike: every capacity signal red -> branch "capacity".
TTFT_ALL_RED = {
    "num_requests_waiting": 25,
    "kv_cache_usage_perc": 0.97,
    "num_preemptions_total": 1.5,
    "llm_gateway_requests_total": 2.1,
    "inter_token_latency_seconds_bucket": 0.03,
}


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(TTFT_ALL_RED, default=1.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    settings.TRIAGE_CACHE_SECONDS = 10
    yield fake
    fake.close()


@pytest.fixture
def viewer(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    return client


def ingest(post_webhook, alerts, **kw) -> Incident:
    response = post_webhook(notification(alerts, **kw))
    assert response.status_code == 200, response.content
    return Incident.objects.get(pk=response.json()["incidents"][0])


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


# --- catalogue pages --------------------------------------------------------------------
def test_catalogue_lists_all_eight_grouped_by_category(viewer):
    page = viewer.get("/runbooks/")
    assert page.status_code == 200
    body = text(page)
    catalog = load_catalog()
    assert len(catalog.all()) == 8
    assert body.count('data-testid="runbook-row"') == 8
    for rb in catalog.all():
        assert f'href="/runbooks/{rb.slug}/"' in body
        assert rb.default_severity in body
        for name in rb.alerts:
            assert name in body
    for category in catalog.categories.values():
        assert category.title in body


def test_categories_page_lists_six_categories_with_defences_and_runbooks(viewer):
    page = viewer.get("/runbooks/categories/")
    assert page.status_code == 200
    body = page.content.decode()
    catalog = load_catalog()
    assert len(catalog.categories) == 6
    for category in catalog.categories.values():
        assert f'id="{category.name}"' in body
        assert category.defences[0][:30] in body.replace("&#x27;", "'")
    for rb in catalog.all():
        assert f'href="/runbooks/{rb.slug}/"' in body


@pytest.mark.parametrize("slug", [rb.slug for rb in load_catalog().all()])
def test_each_runbook_is_readable_without_an_incident(viewer, slug):
    rb = load_catalog().get(slug)
    page = viewer.get(f"/runbooks/{slug}/")
    assert page.status_code == 200
    body = text(page)
    for heading in ("1. Symptom", "2. Triage", "Decision tree", "3. Root cause", "4. Fix",
                    "Diagnostic commands", "5. Long-term improvements"):  # fmt: skip
        assert heading in body
    for branch in rb.decision_tree:
        assert branch.id in body
    for item in rb.long_term:
        assert item.category in body
    assert body.count('class="rb-code"') >= len(rb.triage)


def test_runbook_page_shows_thresholds_and_branch_conditions_in_words(viewer):
    body = text(viewer.get("/runbooks/ttft-spike/"))
    assert "value &gt; 10" in body
    assert (
        "waiting_queue is firing and kv_usage is firing and traffic_vs_yesterday is not firing"
        in body
    )
    assert "otherwise" in body
    assert "Add two groups to the pool" in body


def test_anonymous_is_sent_to_login(client):
    for url in ("/runbooks/", "/runbooks/categories/", "/runbooks/ttft-spike/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/login/?next=")


def test_no_role_is_forbidden(client, make_user):
    client.force_login(make_user("nobody", role=None))
    response = client.get("/runbooks/")
    assert response.status_code == 403
    assert b"no console role" in response.content


def test_unknown_runbook_is_404(viewer):
    assert viewer.get("/runbooks/no-such-runbook/").status_code == 404
    assert viewer.get("/runbooks/incidents/999999/triage/", **HTMX).status_code == 404


def test_nav_links_the_catalogue(viewer):
    assert b'href="/runbooks/"' in viewer.get("/runbooks/").content


# --- live triage partial ----------------------------------------------------------------
def test_incident_page_composes_the_runbook_partials_by_url(viewer, post_webhook):
    incident = ingest(post_webhook, [alert()])
    body = viewer.get(f"/incidents/{incident.pk}/").content.decode()
    assert f'hx-get="/runbooks/incidents/{incident.pk}/triage/"' in body
    assert f'hx-get="/runbooks/incidents/{incident.pk}/signals/"' in body


def test_triage_partial_shows_values_states_and_the_matched_branch(viewer, post_webhook, prom):
    incident = ingest(post_webhook, [alert()])
    response = viewer.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX)
    assert response.status_code == 200
    body = text(response)
    for step in ("Symptom", "Triage", "Root cause", "Fix", "Long-term"):
        assert f'href="#inc-rb-{step.lower().replace(" ", "-")}"' in body
    assert '25 <span class="muted">count</span>' in body  # waiting queue value with its unit
    assert "0.97" in body
    assert "&gt; 10" in body
    check_states = re.findall(r'data-testid="check-state">([^<]+)<', body)
    assert check_states == ["firing", "firing", "firing", "firing", "ok"]
    matched = re.search(r'<li class="rb-branch rb-matched".*?</li>', body)
    assert matched
    branch = matched.group(0)
    for words in ("capacity", "this branch matches", "Why:", "waiting_queue"):
        assert words in branch
    assert body.count("rb-dimmed") == len(load_catalog().get("ttft-spike").decision_tree) - 1
    # Emergency actions: a viewer sees them disabled, filled with the alert's labels.
    assert "A responder or commander runs actions" in body
    assert re.search(r"<button[^>]*disabled[^>]*>Add two groups to the pool</button>", body)
    assert "namespace=llm-serving, lws=vllm-chat, replicas_delta=2" in body
    # Diagnostic commands filled.
    assert "kubectl -n llm-serving get leaderworkerset vllm-chat" in body
    assert "Prometheus at" not in body  # no banner


def test_triage_partial_says_which_label_is_missing(viewer, post_webhook, prom):
    incident = ingest(post_webhook, [alert(extra_labels={"lws": ""})])
    body = text(viewer.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX))
    assert "needs label" in re.findall(r'data-testid="check-state">([^<]+)<', body)
    assert "needs label lws" in body


def test_prometheus_down_shows_a_banner_not_a_500(viewer, post_webhook, settings):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    incident = ingest(post_webhook, [alert()])
    response = viewer.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX)
    assert response.status_code == 200
    body = text(response)
    assert 'data-testid="prometheus-banner"' in body
    assert f"Prometheus at {settings.PROMETHEUS_URL}" in body
    assert "values unavailable; the runbook below still applies" in body
    assert set(re.findall(r'data-testid="check-state">([^<]+)<', body)) == {"error"}
    assert "Add two groups to the pool" in body  # the runbook is still there
    signals = viewer.get(f"/runbooks/incidents/{incident.pk}/signals/", **HTMX)
    assert signals.status_code == 200
    assert b'data-testid="prometheus-banner"' in signals.content
    assert b"data-chart=" not in signals.content


def test_no_runbook_is_an_empty_state_linking_the_catalogue(viewer, post_webhook, prom):
    incident = ingest(
        post_webhook, [alert(runbook="", alertname="SomethingElse")], alertname="SomethingElse"
    )
    body = text(viewer.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX))
    assert 'data-testid="no-runbook"' in body
    assert "has no <code>runbook</code> label" in body
    assert 'href="/runbooks/"' in body
    signals = text(viewer.get(f"/runbooks/incidents/{incident.pk}/signals/", **HTMX))
    assert "No runbook matches this incident" in signals


def test_alert_label_markup_is_escaped_in_filled_commands(viewer, post_webhook, prom):
    evil = "<img src=x onerror=alert(1)>"
    incident = ingest(post_webhook, [alert(extra_labels={"lws": evil})])
    body = viewer.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX).content.decode()
    assert evil not in body
    assert "get leaderworkerset &#x27;&lt;img src=x onerror=alert(1)&gt;&#x27;" in body
    signals = viewer.get(f"/runbooks/incidents/{incident.pk}/signals/", **HTMX).content.decode()
    assert evil not in signals


def test_partials_cost_the_same_queries_for_1_and_20_alerts(viewer, post_webhook, prom):
    one = ingest(post_webhook, [alert()])
    many = ingest(
        post_webhook,
        [alert(pod=f"vllm-chat-{i}") for i in range(20)],
        group_key='{}:{alertname="VLLMHighTTFT", lws="vllm-chat-many"}',
    )
    assert one.pk != many.pk

    def count(url: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert viewer.get(url, **HTMX).status_code == 200
        return len(ctx.captured_queries)

    # triage: + 1 for the last auto-triage entry it shows
    for part, budget in (("triage", 9), ("signals", 8)):
        small = count(f"/runbooks/incidents/{one.pk}/{part}/")
        big = count(f"/runbooks/incidents/{many.pk}/{part}/")
        assert small == big, part
        assert big <= budget, part


# --- golden-signal charts partial -----------------------------------------------------
def test_signals_partial_embeds_a_json_series_per_golden_signal(viewer, post_webhook, prom):
    incident = ingest(post_webhook, [alert()])
    response = viewer.get(f"/runbooks/incidents/{incident.pk}/signals/", **HTMX)
    assert response.status_code == 200
    body = response.content.decode()
    signals = load_catalog().get("ttft-spike").golden_signals
    assert body.count("data-chart=") == len(signals)
    assert prom.paths["/api/v1/query_range"] == len(signals)
    for signal in signals:
        dom_id = f"chart-{incident.pk}-{signal.id}"
        match = re.search(rf'<script id="{dom_id}" type="application/json">(.*?)</script>', body)
        assert match, signal.id
        data = json.loads(match.group(1))
        assert data["title"] == signal.title
        series = data["series"][0]
        assert 100 <= len(series["x"]) <= 130  # about 120 points over the window
        assert len(series["x"]) == len(series["y"])
        assert "triggered" in data["marks"]
    assert "vendor/plotly.min.js" in body
    assert "js/charts.js" in body
    assert "cdn" not in body.lower()
