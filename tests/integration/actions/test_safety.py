"""The safety contract under stress, with real processes: parallel requests make one run,
a 409 from a concurrent writer is re-read and retried, an unreachable API fails the run
with the reason, and a worker killed mid-write does not apply the change twice."""

import os
import signal
import threading

import psutil
import pytest
from django.db import connection

from actions import services
from actions.models import ActionRun
from console import roles
from console.errors import DomainError
from tests.factories import IncidentFactory
from tests.helpers import free_port
from tests.integration.actions.conftest import FAST, NS, eventually, key, wait_run

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
]
SCALE = {"namespace": NS, "lws": "vllm-chat", "replicas_delta": 2}


@pytest.fixture
def rita(make_user):
    return make_user("rita", roles.RESPONDER)


def parallel(n, call):
    """Run `call(i)` in n threads at once, each with its own database connection."""
    barrier, results = threading.Barrier(n), [None] * n

    def one(i):
        try:
            barrier.wait()
            results[i] = call(i)
        except Exception as exc:
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_a_double_click_and_concurrent_requests_make_one_run(cluster, rita, make_user):
    incident = IncidentFactory(severity="SEV3")
    same = key("dbl")
    results = parallel(
        4,
        lambda i: (
            services.action_run_request(
                incident_id=incident.pk,
                actor=rita,
                kind="scale_lws",
                params=SCALE,
                idempotency_key=same,
            )[0].pk
        ),
    )
    assert len(set(results)) == 1, results
    assert ActionRun.objects.count() == 1
    others = [make_user(f"user{i}", roles.RESPONDER) for i in range(4)]
    results = parallel(
        4,
        lambda i: services.action_run_request(
            incident_id=incident.pk,
            actor=others[i],
            kind="set_enforce_eager",
            params={"namespace": NS, "lws": "vllm-chat", "enabled": True},
            idempotency_key=key(f"u{i}"),
        ),
    )
    busy = [r for r in results if isinstance(r, DomainError)]
    assert len(busy) == 4, results
    assert all(r.code == "busy" for r in busy)
    assert ActionRun.objects.count() == 1


def test_a_conflict_from_a_concurrent_writer_is_re_read_and_retried(cluster, worker, rita):
    # Just before our write lands, "an autoscaler" sets replicas to 5: our write carries a
    # stale resourceVersion and gets a real 409; the worker re-reads and re-plans (5 + 2).
    cluster.fault(
        method="PATCH",
        path="leaderworkersets/vllm-chat",
        action="bump",
        resource="leaderworkersets",
        namespace=NS,
        name="vllm-chat",
        patch={"spec": {"replicas": 5}},
        times=1,
    )
    incident = IncidentFactory(severity="SEV3")
    run, _created = services.action_run_request(
        incident_id=incident.pk, actor=rita, kind="scale_lws", params=SCALE, idempotency_key=key()
    )
    run = wait_run(run.pk, "succeeded", "failed")
    assert run.status == "succeeded", run.error
    assert cluster.lws()["spec"]["replicas"] == 7
    messages = [e.message for e in run.events.all()]
    assert any(m.startswith("Conflict:") for m in messages), messages


def test_an_unreachable_api_fails_the_run_with_the_reason(cluster, start_worker, rita, tmp_path):
    dead = tmp_path / "dead-kubeconfig"
    dead.write_text(
        cluster.kubeconfig.read_text().replace(
            cluster.url.replace("http://", "https://"), f"https://127.0.0.1:{free_port()}"
        )
    )
    start_worker({"KUBECONFIG": str(dead), **FAST})
    incident = IncidentFactory(severity="SEV3")
    run, _created = services.action_run_request(
        incident_id=incident.pk, actor=rita, kind="scale_lws", params=SCALE, idempotency_key=key()
    )
    run = wait_run(run.pk, "failed", "succeeded")
    assert run.status == "failed"
    assert "after 3 attempts" in run.error
    assert run.error_code == "transient"
    assert cluster.lws()["spec"]["replicas"] == 4  # nothing changed
    retries = [e for e in run.events.all() if e.message.startswith("Retrying")]
    assert len(retries) == 2


def test_server_errors_are_retried_then_succeed(cluster, worker, rita):
    cluster.fault(
        method="PATCH", path="leaderworkersets/vllm-chat", action="error", status=503, times=2
    )
    incident = IncidentFactory(severity="SEV3")
    run, _created = services.action_run_request(
        incident_id=incident.pk, actor=rita, kind="scale_lws", params=SCALE, idempotency_key=key()
    )
    run = wait_run(run.pk, "succeeded", "failed")
    assert run.status == "succeeded", run.error
    assert cluster.lws()["spec"]["replicas"] == 6


def test_a_worker_killed_mid_write_does_not_apply_twice(cluster, start_worker, rita):
    # The write lands, then the answer is held back long enough to SIGKILL the worker's
    # child process. Celery re-queues the task (acks_late + reject_on_worker_lost); the
    # next child finds the run claimed by a dead pid, sees the write landed, verifies and
    # finishes: replicas 6, not 8, and exactly one write in the simulator's history.
    worker = start_worker(
        {"KUBECONFIG": str(cluster.kubeconfig), **FAST, "ACTIONS_K8S_TIMEOUT_SECONDS": "30"}
    )
    cluster.fault(
        method="PATCH", path="leaderworkersets/vllm-chat", action="delay", seconds=15, times=1
    )
    incident = IncidentFactory(severity="SEV3")
    run, _created = services.action_run_request(
        incident_id=incident.pk, actor=rita, kind="scale_lws", params=SCALE, idempotency_key=key()
    )
    eventually(
        lambda: cluster.lws()["spec"]["replicas"] == 6, what="the write to land at the simulator"
    )
    children = psutil.Process(worker.pid).children()
    assert children, "no pool child to kill"
    for child in children:
        os.kill(child.pid, signal.SIGKILL)
    run = wait_run(run.pk, "succeeded", "failed", timeout=90)
    assert run.status == "succeeded", run.error
    assert run.attempts == 2
    assert "landed" in run.events.last().message
    assert cluster.lws()["spec"]["replicas"] == 6
    writes = [c for c in cluster.history("leaderworkersets", "vllm-chat") if c["verb"] != "status"]
    assert len([c for c in writes if "console-worker" in c["actor"]]) == 1, writes
