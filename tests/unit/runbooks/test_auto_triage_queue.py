"""Auto-triage's queue (runbooks/auto_triage/queue.py, issue #14): openings are queued as
rows and evaluated in batches by one drain task, with a constant number of queries per
batch; with a shared cache a burst of openings wakes one drain; a drain out of time hands
the rest on. Prometheus is the real HTTP stand-in; the cache is the real Redis where a
shared one is needed (its own key prefix, only its own keys deleted)."""

import os
import uuid
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.models import IncidentStatus, TimelineEvent
from runbooks import prometheus, tasks
from runbooks.auto_triage import evaluation as auto_triage
from runbooks.auto_triage import queue as auto_triage_queue
from runbooks.auto_triage.models import AutoTriageDue
from runbooks.timeline_kinds import AUTO_TRIAGE
from tests.conftest import need_service
from tests.factories import AlertFactory, IncidentFactory
from tests.helpers import free_port, port_open
from tests.prometheus_standin import StandInPrometheus

pytestmark = pytest.mark.django_db
WAKE = {"countdown": auto_triage_queue.WAKE_DELAY_S, "retry": False}  # a drain's wake-up
REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus({"num_requests_waiting": 25, "kv_cache_usage_perc": 0.97})
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    yield fake
    fake.close()


@pytest.fixture
def woken(monkeypatch) -> list[dict]:
    """The drain's wake-ups as the broker would receive them (not run)."""
    sent: list[dict] = []
    monkeypatch.setattr(tasks.auto_triage_drain, "apply_async", lambda **kw: sent.append(kw))
    return sent


@pytest.fixture
def shared_cache(settings):
    """The cache production runs: Redis, shared by every process (own key prefix)."""
    need_service("Redis", port_open("127.0.0.1", 6379), "nothing on 127.0.0.1:6379")
    prefix = f"test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    }
    yield
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=2)
    for key in client.scan_iter(match=f"{prefix}:*", count=500):  # never FLUSHDB: shared db
        client.delete(key)


def opened(n: int) -> list[int]:
    """`n` open incidents, each with a firing alert naming its pool."""
    return [
        AlertFactory(
            labels={"alertname": "VLLMHighTTFT", "namespace": "llm-serving", "lws": f"pool-{i}"},
        ).incident_id
        for i in range(n)
    ]


def due() -> list[int]:
    return list(AutoTriageDue.objects.order_by("incident_id").values_list("incident_id", flat=True))


def posted() -> dict[int, str]:
    events = TimelineEvent.objects.filter(kind=AUTO_TRIAGE)
    return dict(events.values_list("incident_id", "payload__branch"))


def test_one_drain_evaluates_a_burst_with_the_same_queries_for_2_or_20(prom, woken):
    ids = opened(20)
    auto_triage_queue._enqueue(ids[:2])
    with CaptureQueriesContext(connection) as two:
        assert tasks.auto_triage_drain() == 2
    auto_triage_queue._enqueue(ids[2:])
    with CaptureQueriesContext(connection) as eighteen:
        assert tasks.auto_triage_drain() == 18
    assert sorted(posted()) == sorted(ids)
    assert due() == []
    assert len(eighteen) == len(two), [q["sql"][:80] for q in eighteen]


def test_an_incident_asked_for_twice_before_its_turn_is_evaluated_once(prom, woken):
    (pk,) = opened(1)
    auto_triage_queue._enqueue([pk])
    auto_triage_queue._enqueue([pk])
    assert due() == [pk]
    assert tasks.auto_triage_drain() == 1
    assert due() == []
    assert len(posted()) == 1


def test_prometheus_down_is_asked_once_for_a_whole_batch(settings, woken, monkeypatch):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    ids = opened(5)
    auto_triage_queue._enqueue(ids)
    asked: list[str] = []
    real = prometheus.query

    def query(promql: str):  # the real client, counted
        asked.append(promql)
        return real(promql)

    monkeypatch.setattr(prometheus, "query", query)
    assert tasks.auto_triage_drain() == 5
    assert len(asked) == 1, asked
    events = TimelineEvent.objects.filter(kind=AUTO_TRIAGE)
    assert {e.payload["prometheus_error"] for e in events} == {
        f"Prometheus at {settings.PROMETHEUS_URL} refused the connection"
    }


def test_resolved_incidents_are_skipped_and_their_rows_go(prom, woken):
    ids = opened(2)
    resolved = IncidentFactory(status=IncidentStatus.RESOLVED).pk
    auto_triage_queue._enqueue([*ids, resolved])
    assert tasks.auto_triage_drain() == 2
    assert sorted(posted()) == sorted(ids)
    assert due() == []


def test_a_drain_out_of_time_hands_the_rest_to_the_next(prom, woken, monkeypatch):
    ids = opened(3)
    auto_triage_queue._enqueue(ids)
    woken.clear()
    clock = iter([0.0, 1.0, 2.0, 3.0, 99.0, 99.0])  # the third incident is past the budget
    monkeypatch.setattr(auto_triage_queue, "DRAIN_BUDGET_S", 10.0)
    fake = SimpleNamespace(monotonic=lambda: next(clock))
    monkeypatch.setattr(auto_triage_queue, "time", fake)
    monkeypatch.setattr(auto_triage, "time", fake)
    assert tasks.auto_triage_drain() == 2
    assert sorted(posted()) == sorted(ids[:2])
    assert due() == [ids[2]], "the rest is due again"
    assert woken == [WAKE], "and the next drain is woken"


def test_with_a_shared_cache_a_burst_wakes_one_drain_until_it_starts(
    shared_cache, prom, woken, django_capture_on_commit_callbacks
):
    ids = opened(5)
    for pk in ids:
        with django_capture_on_commit_callbacks(execute=True):
            auto_triage_queue.auto_triage_request(incident_ids=[pk])
    assert woken == [WAKE], "one drain is queued for the whole burst"
    assert due() == sorted(ids)

    assert tasks.auto_triage_drain() == 5  # the broker delivers it
    with django_capture_on_commit_callbacks(execute=True):
        auto_triage_queue.auto_triage_request(incident_ids=[ids[0]])
    assert len(woken) == 2, "an opening after the drain started wakes the next one"


def test_with_a_per_process_cache_every_request_wakes_a_drain(prom, woken):
    ids = opened(3)
    for pk in ids:
        auto_triage_queue._enqueue([pk])
    assert len(woken) == 3
    assert tasks.auto_triage_drain() == 3
    assert tasks.auto_triage_drain() == 0, "a drain that finds nothing due ends at once"


def test_a_wake_up_the_broker_refuses_is_not_remembered(shared_cache, monkeypatch):
    def refuse(**kw):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(tasks.auto_triage_drain, "apply_async", refuse)
    (pk,) = opened(1)
    with pytest.raises(ConnectionRefusedError):
        auto_triage_queue._enqueue([pk])
    assert due() == [pk], "the row stays for the next wake-up or the sweep"
    sent: list[dict] = []
    monkeypatch.setattr(tasks.auto_triage_drain, "apply_async", lambda **kw: sent.append(kw))
    auto_triage_queue._enqueue([pk])
    assert sent == [WAKE], "the failed wake-up did not hold the key"
