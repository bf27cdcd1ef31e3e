"""The console's own /metrics: what an operator's alert rules read (webhook outcomes,
ingest latency, action-run outcomes, queue depth, worker heartbeat)."""

import pytest
from prometheus_client.parser import text_string_to_metric_families

from console.liveness.services import worker_heartbeat_record
from console.metrics.series import action_run_ended
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_webhook_outcomes_alerts_and_latency_are_counted(client, post_webhook):
    before = scrape(client)
    body = notification(alerts=[alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")])
    assert post_webhook(body).status_code == 200
    assert post_webhook(body, token="wrong").status_code == 401
    assert post_webhook(None, raw=b"{not json").status_code == 400
    after = scrape(client)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("console_webhook_requests_total", outcome="ingested") == 1
    assert delta("console_webhook_requests_total", outcome="unauthorized") == 1
    assert delta("console_webhook_requests_total", outcome="rejected") == 1
    assert delta("console_webhook_alerts_total", outcome="ingested") == 2
    # Only the ingested body is timed: a 401 says nothing about ingestion speed.
    assert delta("console_ingest_duration_seconds_count") == 1
    assert delta("console_ingest_duration_seconds_sum") > 0


def test_action_run_outcomes_are_counted_by_kind(client):
    def runs(outcome):
        samples = scrape(client)
        return value(samples, "console_action_runs_total", kind="scale_lws", outcome=outcome)

    failed, succeeded = runs("failed"), runs("succeeded")
    action_run_ended("scale_lws", "failed")
    assert runs("failed") - failed == 1
    assert runs("succeeded") == succeeded


def test_queue_depth_and_worker_liveness_are_read_at_scrape_time(client):
    samples = scrape(client)
    assert value(samples, "console_workers_alive") == 0
    assert ("console_worker_heartbeat_age_seconds", ()) not in samples  # never seen
    for queue in ("default", "actions"):
        assert ("console_queue_depth", (("queue", queue),)) in samples

    worker_heartbeat_record(hostname="celery@worker-0", pid=1, starting=True)
    samples = scrape(client)
    assert value(samples, "console_workers_alive") == 1
    assert 0 <= value(samples, "console_worker_heartbeat_age_seconds") < 60


def test_a_notifier_is_not_a_worker_but_its_queue_has_a_consumer(client):
    worker_heartbeat_record(hostname="notifications@n-0", pid=1, queues=["notifications"])
    samples = scrape(client)
    assert value(samples, "console_workers_alive") == 0
    consumers = {labels: v for (name, labels), v in samples.items()
                 if name == "console_queue_consumers"}  # fmt: skip
    assert consumers == {(("queue", "default"),): 0, (("queue", "actions"),): 0,
                         (("queue", "notifications"),): 1}  # fmt: skip


def test_a_broker_that_does_not_answer_leaves_queue_depth_out(client):
    from config.celery import app as celery_app

    old = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        samples = scrape(client)
    finally:
        celery_app.conf.broker_url = old
    assert not any(name == "console_queue_depth" for name, _ in samples)
    assert ("console_workers_alive", ()) in samples  # the rest still answers


def test_metrics_token_when_set(client, settings):
    settings.METRICS_TOKEN = "scrape-secret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
    scrape(client, HTTP_AUTHORIZATION="Bearer scrape-secret")


def test_metrics_answer_a_pod_ip_host_and_skip_the_https_redirect(settings):
    """Prometheus scrapes http://<pod IP>:8000/metrics: neither ALLOWED_HOSTS nor the
    HTTPS redirect may turn it away (POD_IP comes from the downward API)."""
    from django.test import Client

    settings.ALLOWED_HOSTS = ["console.example.com", "10.1.2.3"]
    settings.SECURE_SSL_REDIRECT = True
    response = Client().get("/metrics", HTTP_HOST="10.1.2.3:8000")
    assert response.status_code == 200


def test_pod_ip_from_the_downward_api_is_an_allowed_host(tmp_path):
    from tests.unit.console.test_security_settings import production, run_manage

    show = "from django.conf import settings as s; print(s.ALLOWED_HOSTS)"
    done = run_manage(tmp_path, "shell", "-c", show, **production(POD_IP="10.1.2.3"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['console.example.internal', '10.1.2.3']"
