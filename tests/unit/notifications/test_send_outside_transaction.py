"""Issue 23, finding 3: a slow target must not hold the database. The attempt is counted
and committed before the HTTP call, the call runs outside any transaction, and while it
runs other writers reach the same delivery row and the incident's timeline (on SQLite,
embedded mode, a held write lock stopped the webhook and every note for a minute)."""

from __future__ import annotations

import socketserver
import threading
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone

from config.celery import app
from console import roles
from incidents.services.lifecycle import incident_note_add
from notifications import services, tasks
from notifications.models import Delivery, DeliveryStatus, Event, Target, TargetKind
from tests.factories import IncidentFactory
from tests.unit.notifications.conftest import SECRET

DRIP_LINES = 3  # one header line a second: about 3 s of a target that is slow, not dead


class DripServer:
    """Answers any request with "503", one header line a second: the slow target of the
    issue (a real socket, so the real transport waits on it)."""

    def __init__(self, interval: float = 1.0, lines: int = DRIP_LINES) -> None:
        self.request_seen = threading.Event()
        self.release = threading.Event()  # set at teardown: stop dripping at once
        drip = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = self.request.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                drip.request_seen.set()
                self.request.sendall(b"HTTP/1.1 503 Service Unavailable\r\n")
                for n in range(lines):
                    if drip.release.wait(interval):
                        break
                    self.request.sendall(f"X-Drip-{n}: slow\r\n".encode())
                self.request.sendall(b"Content-Length: 4\r\nConnection: close\r\n\r\nbusy")

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,))
        self.thread.daemon = True
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def drip(settings):
    # The guard (console/outgoing) refuses loopback unless the operator allows it.
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    server = DripServer()
    yield server
    server.close()


def _send_in_thread(delivery_id: int, *, last_try: bool) -> tuple[threading.Thread, list]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            services.delivery_send(delivery_id=delivery_id, last_try=last_try)
        except BaseException as exc:  # the test reads it; a thread cannot raise to it
            errors.append(exc)
        finally:
            connection.close()  # this thread's own connection, or the test DB stays in use

    thread = threading.Thread(target=run, name="delivery-send")
    thread.start()
    return thread, errors


@pytest.mark.django_db(transaction=True)
def test_a_slow_target_holds_no_lock_and_the_attempt_is_kept(drip, make_user, settings):
    settings.NOTIFY_TIMEOUT_SECONDS = 10  # longer than the drip: the target answers, slowly
    incident = IncidentFactory()
    target = Target.objects.create(
        name="slow", kind=TargetKind.WEBHOOK, url=drip.url, secret=SECRET
    )
    delivery = Delivery.objects.create(
        target=target, event=Event.INCIDENT_OPENED, event_key="timeline:1", incident=incident,
        summary="s", body={"summary": "s", "event": "incident_opened"}, created_at=timezone.now(),
        status=DeliveryStatus.QUEUED,
    )  # fmt: skip
    rita = make_user("rita", roles.RESPONDER)

    thread, errors = _send_in_thread(delivery.pk, last_try=True)
    try:
        assert drip.request_seen.wait(10), "the delivery never reached the target"
        started = time.monotonic()
        # While the target drips: the attempt is already committed (another connection
        # sees it), the row can be locked without waiting, and a note can be written.
        with transaction.atomic():
            row = Delivery.objects.select_for_update(nowait=True).get(pk=delivery.pk)
            assert row.attempts == 1
            assert row.last_attempt_at is not None
        incident_note_add(incident_id=incident.pk, actor=rita, text="still here")
        assert time.monotonic() - started < 1.0, "another writer waited on the send"
        assert thread.is_alive(), "the send finished before the writers were tried"
    finally:
        thread.join(30)
    assert not thread.is_alive()
    assert errors == []
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 1
    assert "503" in delivery.last_error


@pytest.mark.django_db(transaction=True)
def test_a_second_copy_of_the_message_does_not_send_while_one_is_sending(drip, settings):
    settings.NOTIFY_TIMEOUT_SECONDS = 10
    target = Target.objects.create(
        name="slow", kind=TargetKind.WEBHOOK, url=drip.url, secret=SECRET
    )
    delivery = Delivery.objects.create(
        target=target, event=Event.TEST, event_key="test:1", summary="s",
        body={"summary": "s", "event": "test"}, created_at=timezone.now(),
        status=DeliveryStatus.QUEUED,
    )  # fmt: skip
    thread, errors = _send_in_thread(delivery.pk, last_try=False)
    try:
        assert drip.request_seen.wait(10)
        drip.request_seen.clear()
        # A redelivered Celery message (or a second worker) while the first is sending.
        services.delivery_send(delivery_id=delivery.pk, last_try=False)
        assert not drip.request_seen.is_set(), "the delivery was sent twice at once"
    finally:
        thread.join(30)
    # The first copy's 503 is recorded and handed to the task's retry.
    assert [type(e).__name__ for e in errors] == ["DeliveryError"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.RETRYING, 1)
    # The retry (its own message, later) is not refused: the earlier attempt is over.
    drip.release.set()
    with pytest.raises(Exception, match="503"):
        services.delivery_send(delivery_id=delivery.pk, last_try=False)
    delivery.refresh_from_db()
    assert delivery.attempts == 2


@pytest.mark.django_db(transaction=True)
def test_a_send_that_died_mid_call_is_picked_up_again(settings, monkeypatch):
    """A worker killed while sending leaves the claim behind: after the lease it is
    queued again by deliveries_requeue, attempt counted, not lost and not stuck."""
    target = Target.objects.create(
        name="t", kind=TargetKind.WEBHOOK, url="http://127.0.0.1:9/hook", secret=SECRET
    )
    delivery = Delivery.objects.create(
        target=target, event=Event.TEST, event_key="test:2", summary="s",
        body={"summary": "s", "event": "test"}, created_at=timezone.now(),
        status=DeliveryStatus.QUEUED,
    )  # fmt: skip

    class Killed(BaseException):  # what a hard time limit or a lost process looks like
        pass

    def die(*args, **kwargs):
        raise Killed

    monkeypatch.setattr("notifications.transports.deliver", die)
    with pytest.raises(Killed):
        services.delivery_send(delivery_id=delivery.pk, last_try=False)
    delivery.refresh_from_db()
    assert delivery.attempts == 1
    assert delivery.status == DeliveryStatus.QUEUED

    queued: list[int] = []
    monkeypatch.setattr(tasks.delivery_send_task, "apply_async", lambda a, **k: queued.append(a[0]))
    assert services.deliveries_requeue() == 0  # the lease has not run out: still sending
    Delivery.objects.filter(pk=delivery.pk).update(
        last_attempt_at=delivery.last_attempt_at - services.SEND_LEASE,
        updated_at=delivery.last_attempt_at - services.SEND_LEASE,
    )
    assert services.deliveries_requeue() == 1
    assert queued == [delivery.pk]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.QUEUED, 1)
    assert services.deliveries_requeue() == 0  # queued once, not every minute


def test_deliveries_have_their_own_queue():
    route = app.amqp.router.route({}, tasks.delivery_send_task.name, (1,), {})
    assert route["queue"].name == "notifications"
