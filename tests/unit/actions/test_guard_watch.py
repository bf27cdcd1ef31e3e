"""Guarded changes, service side: a succeeded run starts a watch; each evaluation asks a
real HTTP server answering like Prometheus (tests/prometheus_standin.py); a breach requests
the undo through the same service as a person (same approval rules), a change that cannot
be undone pages the commander, and a Prometheus that does not answer undoes nothing.
No Kubernetes here: the undo's preview says "not configured" and the run is recorded."""

from datetime import timedelta
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from actions.guard import services as guard_services
from actions.guard import start
from actions.guard.models import GuardWatch
from actions.models import ActionRun, ActionRunStatus
from console import roles
from incidents.models import TimelineEvent
from tests.factories import AlertFactory, IncidentFactory
from tests.helpers import free_port
from tests.prometheus_standin import StandInPrometheus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
S = ActionRunStatus
HIT = "prefix_cache_hits_total"
ROUTER = {"namespace": "llm-serving", "configmap": "vllm-router-config", "revision": "7"}
HEALTHY = {HIT: 0.82, "code=~": 0.0, "time_to_first_token": 0.8, "format_violations": 0.0}


@pytest.fixture(autouse=True)
def _one_check_counts(settings, monkeypatch):
    """Most tests here are about what a breach does: one breaching check confirms it, and
    no settling period. The confirmation rule is tested with GUARD_CONFIRM_CHECKS=3 at the
    end, settling in test_guard_evidence.py."""
    settings.GUARD_CONFIRM_CHECKS = 1
    timings = start._timings
    monkeypatch.setattr(start, "_timings", lambda g: (*timings(g)[:2], 0))


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(dict(HEALTHY), default=1.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 5  # the machine is shared: no flaky "did not answer"
    yield fake
    fake.close()


@pytest.fixture
def people(make_user):
    return {
        "responder": make_user("rita", roles.RESPONDER),
        "commander": make_user("cara", roles.COMMANDER),
        "viewer": make_user("vic", roles.VIEWER),
    }


def succeeded_run(responder, *, kind="rollback_router_config", params=None, runbook="", **inc):
    incident = IncidentFactory(severity="SEV3", runbook="prefix-cache-drop", **inc)
    AlertFactory(
        incident=incident,
        alertname="VLLMPrefixCacheHitRateDrop",
        labels={"alertname": "VLLMPrefixCacheHitRateDrop", "namespace": "llm-serving",
                "lws": "vllm-chat", "pod": "vllm-chat-0"},
    )  # fmt: skip
    now = timezone.now()
    before = {"resource_version": "5", "state": {"data": {"routing_logic": "prefixaware"}}}
    desired = {"data": {"routing_logic": "roundrobin"}}
    if kind == "restart_lws_group":
        before = {"resource_version": "5", "state": {"leader_uid": "u1"}}
        desired = {"leader_uid": None}
    run = ActionRun.objects.create(
        incident=incident,
        kind=kind,
        target=f"configmap/llm-serving/vllm-router-config/{now.timestamp()}",
        params=params or ROUTER,
        idempotency_key=f"run-{now.timestamp()}",
        status=S.SUCCEEDED,
        requested_by=responder,
        requested_at=now,
        started_at=now - timedelta(seconds=5),
        finished_at=now,
        before=before,
        plan={"desired": desired, "diff": "", "summary": "the change", "warnings": []},
        runbook=runbook,
    )
    return run, guard_services.guard_watch_start(run=run)


def later(watch: GuardWatch, *, end: bool = False) -> None:
    """Time passes: the interval since the last check (and the window, with end=True)."""
    past = timezone.now() - timedelta(minutes=5)
    fields = {"last_evaluated_at": past} | ({"ends_at": past} if end else {})
    GuardWatch.objects.filter(pk=watch.pk).update(**fields)
    cache.clear()  # the Prometheus answers are cached per step


def timeline(incident_id: int) -> list[str]:
    return list(
        TimelineEvent.objects.filter(incident_id=incident_id)
        .order_by("occurred_at", "id")
        .values_list("message", flat=True)
    )


def test_a_succeeded_run_starts_a_watch_on_its_runbooks_signals(people, prom):
    run, watch = succeeded_run(people["responder"])
    assert watch is not None
    assert watch.verdict == "watching"
    assert [s["id"] for s in watch.signals] == ["availability", "ttft_p99", "hit_rate"]
    assert 'lws="vllm-chat"' in watch.signals[2]["promql"]
    assert (watch.ends_at - watch.changed_at) > timedelta(minutes=9)
    (started,) = [m for m in timeline(run.incident_id) if "watching" in m]
    assert f"Guard on action #{run.pk}: watching prefix-cache-drop's golden signals" in started
    assert "Prefix-cache hit rate (< 0.3)" in started


def test_an_undo_and_a_run_that_changed_nothing_are_not_watched(people, prom):
    run, _ = succeeded_run(people["responder"])
    undo = ActionRun.objects.create(
        incident=run.incident, kind=run.kind, target="x", params=ROUTER, idempotency_key="u-1",
        status=S.SUCCEEDED, requested_by=people["responder"], requested_at=timezone.now(),
        before=run.before, plan=run.plan, undo_of=run,
    )  # fmt: skip
    assert guard_services.guard_watch_start(run=undo) is None
    same = ActionRun.objects.create(
        incident=run.incident, kind=run.kind, target="y", params=ROUTER, idempotency_key="s-1",
        status=S.SUCCEEDED, requested_by=people["responder"], requested_at=timezone.now(),
        before={"state": {"a": 1}}, plan={"desired": {"a": 1}},
    )  # fmt: skip
    assert guard_services.guard_watch_start(run=same) is None


def test_a_quiet_window_passes(people, prom):
    run, watch = succeeded_run(people["responder"])
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "watching"
    assert {s["state"] for s in watch.signals} == {"ok"}
    later(watch, end=True)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "passed"
    assert watch.evaluations == 2
    assert "verdict passed. No regression in 2 checks" in timeline(run.incident_id)[-1]
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_a_breach_requests_the_undo_which_waits_for_a_commander(people, prom):
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)  # baseline 0.82
    prom.answers[HIT] = 0.05
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "breached"
    assert watch.outcome == "undo_requested"
    undo = watch.undo_run
    assert undo.undo_of_id == run.pk
    assert undo.kind == "rollback_router_config"
    assert undo.params["data"] == {"routing_logic": "prefixaware"}
    # Same approval rules as a person's undo: a risky kind waits for a commander.
    assert undo.status == S.AWAITING_APPROVAL
    assert undo.requested_by.get_username() == "console-guard"
    assert not undo.requested_by.has_usable_password()
    messages = timeline(run.incident_id)
    (breach,) = [m for m in messages if "breached" in m]
    assert "Prefix-cache hit rate: 0.05 ratio crossed the threshold (< 0.3)" in breach
    assert "0.82 before the change" in breach
    assert any(
        f"automatic undo requested as action #{undo.pk}; it waits for a commander's approval" in m
        for m in messages
    )
    # A commander approves it like any other run; the guard cannot approve its own.
    from actions import services

    services.action_run_approve(run_id=undo.pk, actor=people["commander"])
    undo.refresh_from_db()
    assert undo.status == S.QUEUED
    # Evaluating again (a redelivered task) changes nothing.
    assert guard_services.guard_watch_evaluate(watch_id=watch.pk).undo_run_id == undo.pk
    assert ActionRun.objects.filter(undo_of=run).count() == 1


def test_a_breach_of_a_change_that_cannot_be_undone_pages_the_commander(people, prom):
    run, watch = succeeded_run(
        people["responder"],
        kind="restart_lws_group",
        params={"namespace": "llm-serving", "lws": "vllm-chat", "pod": "vllm-chat-0"},
        runbook="prefix-cache-drop",
        commander=people["commander"],
    )
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers["time_to_first_token"] = 4.0  # 5x the 0.8 s before the restart
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "breached"
    assert watch.outcome == "paged"
    assert watch.undo_run is None
    assert not ActionRun.objects.filter(undo_of=run).exists()
    page = timeline(run.incident_id)[-1]
    assert "restart_lws_group cannot be undone: paging the commander cara" in page
    assert "TTFT p99 (changed pods against the others, or against before the change) = 4 s" in page
    assert "crossed 1.2 s (1.5x the 0.8 s before the change)" in page


def test_prometheus_unreachable_says_so_undoes_nothing_and_ends_unknown(people, settings):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    run, watch = succeeded_run(people["responder"])
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "watching"
    assert "refused the connection" in watch.last_error
    assert {s["state"] for s in watch.signals} == {"unknown"}
    assert "cannot judge the change now" in timeline(run.incident_id)[-1]
    later(watch, end=True)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "unknown"
    assert "could not be judged at 2 of 2 checks" in watch.verdict_reason
    assert "neither confirmed nor undone" in timeline(run.incident_id)[-1]
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_no_data_for_one_signal_and_a_breach_of_another_still_undoes(people, prom):
    _run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers.update({HIT: 0.05, "time_to_first_token": None})  # an empty vector
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "breached"
    states = {s["id"]: s["state"] for s in watch.signals}
    assert states == {"availability": "ok", "ttft_p99": "unknown", "hit_rate": "breach"}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_card_and_api_show_the_window_and_verdict_with_fixed_queries(people, prom):
    vic = _client(people["viewer"])
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    html = vic.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true").content.decode()
    assert 'data-verdict="watching"' in html
    assert "every 5s" in html  # the card keeps polling while the guard watches
    assert "Prefix-cache hit rate" in html
    api = vic.get(f"/api/v1/actions/{run.pk}/").json()
    assert api["guard"]["verdict"] == "watching"
    assert api["guard"]["signals"][2]["threshold"] == "< 0.3"
    assert api["guard"]["signals"][2]["value"] == 0.82

    def count(url):
        with CaptureQueriesContext(connection) as ctx:
            assert vic.get(url, HTTP_HX_REQUEST="true").status_code == 200
        return len(ctx.captured_queries)

    panel = f"/runbooks/incidents/{run.incident_id}/actions/"
    before = (count(panel), count(f"/api/v1/incidents/{run.incident_id}/actions/"))
    for i in range(4):
        other = ActionRun.objects.create(
            incident=run.incident, kind=run.kind, target=f"t-{i}", params=ROUTER,
            idempotency_key=f"q-{i}", status=S.SUCCEEDED, requested_by=people["responder"],
            requested_at=timezone.now(), started_at=timezone.now(), before=run.before,
            plan=run.plan,
        )  # fmt: skip
        guard_services.guard_watch_start(run=other)
    after = (count(panel), count(f"/api/v1/incidents/{run.incident_id}/actions/"))
    assert after == before

    prom.answers[HIT] = 0.05
    later(watch)
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    html = vic.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true").content.decode()
    assert 'data-verdict="breached"' in html
    assert "crossed the threshold (&lt; 0.3)" in html
    assert "Automatic undo" in html
    assert "every 5s" not in html  # the verdict is final


def _revision(data: dict, *, seconds_ago: int, run=None):
    from actions.revisions import config_revision_store

    at = timezone.now() - timedelta(seconds=seconds_ago)
    # Revisions are append-only (no back-dating them afterwards): stored as captured then.
    with mock.patch("actions.revisions.timezone.now", return_value=at):
        return config_revision_store(
            namespace="llm-serving", name="vllm-router-config", data=data, resource_version="1",
            reason="periodic capture", run=run,
        )  # fmt: skip


def test_a_change_the_console_did_not_make_is_guarded_and_rolled_back(people, prom):
    """Someone's kubectl switches the router to round-robin while an incident is open in
    that namespace: the next periodic capture starts a guard; the hit rate falls; the
    guard asks to roll back to the revision before it, under the usual approval rules."""
    run, _ = succeeded_run(people["responder"])  # an open incident in llm-serving
    good = _revision({"routing_logic": "prefixaware"}, seconds_ago=600)
    outside = _revision({"routing_logic": "roundrobin"}, seconds_ago=5)
    watch = guard_services.guard_watch_start_for_revision(revision=outside)
    assert watch is not None
    assert watch.revision_id == outside.pk
    assert watch.run_id is None
    assert watch.incident_id == run.incident_id
    assert (
        "Guard on the change to configmap/llm-serving/vllm-router-config"
        in (timeline(run.incident_id)[-1])
    )
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers[HIT] = 0.05
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "breached"
    assert watch.outcome == "undo_requested"
    assert watch.undo_run.kind == "rollback_router_config"
    assert watch.undo_run.params["revision"] == str(good.pk)
    assert watch.undo_run.status == S.AWAITING_APPROVAL


def test_our_own_writes_the_first_capture_and_quiet_namespaces_start_no_guard(people, prom):
    first = _revision({"routing_logic": "prefixaware"}, seconds_ago=600)
    assert guard_services.guard_watch_start_for_revision(revision=first) is None  # no history
    second = _revision({"routing_logic": "session"}, seconds_ago=300)
    assert guard_services.guard_watch_start_for_revision(revision=second) is None  # no incident
    run, _ = succeeded_run(people["responder"])
    ours = _revision({"routing_logic": "roundrobin"}, seconds_ago=5, run=run)
    assert guard_services.guard_watch_start_for_revision(revision=ours) is None  # run's guard


def test_one_bad_reading_while_a_fix_bites_undoes_nothing(people, prom, settings):
    settings.GUARD_CONFIRM_CHECKS = 3
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)  # baseline 0.82, ok
    prom.answers[HIT] = 0.05
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "watching"
    assert {s["id"]: s["state"] for s in watch.signals}["hit_rate"] == "breach"
    assert "(check 1 of 3 before it counts)" in watch.signals[2]["message"]
    prom.answers[HIT] = 0.8  # the dip passed
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "watching"
    assert watch.signals[2]["streak"] == 0
    later(watch, end=True)
    assert guard_services.guard_watch_evaluate(watch_id=watch.pk).verdict == "passed"
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_a_breach_confirmed_by_three_checks_in_a_row_undoes(people, prom, settings):
    settings.GUARD_CONFIRM_CHECKS = 3
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers[HIT] = 0.05
    for expected in ("watching", "watching", "breached"):
        later(watch)
        watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
        assert watch.verdict == expected
    assert watch.undo_run.undo_of_id == run.pk


def test_a_window_ending_on_an_unconfirmed_breach_is_unknown_not_passed(people, prom, settings):
    settings.GUARD_CONFIRM_CHECKS = 3
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers[HIT] = 0.05
    later(watch, end=True)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "unknown"
    assert "Not confirmed, so nothing was undone" in watch.verdict_reason
    assert not ActionRun.objects.filter(undo_of=run).exists()
