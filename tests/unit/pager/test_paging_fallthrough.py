"""A page falls through its person's methods in order: a failing or silent service does
not stop it, a worker that died mid-send never sends twice through the same method, and
a page nobody needs any more sends nothing. Beat queues again what a broker outage or a
dead worker left behind."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from incidents.models import IncidentStatus
from pager.models import ContactKind, DeliveryState, PageDelivery, PageStatus
from pager.paging import queue
from pager.paging.services import page_send, pages_requeue
from pager.tasks import paging as paging_tasks
from tests.factories import IncidentFactory
from tests.pager_receivers import contact, ntfy_url, page_for

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.pager_receivers"]

K = ContactKind
D = DeliveryState
TOPIC = "alice-pages"


@pytest.fixture
def alice(make_user):
    return make_user("alice")


@pytest.fixture
def incident():
    return IncidentFactory(severity="SEV1", namespace="llm-prod")


@pytest.fixture
def ntfy_then_email(alice, ntfy, smtp):
    contact(alice, K.NTFY, ntfy_url(ntfy, TOPIC))
    contact(alice, K.EMAIL, "alice@example.com")


def states(page):
    return list(page.deliveries.order_by("position").values_list("kind", "state", "attempts"))


def page_events(incident):
    return list(incident.events.filter(kind="page").values_list("message", flat=True))


def test_ntfy_answering_500_falls_through_to_email(alice, incident, ntfy, smtp, ntfy_then_email):
    ntfy.answer(500, 500)
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    # A 5xx is tried once more through the same method before falling through.
    assert len(ntfy.requests) == 2
    assert not ntfy.messages
    assert states(page) == [(K.NTFY, D.FAILED, 2), (K.EMAIL, D.SENT, 1)]
    failed = page.deliveries.get(kind=K.NTFY)
    assert "answered HTTP 500" in failed.error
    assert "(tried twice)" in failed.error
    assert [m.recipients for m in smtp.mails] == [["alice@example.com"]]
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED
    assert page_events(incident) == ["Paged alice by email after ntfy failed."]


def test_a_transient_failure_is_tried_once_more_through_the_same_method(
    alice, incident, ntfy, smtp, ntfy_then_email
):
    ntfy.answer(503)
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    assert len(ntfy.messages[TOPIC]) == 1
    assert states(page) == [(K.NTFY, D.SENT, 2), (K.EMAIL, D.SKIPPED, 0)]
    assert smtp.mails == []
    assert page_events(incident) == ["Paged alice by ntfy."]


def test_a_refusal_is_not_tried_again(alice, incident, ntfy, smtp, ntfy_then_email):
    ntfy.answer(403)
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    assert len(ntfy.requests) == 1
    assert states(page) == [(K.NTFY, D.FAILED, 1), (K.EMAIL, D.SENT, 1)]


def test_a_method_that_does_not_answer_ends_at_the_deadline(
    alice, incident, ntfy, smtp, ntfy_then_email, settings
):
    settings.PAGER_TIMEOUT_SECONDS = 1
    ntfy.hang()
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    failed = page.deliveries.get(kind=K.NTFY)
    assert failed.state == D.FAILED
    assert f"ntfy (ntfy://{ntfy.host}) did not answer within 1 s." in failed.error
    assert failed.attempts == 2  # a timeout is transient: one more try, then on
    assert len(smtp.mails) == 1
    page.refresh_from_db()
    assert page.status == PageStatus.DELIVERED


def test_a_worker_that_died_mid_send_is_not_sent_again_through_that_method(
    alice, incident, ntfy, smtp, ntfy_then_email, settings
):
    page = page_for(alice, incident)
    lease = timedelta(seconds=settings.PAGER_SEND_LEASE_SECONDS)
    # What a worker killed during the ntfy call leaves: the claim, committed, and no outcome.
    page.deliveries.filter(kind=K.NTFY).update(
        state=D.SENDING, attempts=1, claimed_at=timezone.now() - lease - timedelta(seconds=1)
    )

    page_send(page_id=page.pk)

    assert ntfy.requests == []  # it may have gone out: never twice through one method
    assert states(page) == [(K.NTFY, D.UNKNOWN, 1), (K.EMAIL, D.SENT, 1)]
    assert "worker stopped while sending" in page.deliveries.get(kind=K.NTFY).error
    assert len(smtp.mails) == 1
    assert page_events(incident) == ["Paged alice by email after ntfy failed."]


def test_a_claim_within_its_lease_is_left_to_the_worker_sending_it(
    alice, incident, ntfy, smtp, ntfy_then_email
):
    page = page_for(alice, incident)
    page.deliveries.filter(kind=K.NTFY).update(
        state=D.SENDING, attempts=1, claimed_at=timezone.now()
    )

    page_send(page_id=page.pk)  # a second copy of the task

    assert ntfy.requests == []
    assert smtp.mails == []
    assert states(page) == [(K.NTFY, D.SENDING, 1), (K.EMAIL, D.PENDING, 0)]


def test_an_acknowledged_page_sends_nothing(alice, incident, ntfy, smtp, ntfy_then_email):
    page = page_for(alice, incident)
    page.status = PageStatus.ACKNOWLEDGED
    page.save()

    page_send(page_id=page.pk)

    assert ntfy.requests == []
    assert smtp.mails == []
    assert states(page) == [(K.NTFY, D.SKIPPED, 0), (K.EMAIL, D.SKIPPED, 0)]
    assert page_events(incident) == []


@pytest.mark.parametrize("status", [IncidentStatus.MITIGATED, IncidentStatus.RESOLVED])
def test_a_page_for_an_incident_that_ended_sends_nothing(
    alice, incident, ntfy, smtp, ntfy_then_email, status
):
    page = page_for(alice, incident)
    incident.status = status
    incident.save()

    page_send(page_id=page.pk)

    assert ntfy.requests == []
    assert smtp.mails == []
    assert {state for _kind, state, _n in states(page)} == {D.SKIPPED}


def test_a_delivered_page_is_not_sent_again(alice, incident, ntfy, smtp, ntfy_then_email):
    page = page_for(alice, incident)
    page_send(page_id=page.pk)

    page_send(page_id=page.pk)  # redelivered task, or requeued

    assert len(ntfy.messages[TOPIC]) == 1
    assert len(page_events(incident)) == 1


def test_every_method_failing_fails_the_page_once_on_the_timeline(
    alice, incident, ntfy, smtp, ntfy_then_email
):
    ntfy.answer(404)
    smtp.refuse_recipients("550 5.1.1 No such user")
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    page.refresh_from_db()
    assert page.status == PageStatus.FAILED
    assert page.first_sent_at is None
    [event] = page_events(incident)
    assert event.startswith("Page to alice failed through every method: ntfy: ")
    assert "answered HTTP 404" in event
    assert "email: The mail server" in event
    payload = incident.events.get(kind="page").payload
    assert [e["method"] for e in payload["errors"]] == [K.NTFY, K.EMAIL]


def test_a_person_without_contact_methods_fails_at_once(alice, incident):
    page = page_for(alice, incident)

    page_send(page_id=page.pk)

    page.refresh_from_db()
    assert page.status == PageStatus.FAILED
    assert page_events(incident) == ["Page to alice failed: they have no enabled contact method."]


def test_a_method_disabled_after_the_page_was_made_is_passed_over(
    alice, incident, ntfy, smtp, ntfy_then_email
):
    page = page_for(alice, incident)
    alice.contact_methods.filter(kind=K.NTFY).update(enabled=False)

    page_send(page_id=page.pk)

    assert ntfy.requests == []
    assert states(page) == [(K.NTFY, D.FAILED, 0), (K.EMAIL, D.SENT, 1)]


# --- queueing and beat -----------------------------------------------------------------------
@pytest.fixture
def queued(monkeypatch):
    sent: list[int] = []

    def apply_async(args=None, kwargs=None, **options):
        sent.append(args[0])

    monkeypatch.setattr(paging_tasks.page_send_task, "apply_async", apply_async)
    return sent


def _aged(page, seconds=120):
    type(page).objects.filter(pk=page.pk).update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_pages_are_queued_by_task_name_when_the_transaction_commits(
    alice, incident, queued, django_capture_on_commit_callbacks
):
    page = page_for(alice, incident)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        queue.pages_enqueue([page.pk])
    assert queued == []  # not before the commit
    for callback in callbacks:
        callback()
    assert queued == [page.pk]


def test_a_broker_that_is_down_is_logged_not_raised(
    alice, incident, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    def down(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(paging_tasks.page_send_task, "apply_async", down)
    page = page_for(alice, incident)

    with django_capture_on_commit_callbacks(execute=True):
        queue.pages_enqueue([page.pk])

    assert "could not queue pager.tasks.paging.page_send" in caplog.text
    page.refresh_from_db()
    assert page.status == PageStatus.PENDING  # left for pages_requeue


def test_beat_queues_again_what_no_worker_took_or_finished(
    alice, make_user, incident, queued, settings, django_capture_on_commit_callbacks
):
    contact(alice, K.EMAIL, "alice@example.com")
    waiting = page_for(alice, incident, key="waiting")  # the broker was down
    _aged(waiting)
    fresh = page_for(alice, incident, key="fresh")  # its task may still be on its way
    dead = page_for(alice, incident, key="dead")  # its worker died mid-send
    _aged(dead)
    lease = timedelta(seconds=settings.PAGER_SEND_LEASE_SECONDS + 1)
    dead.deliveries.update(state=D.SENDING, claimed_at=timezone.now() - lease)
    sending = page_for(alice, incident, key="sending")  # a worker is on it now
    _aged(sending)
    sending.deliveries.update(state=D.SENDING, claimed_at=timezone.now())
    skipped = page_for(alice, incident, key="skipped")  # the incident ended before it went out
    _aged(skipped)
    skipped.deliveries.update(state=D.SKIPPED)
    delivered = page_for(alice, incident, key="delivered")
    _aged(delivered)
    type(delivered).objects.filter(pk=delivered.pk).update(status=PageStatus.DELIVERED)
    bob = make_user("bob")
    nobody = page_for(bob, incident, key="no-methods")  # fails at once when it runs
    _aged(nobody)

    with django_capture_on_commit_callbacks(execute=True):
        count = pages_requeue()

    assert count == 3
    assert sorted(queued) == sorted([waiting.pk, dead.pk, nobody.pk])
    assert fresh.pk not in queued
    assert PageDelivery.objects.filter(page=dead, state=D.SENDING).exists()  # page_send decides
