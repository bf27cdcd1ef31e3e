"""The console's own Prometheus metrics, served at /metrics.

prometheus-client, not django-prometheus: it is already a pinned dependency (the
simulator's /metrics), and django-prometheus's per-view and per-model series would add
cardinality nobody alerts on. What we alert on is a handful of series named here.

Two kinds of series:
- events counted where they happen (webhook outcome, ingest latency, action-run outcome),
  in whichever process handles them. Under gunicorn or Celery's prefork pool, set
  PROMETHEUS_MULTIPROC_DIR (an empty, writable directory per pod): each process then
  writes its own file and a scrape adds them up (prometheus_client multiprocess mode).
  The worker serves them on WORKER_METRICS_PORT (console/metrics/worker.py).
- state read at scrape time (queue depth from the broker, worker heartbeat from the
  database). Every web replica reports the same values: aggregate with max(), not sum().
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from functools import wraps

from celery import current_app
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu.exceptions import ChannelError
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from console.liveness.selectors import worker_liveness_get
from console.queues import QUEUE_NAMES

log = logging.getLogger(__name__)

# Counters and histograms only: they need no cleanup when a gunicorn worker or Celery
# child exits (a gauge in multiprocess mode would).
OWN = CollectorRegistry()

# What the webhook answered, by meaning (Alertmanager retries 5xx and drops the rest).
WEBHOOK_OUTCOMES = {
    200: "ingested",
    400: "rejected",
    401: "unauthorized",
    405: "bad_method",
    413: "too_large",
    500: "error",
    503: "unavailable",
}
WEBHOOK_REQUESTS = Counter(
    "console_webhook_requests",
    "Alertmanager webhook bodies received, by outcome.",
    ["outcome"],
    registry=OWN,
)
WEBHOOK_ALERTS = Counter(
    "console_webhook_alerts",
    "Alerts in the webhook bodies the console stored (outcome=ingested).",
    ["outcome"],
    registry=OWN,
)
INGEST_SECONDS = Histogram(
    "console_ingest_duration_seconds",
    "Time to read, parse and store one Alertmanager webhook body that was ingested.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=OWN,
)
ACTION_RUNS = Counter(
    "console_action_runs",
    "Remediation action runs that reached a final status, by kind and outcome.",
    ["kind", "outcome"],
    registry=OWN,
)


def webhook_observed(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Count the webhook's outcome and time the bodies it ingests (one decorator on the
    view, so every return path is counted once)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        started = time.perf_counter()
        response = view(request, *args, **kwargs)
        outcome = WEBHOOK_OUTCOMES.get(response.status_code, f"http_{response.status_code}")
        WEBHOOK_REQUESTS.labels(outcome).inc()
        if response.status_code == 200:
            INGEST_SECONDS.observe(time.perf_counter() - started)
            WEBHOOK_ALERTS.labels("ingested").inc(_received(response))
        return response

    return wrapper


def _received(response: HttpResponse) -> int:
    try:
        return int(json.loads(response.content).get("received") or 0)
    except (ValueError, TypeError, AttributeError):
        return 0


def action_run_ended(kind: str, outcome: str) -> None:
    """A run reached a final status. Counted when the status is written, not on commit:
    tests read the on-commit callbacks as "what was enqueued", and a final move whose
    transaction then rolls back is rare enough not to skew a rate."""
    ACTION_RUNS.labels(kind, outcome).inc()


# --- state read at scrape time ---------------------------------------------------------
class StateCollector(Collector):
    """Queue depth and worker liveness, read when Prometheus scrapes. A source that does
    not answer leaves its series out (the alert rules treat absence as their own case)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self._workers()
        yield from self._queues()

    def _workers(self) -> Iterator[GaugeMetricFamily]:
        try:
            liveness = worker_liveness_get()
        except Exception:  # database down or not migrated: /readyz says which
            log.warning("metrics: worker liveness unreadable", exc_info=True)
            return
        alive = GaugeMetricFamily(
            "console_workers_alive",
            "Celery workers that run actions whose heartbeat is fresher than "
            "WORKER_HEARTBEAT_STALE_SECONDS (a notifier does not count).",
        )
        alive.add_metric([], liveness.alive)
        yield alive
        consumers = GaugeMetricFamily(
            "console_queue_consumers",
            "Celery workers with a fresh heartbeat that consume a queue.",
            labels=["queue"],
        )
        for queue in liveness.queues:
            consumers.add_metric([queue.name], queue.alive)
        yield consumers
        if liveness.last_seen is not None:
            age = GaugeMetricFamily(
                "console_worker_heartbeat_age_seconds",
                "Seconds since the latest heartbeat of a Celery worker that runs actions.",
            )
            age.add_metric([], max(0.0, (timezone.now() - liveness.last_seen).total_seconds()))
            yield age

    def _queues(self) -> Iterator[GaugeMetricFamily]:
        depth = GaugeMetricFamily(
            "console_queue_depth", "Messages waiting in a Celery queue.", labels=["queue"]
        )
        try:
            # The app config/celery.py makes (Celery's Django fix-up sets it as the default
            # for every thread): its broker, without importing config.
            with current_app.connection_for_read() as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
                with conn.channel() as channel:
                    for name in QUEUE_NAMES:
                        depth.add_metric([name], _queue_size(channel, name))
        except Exception:  # broker down: /readyz says so; no made-up zero
            log.warning("metrics: broker queue depth unreadable", exc_info=True)
            return
        yield depth


def _queue_size(channel, name: str) -> int:
    try:
        return int(channel.queue_declare(queue=name, passive=True).message_count)
    except ChannelError:  # never declared: no worker has started yet, nothing queued
        return 0


_STATE = StateCollector()
OWN.register(_STATE)  # no describe(): registering reads nothing


def registry() -> CollectorRegistry:
    """This process's series, or every process's in multiprocess mode."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return OWN
    merged = CollectorRegistry()
    MultiProcessCollector(merged)
    merged.register(_STATE)
    return merged


def _token_ok(request: HttpRequest) -> bool:
    expected = settings.METRICS_TOKEN
    if not expected:
        return True
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        presented.strip().encode(), expected.encode()
    )


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text format. With METRICS_TOKEN set, only for `Bearer <token>` (the
    Ingress forwards every path, so /metrics would otherwise be public)."""
    if not _token_ok(request):
        return HttpResponse("missing or wrong bearer token (METRICS_TOKEN)\n", status=401)
    # The classic text format, which every Prometheus reads (Debian's 2.42 included).
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_PLAIN_0_0_4)
