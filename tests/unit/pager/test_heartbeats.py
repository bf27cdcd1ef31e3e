"""Heartbeats: HTTP check-ins (codes, the token kept as a hash and compared in constant
time), a missing heartbeat paging its team through ingest (HeartbeatMissing), recovery
mitigating the incident, and the console's own queues and beat."""

import hashlib
import hmac
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.urls import reverse
from django.utils import timezone

from console import roles
from console.errors import DomainError, NotAllowed
from console.liveness.services import worker_heartbeat_record
from console.models import WorkerHeartbeat
from incidents.models import Alert, Incident, WebhookReceipt
from pager.heartbeats.alerts import ALERTNAME
from pager.heartbeats.check import RESEND_AFTER
from pager.heartbeats.schema import schema_add_heartbeat_beat
from pager.heartbeats.services import heartbeat_create, heartbeat_delete, heartbeats_check
from pager.models import Heartbeat, HeartbeatKind, HeartbeatState, Team
from pager.routing import route

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return Team.objects.create(slug="batch", name="Batch pipelines")


@pytest.fixture
def commander(make_user):
    return make_user("carol", roles.COMMANDER)


@pytest.fixture
def made(team, commander):
    """An HTTP heartbeat of the team, and its token."""
    return heartbeat_create(
        name="Nightly export", team_id=team.pk, interval_seconds=3600, grace_seconds=300,
        actor=commander,
    )  # fmt: skip


def beat(client, slug, token=None, method="post"):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token is not None else {}
    url = reverse("pager-api:heartbeat-beat", kwargs={"slug": slug})
    return getattr(client, method)(url, **headers)


def silent_for(heartbeat, seconds):
    """The heartbeat last checked in `seconds` ago (what time passing would do)."""
    Heartbeat.objects.filter(pk=heartbeat.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=seconds)
    )


# --- check-ins ----------------------------------------------------------------------------
def test_the_token_is_shown_once_and_only_its_hash_is_kept(made):
    heartbeat, token = made
    assert len(token) >= 40
    heartbeat.refresh_from_db()
    assert heartbeat.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {heartbeat.slug, heartbeat.name, heartbeat.token_hash}
    assert heartbeat.kind == HeartbeatKind.HTTP
    assert heartbeat.state == HeartbeatState.WAITING


def test_a_check_in_answers_200_with_the_next_due_time(client, made, django_assert_num_queries):
    heartbeat, token = made
    before = timezone.now()
    with django_assert_num_queries(2):  # the read, and the one UPDATE
        r = beat(client, heartbeat.slug, token)
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["ok"] is True
    assert body["next_due"] > (before + timedelta(seconds=3599)).isoformat()
    heartbeat.refresh_from_db()
    assert heartbeat.state == HeartbeatState.OK
    assert heartbeat.last_seen_at >= before
    assert "no-cache" in r["Cache-Control"]


@pytest.mark.parametrize(
    ("slug", "token", "status", "says"),
    [
        ("nightly-export", "wrong-token", 401, "wrong token"),
        ("nightly-export", None, 401, "Bearer"),
        ("nightly-export", "", 401, "Bearer"),
        ("no-such-heartbeat", "whatever", 404, "no heartbeat is called"),
    ],
)
def test_refusals_are_json_with_a_message(client, made, slug, token, status, says):
    r = beat(client, slug, token)
    assert r.status_code == status
    assert r.json()["ok"] is False
    assert says in r.json()["error"]
    heartbeat = Heartbeat.objects.get(pk=made[0].pk)
    assert heartbeat.last_seen_at is None
    assert heartbeat.state == HeartbeatState.WAITING


def test_only_post_checks_in(client, made):
    r = beat(client, made[0].slug, made[1], method="get")
    assert r.status_code == 405
    assert r["Allow"] == "POST"


def test_the_url_takes_a_trailing_slash_too(client, made):
    heartbeat, token = made
    url = reverse("pager-api:heartbeat-beat", kwargs={"slug": heartbeat.slug}) + "/"
    assert client.post(url, HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200


def test_the_token_is_compared_in_constant_time(client, made, monkeypatch):
    """The presented token's hash meets the stored hash only in hmac.compare_digest."""
    heartbeat, token = made
    seen = []
    real = hmac.compare_digest

    def spy(a, b):
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert beat(client, heartbeat.slug, "not-it").status_code == 401
    assert beat(client, heartbeat.slug, token).status_code == 200
    stored = Heartbeat.objects.get(pk=heartbeat.pk).token_hash
    assert seen == [(hashlib.sha256(b"not-it").hexdigest(), stored), (stored, stored)]


def test_a_heartbeat_without_a_token_takes_no_check_in(client):
    Heartbeat.objects.create(slug="am-a", name="Alertmanager a", kind=HeartbeatKind.WATCHDOG,
                             source="http://am-a:9093")  # fmt: skip
    assert beat(client, "am-a", "x").status_code == 401


def test_making_one_needs_manage_and_sane_numbers(make_user, commander):
    with pytest.raises(NotAllowed):
        heartbeat_create(name="x", team_id=None, interval_seconds=600, grace_seconds=0,
                         actor=make_user("rita", roles.RESPONDER))  # fmt: skip
    with pytest.raises(DomainError, match="interval must be between 60"):
        heartbeat_create(name="x", team_id=None, interval_seconds=5, grace_seconds=0,
                         actor=commander)  # fmt: skip
    with pytest.raises(DomainError, match="needs a name"):
        heartbeat_create(name="  ", team_id=None, interval_seconds=600, grace_seconds=0,
                         actor=commander)  # fmt: skip
    first, _ = heartbeat_create(name="Backup", team_id=None, interval_seconds=600,
                                grace_seconds=0, actor=commander)  # fmt: skip
    second, _ = heartbeat_create(name="Backup", team_id=None, interval_seconds=600,
                                 grace_seconds=0, actor=commander)  # fmt: skip
    assert (first.slug, second.slug) == ("backup", "backup-2")


# --- missing: an incident through ingest, owned by the team ---------------------------------
def test_a_missing_heartbeat_opens_an_incident_for_its_team(made, team):
    heartbeat, _ = made
    silent_for(heartbeat, 3600 + 300 + 5)
    assert heartbeats_check() == 1
    heartbeat.refresh_from_db()
    assert heartbeat.state == HeartbeatState.MISSING
    assert heartbeat.missing_since is not None
    incident = Incident.objects.get()
    assert heartbeat.incident_id == incident.pk
    assert incident.status == "triggered"
    assert incident.group_labels["team"] == "batch"
    assert "Nightly export has not checked in since" in incident.title
    (alert,) = Alert.objects.filter(incident=incident)
    assert alert.alertname == ALERTNAME
    assert alert.labels == {
        "alertname": ALERTNAME,
        "heartbeat": heartbeat.slug,
        "namespace": "console",
        "team": "batch",
        "severity": "critical",
    }
    assert alert.starts_at == heartbeat.missing_since
    receipt = WebhookReceipt.objects.get()
    assert receipt.source == "console"
    assert receipt.incident_ids == [incident.pk]
    assert route(incident).team == team


def test_one_never_seen_goes_missing_its_interval_after_it_was_made(made):
    heartbeat, _ = made
    assert heartbeats_check() == 0  # just made
    Heartbeat.objects.filter(pk=heartbeat.pk).update(
        created_at=timezone.now() - timedelta(seconds=3600 + 301)
    )
    assert heartbeats_check() == 1
    assert "since it was set up" in Incident.objects.get().title


def test_a_second_check_changes_nothing(made):
    heartbeat, _ = made
    silent_for(heartbeat, 4000)
    assert heartbeats_check() == 1
    assert heartbeats_check() == 0
    assert Incident.objects.count() == 1
    assert Alert.objects.count() == 1
    assert WebhookReceipt.objects.count() == 1  # sent again only after RESEND_AFTER


def test_while_missing_the_alert_is_sent_again_as_alertmanager_repeats(made):
    """The reconcile ends a firing alert nobody has re-sent for its grace."""
    heartbeat, _ = made
    silent_for(heartbeat, 4000)
    heartbeats_check()
    Alert.objects.update(last_received_at=timezone.now() - RESEND_AFTER - timedelta(seconds=1))
    assert heartbeats_check() == 0
    (alert,) = Alert.objects.all()
    assert alert.receive_count == 2
    assert alert.status == "firing"
    assert WebhookReceipt.objects.count() == 2
    assert Incident.objects.count() == 1


def test_checking_in_again_mitigates_the_incident(client, made):
    heartbeat, token = made
    silent_for(heartbeat, 4000)
    heartbeats_check()
    assert beat(client, heartbeat.slug, token).status_code == 200
    assert Heartbeat.objects.get(pk=heartbeat.pk).state == HeartbeatState.MISSING  # until checked
    assert heartbeats_check() == 1
    heartbeat.refresh_from_db()
    assert heartbeat.state == HeartbeatState.OK
    assert heartbeat.missing_since is None
    incident = Incident.objects.get()
    assert incident.status == "mitigated"
    assert Alert.objects.get().status == "resolved"
    assert heartbeat.incident_id == incident.pk  # the last incident, for the page

    # Silent again: a new episode, the same incident fires again.
    silent_for(heartbeat, 4000)
    assert heartbeats_check() == 1
    assert Incident.objects.get().status != "mitigated"
    assert Alert.objects.count() == 2


def test_deleting_a_missing_heartbeat_resolves_its_alert(made, commander):
    heartbeat, _ = made
    silent_for(heartbeat, 4000)
    heartbeats_check()
    heartbeat_delete(heartbeat_id=heartbeat.pk, actor=commander)
    assert not Heartbeat.objects.filter(pk=heartbeat.pk).exists()
    assert Incident.objects.get().status == "mitigated"


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_checks_page_once(made):
    heartbeat, _ = made
    silent_for(heartbeat, 4000)
    # A check holding the row: the other skips it and sends nothing.
    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                Heartbeat.objects.select_for_update().get(pk=heartbeat.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(10)
    try:
        assert heartbeats_check() == 0
        assert not Incident.objects.exists()
    finally:
        release.set()
        holder.join(10)
    # Two at once, in earnest: one of them pages.
    start, results = threading.Barrier(2), []

    def check():
        try:
            start.wait(10)
            results.append(heartbeats_check())
        finally:
            connection.close()

    threads = [threading.Thread(target=check) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == [0, 1]
    assert Incident.objects.count() == 1
    assert Alert.objects.count() == 1


# --- the console's own health ---------------------------------------------------------------
def console(source):
    return Heartbeat.objects.get(kind=HeartbeatKind.CONSOLE, source=source)


def test_each_queue_and_beat_is_a_heartbeat_fed_from_the_workers():
    sre = Team.objects.create(slug="sre", name="SRE", is_default=True)
    worker_heartbeat_record(hostname="w1@pod", pid=1, queues=["default", "actions"])
    worker_heartbeat_record(hostname="notifier@pod", pid=2, queues=["notifications"])
    assert heartbeats_check() == 0
    rows = Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE)
    assert {h.source for h in rows} == {"worker:default", "worker:actions",
                                        "worker:notifications", "beat"}  # fmt: skip
    assert {h.state for h in rows} == {HeartbeatState.OK}
    assert {h.team_id for h in rows} == {sre.pk}


def test_a_queue_nobody_consumes_pages_and_recovers_when_a_worker_comes():
    worker_heartbeat_record(hostname="w1@pod", pid=1, queues=["default", "actions"])
    heartbeats_check()
    notifications = console("worker:notifications")
    assert notifications.state == HeartbeatState.WAITING  # never seen, not yet late
    Heartbeat.objects.filter(pk=notifications.pk).update(
        created_at=timezone.now() - timedelta(hours=1)
    )
    assert heartbeats_check() == 1
    notifications.refresh_from_db()
    assert notifications.state == HeartbeatState.MISSING
    incident = Incident.objects.get()
    assert "Console workers: notifications queue" in incident.title
    assert incident.group_labels["heartbeat"] == "console-worker-notifications"
    assert console("worker:default").state == HeartbeatState.OK

    worker_heartbeat_record(hostname="notifier@pod", pid=2, queues=["notifications"])
    assert heartbeats_check() == 1
    assert console("worker:notifications").state == HeartbeatState.OK
    assert Incident.objects.get().status == "mitigated"


def test_a_queue_whose_workers_died_goes_missing():
    worker_heartbeat_record(
        hostname="w1@pod", pid=1, queues=["default", "actions", "notifications"]
    )
    heartbeats_check()
    # The only worker stopped beating an hour ago.
    WorkerHeartbeat.objects.update(last_seen=timezone.now() - timedelta(hours=1))
    Heartbeat.objects.filter(kind=HeartbeatKind.CONSOLE).exclude(source="beat").update(
        last_seen_at=timezone.now() - timedelta(hours=1)
    )
    assert heartbeats_check() == 3
    assert console("beat").state == HeartbeatState.OK  # the check itself ran
    assert Incident.objects.count() == 3


def test_the_check_in_is_documented_in_the_api_schema():
    schema = schema_add_heartbeat_beat({}, None, None, True)
    operation = schema["paths"]["/api/v1/pager/heartbeats/{slug}/beat"]["post"]
    assert set(operation["responses"]) == {"200", "401", "404", "405"}
    assert schema["components"]["securitySchemes"]["heartbeatBearer"]["scheme"] == "bearer"
