"""Exactly once under faults (issue 26): a worker killed in the middle of a step, several
workers ticking at once, beat or the broker away for a minute, and the database
connection cut mid-tick. No page is lost, none is made twice (its key: incident,
episode, round, loop, step and recipient), the late ones say how late, and once the
engine runs again the steps are on time.

PostgreSQL: real row locks (SKIP LOCKED), a real child process killed with SIGKILL while
its transaction is open, and a backend terminated by pg_terminate_backend. The services
are the unit of idempotency (the tasks only call them); `now` is passed where a test
states a moment, so nothing here measures the wall clock.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import Error, connection, connections
from django.utils import timezone

from incidents.models import TimelineEvent
from pager.escalation import services
from pager.models import Escalation, EscalationState, Page, StepAction
from tests.factories import IncidentFactory
from tests.integration.conftest import database_url
from tests.unit.pager.test_escalation_engine import default_team, person, policy_with

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[3]
WAIT = 5  # minutes between the two steps


@pytest.fixture(autouse=True)
def _postgres(require_postgres):
    pass


@pytest.fixture
def people():
    return {"alice": person("alice", "ntfy", "sms"), "bob": person("bob", "email")}


@pytest.fixture
def policy(people):
    return policy_with(
        {"action": StepAction.PAGE_USER, "user": people["alice"], "wait_minutes": WAIT},
        {"action": StepAction.PAGE_USER, "user": people["bob"]},
        team=default_team(),
    )


def due_escalations(policy, n: int, *, due_at) -> list[Escalation]:
    """`n` open incidents whose escalation's first step has been due since `due_at`."""
    made = []
    for _ in range(n):
        incident = IncidentFactory(triggered_at=due_at)
        made.append(
            Escalation.objects.create(
                incident=incident,
                episode=0,
                team=policy.team,
                policy=policy,
                state=EscalationState.ACTIVE,
                next_due_at=due_at,
                started_at=due_at,
            )
        )
    return made


def assert_each_page_once(escalations, people, *, step: int) -> None:
    """Every escalation paged its step's person exactly once: one row with the key and
    one timeline entry for it (a step run twice would show as a second entry)."""
    user = people["alice"] if step == 1 else people["bob"]
    for escalation in escalations:
        key = f"{escalation.incident_id}:0:0:0:{step}:u{user.pk}"
        assert Page.objects.filter(key=key).count() == 1, key
        paged = TimelineEvent.objects.filter(
            incident_id=escalation.incident_id,
            kind="page",
            payload__what="paged",
            payload__step=step,
        )
        assert paged.count() == 1, escalation.incident_id


def terminate(pid: int) -> None:
    """Cut a backend from outside, as a failover does, and wait until it is gone."""
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or "127.0.0.1", port=s["PORT"] or 5432, user=s["USER"] or "postgres",
        dbname=s["NAME"], autocommit=True, connect_timeout=5,
    ) as other:  # fmt: skip
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        backend_gone(other, pid)


def backend_gone(other: psycopg.Connection, pid: int) -> None:
    deadline = time.monotonic() + 30
    while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
        assert time.monotonic() < deadline, f"backend {pid} did not go"
        time.sleep(0.05)  # poll interval


# --- a worker killed in the middle of a step ------------------------------------------------
CHILD = """
import sys, time
import django
django.setup()
from django.db import connection
from pager.escalation import services

def hold_after_the_page_insert(execute, sql, params, many, context):
    result = execute(sql, params, many, context)
    if sql.startswith('INSERT INTO "pager_page"'):
        # The page row is written, the transaction is open: say so and wait for SIGKILL.
        print("inserted", connection.connection.info.backend_pid, flush=True)
        time.sleep(600)
    return result

with connection.execute_wrapper(hold_after_the_page_insert):
    services.escalation_advance(escalation_id=int(sys.argv[1]))
print("committed", flush=True)
"""


def test_a_worker_killed_mid_step_leaves_nothing_and_the_next_tick_pages_once(
    policy, people, tmp_path
):
    [escalation] = due_escalations(policy, 1, due_at=timezone.now() - timedelta(seconds=1))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "SECRET_KEY": os.environ["SECRET_KEY"],
        "ALERTMANAGER_TOKEN": "test-alertmanager-token",
        "VAR_DIR": str(tmp_path),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(escalation.pk)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout], daemon=True).start()
    try:
        while True:
            line = lines.get(timeout=120)  # the child's Django start and its step
            if line.startswith(("inserted", "committed", "Traceback")):
                break
        assert line.startswith("inserted"), line + "".join(lines.queue)
        backend = int(line.split()[1])
        # Mid-step: the row is invisible to others, and the escalation is locked (a
        # second worker skips it rather than waiting or paging too).
        assert not Page.objects.exists()
        assert services.escalation_advance(escalation_id=escalation.pk) == []
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    with psycopg.connect(database_url(), autocommit=True) as other:
        backend_gone(other, backend)  # PostgreSQL rolled the open transaction back

    assert not Page.objects.exists()
    assert services.escalations_tick() == 1
    assert_each_page_once([escalation], people, step=1)
    escalation.refresh_from_db()
    assert escalation.step_index == 1


# --- two (or more) workers ------------------------------------------------------------------
def test_workers_ticking_at_once_make_each_page_once(policy, people):
    now = timezone.now()
    due_escalations(policy, 20, due_at=now - timedelta(seconds=1))
    # And incidents whose start task was lost: every tick tries to start them.
    lost = [IncidentFactory(triggered_at=now - timedelta(seconds=30)) for _ in range(5)]
    workers, counts, errors = 4, [], []
    barrier = threading.Barrier(workers)

    def worker() -> None:
        try:
            barrier.wait(timeout=30)
            counts.append(services.escalations_tick())
        except Exception as exc:  # reported below, with the others
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    # Every escalation was taken by some worker (a start by one and its first step by
    # another count twice: the numbers say what each tick did, not what it made).
    assert sum(counts) >= 25, counts
    every = list(Escalation.objects.all())
    assert len(every) == 25
    assert_each_page_once(every, people, step=1)
    assert Page.objects.count() == 25
    for incident in lost:
        started = TimelineEvent.objects.filter(incident=incident, payload__what="started")
        assert started.count() == 1


# --- beat restarting, the broker down for a minute -------------------------------------------
def test_steps_left_due_for_a_minute_are_made_late_and_say_so_then_run_on_time(policy, people):
    recovered = timezone.now()
    escalations = due_escalations(policy, 3, due_at=recovered - timedelta(seconds=60))
    # Opened during the outage: its start task never reached a worker.
    lost_start = IncidentFactory(triggered_at=recovered - timedelta(seconds=45))

    assert services.escalations_tick(now=recovered) == 4
    assert_each_page_once(escalations, people, step=1)
    for page in Page.objects.filter(incident_id__in=[e.incident_id for e in escalations]):
        assert page.late_seconds == 60
        assert page.due_at == recovered - timedelta(seconds=60)
    assert Page.objects.get(incident=lost_start).late_seconds == 45
    said = TimelineEvent.objects.filter(kind="page", payload__what="paged").values_list(
        "message", flat=True
    )
    assert sorted(said) == sorted(
        ["Paged alice (step 1: named in the policy). Sent 60s late (the escalation was not "
         "run on time)."] * 3
        + ["Paged alice (step 1: named in the policy). Sent 45s late (the escalation was not "
           "run on time)."]
    )  # fmt: skip

    # Ticking again as usual (every PAGER_TICK_SECONDS): the next step is on time.
    next_tick = recovered + timedelta(minutes=WAIT, seconds=3)
    assert services.escalations_tick(now=next_tick) == 4
    second = Page.objects.filter(user=people["bob"])
    assert second.count() == 4
    assert all(page.late_seconds <= 10 for page in second)
    assert not any("late" in page_said for page_said in _said_about(people["bob"]))


def _said_about(user) -> list[str]:
    return list(
        TimelineEvent.objects.filter(kind="page", payload__user=user.pk).values_list(
            "message", flat=True
        )
    )


# --- the database failing over mid-tick ------------------------------------------------------
def test_a_connection_cut_mid_tick_fails_that_tick_and_the_next_completes(policy, people):
    escalations = due_escalations(policy, 5, due_at=timezone.now() - timedelta(seconds=1))
    inserts = []

    def cut_at_the_third_escalation(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "pager_page"'):
            inserts.append(sql)
            if len(inserts) == 3:
                terminate(connection.connection.info.backend_pid)
        return execute(sql, params, many, context)

    with pytest.raises(Error), connection.execute_wrapper(cut_at_the_third_escalation):
        services.escalations_tick()
    # The two escalations before the cut committed; the third rolled back whole.
    assert Page.objects.count() == 2
    # What Celery's Django fix-up does between tasks: drop the unusable connection.
    connection.close_if_unusable_or_obsolete()

    assert services.escalations_tick() == 3
    assert_each_page_once(escalations, people, step=1)
    assert Page.objects.count() == 5
