"""Auto-triage (issue #15, item 2): a worker evaluates the runbook's checks when an
incident opens (or its runbook changes) and while it is open, and posts the branch, the
values behind it and the recommended actions to the timeline, again only when they
change; Prometheus down is one entry. Prometheus is a small real HTTP stand-in; the
Celery task (the drain of runbooks/auto_triage/queue.py) is run in-process where the
broker would deliver it. The queue itself: test_auto_triage_queue.py."""

import pytest
from django.core.cache import cache
from django.utils import timezone

from console import roles
from incidents.models import Incident, IncidentStatus, TimelineEvent
from incidents.services import incident_acknowledge, incident_reopen
from runbooks import tasks
from runbooks.auto_triage import evaluation as auto_triage
from runbooks.auto_triage import queue as auto_triage_queue
from runbooks.auto_triage.models import AutoTriageDue
from runbooks.services import runbook_change
from runbooks.timeline_kinds import AUTO_TRIAGE
from tests.factories import IncidentFactory
from tests.helpers import free_port
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus

pytestmark = pytest.mark.django_db
WAKE = {"countdown": auto_triage_queue.WAKE_DELAY_S, "retry": False}  # a drain's wake-up
HTMX = {"HTTP_HX_REQUEST": "true"}
TTFT_ALL_RED = {  # ttft-spike -> "capacity"
    "num_requests_waiting": 25,
    "kv_cache_usage_perc": 0.97,
    "num_preemptions_total": 1.5,
    "llm_gateway_requests_total": 2.1,
    "inter_token_latency_seconds_bucket": 0.03,
}
TTFT_QUEUE_ONLY = {"num_requests_waiting": 25}  # -> "queueing"


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(TTFT_ALL_RED)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    settings.TRIAGE_CACHE_SECONDS = 10
    yield fake
    fake.close()


@pytest.fixture
def worker(monkeypatch):
    """Where the broker would deliver auto_triage_drain: run it here. Returns the
    incidents the drains evaluated, in order."""
    evaluated: list[int] = []
    real = auto_triage_queue.auto_triage_run_many

    def run_many(*, incident_ids, deadline=None):
        evaluated.extend(incident_ids)
        return real(incident_ids=incident_ids, deadline=deadline)

    def deliver(*args, **options):
        assert options == WAKE
        tasks.auto_triage_drain()

    monkeypatch.setattr(auto_triage_queue, "auto_triage_run_many", run_many)
    monkeypatch.setattr(tasks.auto_triage_drain, "apply_async", deliver)
    return evaluated


def due() -> list[int]:
    return list(AutoTriageDue.objects.order_by("incident_id").values_list("incident_id", flat=True))


def posts(incident: Incident) -> list[TimelineEvent]:
    return list(TimelineEvent.objects.filter(incident=incident, kind=AUTO_TRIAGE).order_by("id"))


def open_incident(post_webhook, capture, **kw) -> Incident:
    with capture(execute=True):  # the commit: timeline_appended, then the enqueue
        r = post_webhook(notification([alert(**kw)]))
    assert r.status_code == 200, r.content
    return Incident.objects.get(pk=r.json()["incidents"][0])


def evaluate_again(prom, answers) -> None:
    prom.answers = answers
    cache.clear()  # past TRIAGE_CACHE_SECONDS


def test_an_opened_incident_is_triaged_and_the_first_page_view_shows_it(
    prom, worker, post_webhook, django_capture_on_commit_callbacks, client, make_user
):
    incident = open_incident(post_webhook, django_capture_on_commit_callbacks)
    assert worker == [incident.pk]
    (post,) = posts(incident)
    assert post.source == "auto-triage"
    assert post.actor is None
    assert post.payload["runbook"] == "ttft-spike"
    assert post.payload["branch"] == "capacity"
    assert {"check": "waiting_queue", "state": "firing", "value": 25.0} in post.payload["because"]
    assert [a["kind"] for a in post.payload["recommended"]] == [
        "scale_lws",
        "update_gateway_limits",
    ]
    assert post.payload["recommended"][0]["params"] == {
        "namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2,
    }  # fmt: skip
    lines = post.message.splitlines()
    assert lines[0].startswith("Auto-triage (ttft-spike): capacity — ")
    assert "waiting_queue firing (25" in lines[1]
    assert lines[2].startswith("Recommended: Add two groups to the pool [scale_lws namespace=")

    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert "Auto-triage (ttft-spike): capacity" in page  # on the timeline
    triage = client.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX).content.decode()
    assert 'data-testid="auto-triage"' in triage
    assert "Auto-triage posted to the timeline at" in triage
    assert '<strong class="mono">capacity</strong>' in triage


def test_the_same_branch_posts_once_and_another_branch_posts_again(
    prom, worker, post_webhook, django_capture_on_commit_callbacks
):
    incident = open_incident(post_webhook, django_capture_on_commit_callbacks)
    for _ in range(3):
        evaluate_again(prom, TTFT_ALL_RED)
        assert auto_triage.auto_triage_run(incident_id=incident.pk) is None
    evaluate_again(prom, TTFT_QUEUE_ONLY)
    assert auto_triage.auto_triage_run(incident_id=incident.pk) is not None
    assert [p.payload["branch"] for p in posts(incident)] == ["capacity", "queueing"]
    evaluate_again(prom, TTFT_ALL_RED)
    auto_triage.auto_triage_run(incident_id=incident.pk)
    assert [p.payload["branch"] for p in posts(incident)] == ["capacity", "queueing", "capacity"]


def test_prometheus_down_is_one_entry_and_its_return_posts_the_branch(
    prom, settings, worker, post_webhook, django_capture_on_commit_callbacks
):
    up = settings.PROMETHEUS_URL
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    incident = open_incident(post_webhook, django_capture_on_commit_callbacks)
    for _ in range(3):
        cache.clear()
        auto_triage.auto_triage_run(incident_id=incident.pk)
    (down,) = posts(incident)
    assert {k: v for k, v in down.payload.items() if k != "msg"} == {
        "runbook": "ttft-spike", "branch": "",
        "prometheus_error": f"Prometheus at {settings.PROMETHEUS_URL} refused the connection",
    }  # fmt: skip
    assert "could not ask Prometheus" in down.message
    assert "refused the connection" in down.message

    settings.PROMETHEUS_URL = up
    cache.clear()
    auto_triage.auto_triage_run(incident_id=incident.pk)
    assert [p.payload["branch"] for p in posts(incident)] == ["", "capacity"]


def test_a_runbook_change_triages_with_the_new_runbook(
    prom, worker, post_webhook, django_capture_on_commit_callbacks, make_user
):
    incident = open_incident(post_webhook, django_capture_on_commit_callbacks)
    commander = make_user("cora", roles.COMMANDER)
    with django_capture_on_commit_callbacks(execute=True):
        runbook_change(incident_id=incident.pk, actor=commander, slug="long-context-kv")
    assert worker == [incident.pk, incident.pk]
    assert [p.payload["runbook"] for p in posts(incident)] == ["ttft-spike", "long-context-kv"]


def test_a_reopened_incident_is_triaged_again_other_moves_are_not(
    prom, worker, post_webhook, django_capture_on_commit_callbacks, make_user
):
    incident = open_incident(post_webhook, django_capture_on_commit_callbacks)
    commander = make_user("cora", roles.COMMANDER)
    with django_capture_on_commit_callbacks(execute=True):
        incident_acknowledge(incident_id=incident.pk, actor=commander)
    assert worker == [incident.pk], "an acknowledgement is no reason to triage again"
    Incident.objects.filter(pk=incident.pk).update(
        status=IncidentStatus.RESOLVED, resolved_at=timezone.now()
    )
    with django_capture_on_commit_callbacks(execute=True):
        incident_reopen(incident_id=incident.pk, actor=commander, reason="it is back")
    assert worker == [incident.pk, incident.pk]


def test_a_poll_that_sees_a_new_branch_asks_once_for_a_post(
    prom, worker, post_webhook, django_capture_on_commit_callbacks, client, make_user, monkeypatch
):
    incident = open_incident(post_webhook, django_capture_on_commit_callbacks)
    client.force_login(make_user("vera", roles.VIEWER))
    url = f"/runbooks/incidents/{incident.pk}/triage/"
    with django_capture_on_commit_callbacks(execute=True):
        client.get(url, **HTMX)  # the branch the timeline has: nothing asked
    assert worker == [incident.pk]

    evaluate_again(prom, TTFT_QUEUE_ONLY)
    woken: list[object] = []  # the worker is busy: the requests wait in the queue
    monkeypatch.setattr(tasks.auto_triage_drain, "apply_async", lambda **kw: woken.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        first = client.get(url, **HTMX).content.decode()
        client.get(url, **HTMX)
        client.get(f"/api/v1/incidents/{incident.pk}/triage/")
    assert len(woken) == 1, "every poll asked again"
    assert due() == [incident.pk]
    assert 'The checks now say <span class="mono">queueing</span>' in first

    tasks.auto_triage_drain()  # the worker gets to it
    assert due() == []
    assert [p.payload["branch"] for p in posts(incident)] == ["capacity", "queueing"]
    assert '<strong class="mono">queueing</strong>' in client.get(url, **HTMX).content.decode()


def test_nothing_is_posted_for_a_resolved_incident_or_one_without_a_runbook(prom):
    resolved = IncidentFactory(status=IncidentStatus.RESOLVED, runbook="ttft-spike")
    assert auto_triage.auto_triage_run(incident_id=resolved.pk) is None
    unknown = IncidentFactory(runbook="")
    assert auto_triage.auto_triage_run(incident_id=unknown.pk) is None
    assert not TimelineEvent.objects.filter(kind=AUTO_TRIAGE).exists()
    assert not prom.requests


def test_the_sweep_queues_open_incidents_newest_first_and_bounded(
    monkeypatch, django_capture_on_commit_callbacks
):
    woken: list[object] = []
    monkeypatch.setattr(tasks.auto_triage_drain, "apply_async", lambda **kw: woken.append(kw))
    monkeypatch.setattr(auto_triage_queue, "SWEEP_MAX", 3)
    opened = [IncidentFactory() for _ in range(4)]
    IncidentFactory(status=IncidentStatus.RESOLVED)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.auto_triage_sweep() == 3
    newest_first = sorted(opened, key=lambda i: (i.triggered_at, i.pk), reverse=True)
    assert due() == sorted(i.pk for i in newest_first[:3])
    assert woken == [WAKE]
