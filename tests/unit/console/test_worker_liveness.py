"""Worker liveness as people see it: /readyz names a missing worker, every console page
carries a banner saying how long no worker has been seen and how many runs wait, and a
queued run's card says nobody will pick it up."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from actions import services
from console import roles
from console.context_processors import console as console_context
from console.errors import DomainError
from console.liveness.selectors import worker_liveness_get
from console.liveness.services import worker_heartbeat_record, worker_heartbeat_stop
from console.models import WorkerHeartbeat
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_kubernetes(settings, monkeypatch):
    settings.KUBECONFIG = ""
    settings.WORKER_HEARTBEAT_STALE_SECONDS = 60
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def beat(hostname="worker-1@pod", *, ago: timedelta | None = None, queues=None):
    worker_heartbeat_record(hostname=hostname, pid=123, starting=True, queues=queues)
    if ago is not None:
        WorkerHeartbeat.objects.filter(hostname=hostname).update(last_seen=timezone.now() - ago)


def queue_runs(user, n: int):
    incident = IncidentFactory(severity="SEV3")
    return [
        services.action_run_request(
            incident_id=incident.pk,
            actor=user,
            kind="scale_lws",
            params={"namespace": "llm-serving", "lws": f"vllm-chat-{i}", "replicas_delta": 1},
            idempotency_key=f"liveness-key-{i:02d}",
        )[0]
        for i in range(n)
    ]


@pytest.fixture
def rita(make_user):
    client = Client()
    client.user = make_user("rita", roles.RESPONDER)
    client.force_login(client.user)
    return client


# --- /readyz -------------------------------------------------------------------------


def test_readyz_with_no_worker_ever_seen_stays_200_and_names_it(client):
    r = client.get("/readyz")
    assert r.status_code == 200  # web pods stay in the Service; see docs
    body = r.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["worker"] == "No worker has been seen yet"
    assert body["checks"]["queues"] == "ok"  # nothing known beyond "no worker"
    assert body["workers"] == {
        "alive": 0, "last_seen": None, "stale_after_seconds": 60,
        "queues": {"default": 0, "actions": 0, "notifications": 0},
    }  # fmt: skip


def test_readyz_with_a_fresh_heartbeat_is_ok(client):
    beat()
    body = client.get("/readyz").json()
    assert body["status"] == "ok"
    assert body["checks"]["worker"] == "ok"
    assert body["workers"]["alive"] == 1
    assert client.get("/readyz/worker").status_code == 200


def test_readyz_with_a_stale_heartbeat_says_for_how_long(client):
    beat(ago=timedelta(minutes=5, seconds=10))
    r = client.get("/readyz")
    assert r.status_code == 200
    assert r.json()["status"] == "degraded"
    assert r.json()["checks"]["worker"] == "No worker has been seen for 5 minutes"
    worker = client.get("/readyz/worker")
    assert worker.status_code == 503
    assert worker.json()["problems"] == {"worker": "No worker has been seen for 5 minutes"}


def test_one_live_worker_among_dead_ones_is_enough(client):
    beat("old@pod-a", ago=timedelta(hours=2))
    beat("new@pod-b")
    assert client.get("/readyz").json()["workers"]["alive"] == 1
    assert client.get("/readyz/worker").status_code == 200


def test_a_cleanly_stopped_worker_stops_counting_at_once(client):
    beat()
    worker_heartbeat_stop(hostname="worker-1@pod")
    assert client.get("/readyz/worker").status_code == 503


# --- the actions worker and the notifier ------------------------------------------------
ACTIONS_WORKER = ("default", "actions")
NOTIFIER = ("notifications",)


def test_a_live_notifier_does_not_hide_a_dead_actions_worker(client, rita):
    queue_runs(rita.user, 1)
    beat("celery@pod-a", queues=ACTIONS_WORKER, ago=timedelta(minutes=5, seconds=3))
    beat("notifications@pod-b", queues=NOTIFIER)
    body = client.get("/readyz").json()
    assert body["status"] == "degraded"
    assert body["checks"]["worker"] == "No worker has been seen for 5 minutes"
    assert body["checks"]["queues"] == "ok"
    assert body["workers"]["alive"] == 0  # workers that run actions
    assert body["workers"]["queues"] == {"default": 0, "actions": 0, "notifications": 1}
    worker = client.get("/readyz/worker")
    assert worker.status_code == 503
    assert worker.json()["problems"] == {"worker": "No worker has been seen for 5 minutes"}
    assert banner_of(rita.get("/").content.decode()) == (
        "No worker has been seen for 5 minutes; 1 action run is waiting."
    )


def test_a_stale_notifier_is_reported_beside_a_live_actions_worker(client, rita):
    beat("celery@pod-a", queues=ACTIONS_WORKER)
    beat("notifications@pod-b", queues=NOTIFIER, ago=timedelta(minutes=3, seconds=2))
    body = client.get("/readyz").json()
    assert body["status"] == "degraded"
    assert body["checks"]["worker"] == "ok"
    stale = "No worker for the notifications queue has been seen for 3 minutes"
    assert body["checks"]["queues"] == stale
    assert body["workers"]["alive"] == 1
    worker = client.get("/readyz/worker")
    assert worker.status_code == 503
    assert worker.json()["problems"] == {"queues": stale}
    assert banner_of(rita.get("/").content.decode()) == f"{stale}."
    # Back: nothing to report.
    beat("notifications@pod-b", queues=NOTIFIER)
    assert client.get("/readyz").json()["status"] == "ok"
    assert client.get("/readyz/worker").status_code == 200
    assert banner_of(rita.get("/").content.decode()) is None


def test_a_notifier_never_started_is_named(client):
    beat("celery@pod-a", queues=ACTIONS_WORKER)
    body = client.get("/readyz").json()
    assert body["checks"]["queues"] == "No worker for the notifications queue has been seen yet"


def test_one_worker_taking_every_queue_is_reported_once(client):
    """A single worker (a test stack; rows from before queues were recorded): its silence
    is the worker problem, not one more per queue."""
    beat("celery@pod-a", queues=("default", "actions", "notifications"), ago=timedelta(minutes=2))
    beat("old@pod-b", ago=timedelta(minutes=3))  # queues not recorded: every queue
    body = client.get("/readyz").json()
    assert body["checks"] == {"database": "ok", "broker": "ok", "queues": "ok",
                              "worker": "No worker has been seen for 2 minutes"}  # fmt: skip
    assert client.get("/readyz/worker").json()["problems"] == {
        "worker": "No worker has been seen for 2 minutes"
    }


def test_queue_names_are_matched_whole():
    beat("celery@pod-a", queues=("default", "actions"))
    beat("n@pod-b", queues=("notifications-old",))
    liveness = worker_liveness_get()
    assert [(q.name, q.alive) for q in liveness.queues] == [
        ("default", 1), ("actions", 1), ("notifications", 0)
    ]  # fmt: skip


def test_a_heartbeat_with_an_undeclared_queue_list_is_refused():
    with pytest.raises(DomainError, match="queue"):
        worker_heartbeat_record(hostname="w@pod", pid=1, queues=("a" * 300,))


# --- banner and run card ---------------------------------------------------------------


def banner_of(html: str) -> str | None:
    marker = 'data-testid="worker-banner"'
    if marker not in html:
        return None
    return html.split(marker, 1)[1].split(">", 1)[1].split("</div>", 1)[0].strip()


def test_banner_names_the_silence_and_the_waiting_runs(rita):
    queue_runs(rita.user, 2)
    beat(ago=timedelta(minutes=3, seconds=5))
    html = rita.get("/").content.decode()
    assert banner_of(html) == ("No worker has been seen for 3 minutes; 2 action runs are waiting.")
    beat()  # the worker is back
    assert banner_of(rita.get("/").content.decode()) is None


def test_banner_when_no_worker_was_ever_seen(rita):
    queue_runs(rita.user, 1)
    assert banner_of(rita.get("/runbooks/").content.decode()) == (
        "No worker has been seen yet; 1 action run is waiting."
    )


def test_no_banner_for_anonymous_visitors(client):
    assert banner_of(client.get("/login/").content.decode()) is None


def test_banner_costs_one_query_with_a_worker_and_two_without(rita):
    request = RequestFactory().get("/")
    request.user = rita.user
    beat()
    context = console_context(request)
    with CaptureQueriesContext(connection) as fresh:
        assert not context["worker_banner"]
    queue_runs(rita.user, 3)
    WorkerHeartbeat.objects.update(last_seen=timezone.now() - timedelta(minutes=2))
    context = console_context(request)
    with CaptureQueriesContext(connection) as stale:
        assert "3 action runs are waiting" in str(context["worker_banner"])
        assert context["worker_liveness"].alive == 0  # the page's other users: no new query
    assert (len(fresh), len(stale)) == (1, 2)


def test_queued_card_says_no_worker_is_alive(rita):
    (run,) = queue_runs(rita.user, 1)
    card = f"/runbooks/actions/{run.pk}/card/"
    beat(ago=timedelta(minutes=2))
    html = rita.get(card, HTTP_HX_REQUEST="true").content.decode()
    assert "No worker is alive to run it" in html
    assert "Queued for a worker" not in html
    beat()
    html = rita.get(card, HTTP_HX_REQUEST="true").content.decode()
    assert "Queued for a worker" in html
    assert "No worker is alive" not in html
