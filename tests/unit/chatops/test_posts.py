"""Outgoing posts as deliveries with retries (chatops/posts/), with the real
SlackTransport against the local Slack stand-in: outages, rate limits, a refused token,
a dead worker's lease, order within a thread, answers and dialogs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chatops.messages import Dialog, Message
from chatops.models import ChatPost, ChatThread
from chatops.posts import post_record, post_send, posts_requeue, thread_flush
from incidents.models import Incident
from incidents.services import incident_acknowledge
from incidents.services.declare import incident_declare

pytest_plugins = ["tests.chat_slack_server"]
CHANNEL = "C0INCIDENTS"  # the stand-in workspace's default channel
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def loopback(settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"


@pytest.fixture
def alice(make_user):
    return make_user("alice")


def declared(alice, severity: str = "SEV3") -> tuple[Incident, ChatThread]:
    incident = incident_declare(actor=alice, title="TTFT p99 above 2s", severity=severity)
    return incident, ChatThread.objects.get(incident=incident)


def statuses(thread: ChatThread) -> list[tuple[str, str, int]]:
    return list(thread.posts.order_by("pk").values_list("kind", "status", "attempts"))


def due_now(thread: ChatThread) -> None:
    """Time passes: every retry's wait is over."""
    thread.posts.filter(status="retrying").update(next_attempt_at=timezone.now())


def test_a_chat_outage_leaves_posts_retrying_and_they_go_out_in_order_later(
    slack_server, slack_workspace, alice
):
    slack_server.fail(500, times=20)
    incident, thread = declared(alice)
    thread_flush(thread_id=thread.pk)
    assert statuses(thread) == [("state", "retrying", 1), ("timeline", "pending", 0)]
    post = thread.posts.get(kind="state")
    assert "Slack failed chat.postMessage" in post.last_error
    wait = (post.next_attempt_at - timezone.now()).total_seconds()
    assert 10 < wait <= 15  # CHAT_RETRY_BACKOFF_SECONDS x 1 attempt

    # The console's writes go on while the chat is down.
    incident_acknowledge(incident_id=incident.pk, actor=alice)
    assert Incident.objects.get(pk=incident.pk).status == "acknowledged"
    # acknowledged, then command taken (two entries, each announced): lines and one edit
    recorded = [k for k, _, _ in statuses(thread)]
    assert recorded == ["state", "timeline", "timeline", "state_edit", "timeline"]

    slack_server._failures.clear()  # the chat is back
    due_now(thread)
    assert posts_requeue() == 1
    thread_flush(thread_id=thread.pk)
    assert [s for _, s, _ in statuses(thread)] == ["sent"] * 5
    thread.refresh_from_db()
    sent = [(c.method, c.thread_ts) for c in slack_server.calls if c.status == 200]
    line = ("chat.postMessage", thread.root)
    assert sent == [("chat.postMessage", None), line, line, ("chat.update", None), line]
    assert "Acknowledged" in slack_server.message(CHANNEL, thread.root)["text"]


def test_a_429_is_waited_out_as_slack_asks(slack_server, slack_workspace, alice):
    slack_server.fail(429, retry_after=7)
    _, thread = declared(alice)
    thread_flush(thread_id=thread.pk)
    post = thread.posts.get(kind="state")
    assert post.status == "retrying"
    assert "asked to wait 7 s" in post.last_error
    assert 5 < (post.next_attempt_at - timezone.now()).total_seconds() <= 7
    calls = len(slack_server.calls)
    thread_flush(thread_id=thread.pk)  # too early: nothing is sent, order holds
    assert len(slack_server.calls) == calls
    assert posts_requeue() == 0
    due_now(thread)
    thread_flush(thread_id=thread.pk)
    assert [s for _, s, _ in statuses(thread)] == ["sent", "sent"]


def test_a_refused_token_fails_the_thread_with_a_message(slack_server, slack_workspace, alice):
    slack_workspace.bot_token = "xoxb-wrong"
    slack_workspace.save()
    _, thread = declared(alice)
    thread_flush(thread_id=thread.pk)
    state, line = thread.posts.order_by("pk")
    assert state.status == "failed"
    assert "Slack refused the bot token (invalid_auth)" in state.last_error
    assert line.status == "failed"
    assert line.last_error.startswith("The thread could not be started: Slack refused the bot")
    assert posts_requeue() == 0


def test_retries_end_after_the_last_attempt(slack_server, slack_workspace, alice, settings):
    settings.CHAT_POST_MAX_ATTEMPTS = 2
    slack_server.fail(500, times=5)
    _, thread = declared(alice)
    thread_flush(thread_id=thread.pk)
    due_now(thread)
    thread_flush(thread_id=thread.pk)
    state = thread.posts.get(kind="state")
    assert (state.status, state.attempts) == ("failed", 2)
    assert state.last_error.endswith("Gave up after 2 attempts.")
    assert thread.posts.get(kind="timeline").status == "failed"


def test_a_thread_held_by_a_dead_worker_is_taken_over_when_its_lease_runs_out(
    slack_server, slack_workspace, alice
):
    _, thread = declared(alice)
    ChatThread.objects.filter(pk=thread.pk).update(busy_until=timezone.now() + timedelta(minutes=1))
    thread.posts.filter(kind="state").update(status="sending", attempts=1,
                                             claimed_at=timezone.now())  # fmt: skip
    thread_flush(thread_id=thread.pk)  # held: left to its holder
    assert slack_server.calls == []
    past = timezone.now() - timedelta(seconds=1)
    ChatThread.objects.filter(pk=thread.pk).update(busy_until=past)
    assert posts_requeue() == 1
    thread_flush(thread_id=thread.pk)
    assert statuses(thread) == [("state", "sent", 2), ("timeline", "sent", 1)]
    thread.refresh_from_db()
    assert thread.busy_until is None


def test_an_older_state_edit_waiting_behind_a_newer_one_is_not_sent(
    slack_server, slack_workspace, alice
):
    _, thread = declared(alice)
    thread_flush(thread_id=thread.pk)
    for n in (1, 2):
        post_record(
            workspace_id=slack_workspace.pk, kind="state_edit", key=f"state:{thread.pk}:v{n}",
            payload={"message": Message(text=f"version {n}", title=f"v{n}").as_dict()},
            thread_id=thread.pk,
        )  # fmt: skip
    thread_flush(thread_id=thread.pk)
    (update,) = slack_server.calls_to("chat.update")
    assert "version 2" in update.body["text"]
    assert set(thread.posts.values_list("status", flat=True)) == {"sent"}


def test_a_key_recorded_twice_is_one_post(slack_workspace):
    payload = {"message": Message(text="hi").as_dict(), "channel": CHANNEL, "user": "U1"}
    first = post_record(workspace_id=slack_workspace.pk, kind="reply", key="r:1", payload=payload)
    again = post_record(workspace_id=slack_workspace.pk, kind="reply", key="r:1", payload=payload)
    assert first is not None
    assert again is None
    assert ChatPost.objects.count() == 1


def test_answers_go_through_the_response_url_or_as_ephemeral(slack_server, slack_workspace):
    url = slack_server.response_url()
    message = Message(text="Acknowledged #4.").as_dict()
    by_url = post_record(
        workspace_id=slack_workspace.pk, kind="reply", key="r:url", reply_url=url,
        payload={"message": message, "channel": CHANNEL, "user": "U0ALICE", "thread": ""},
    )  # fmt: skip
    alone = post_record(
        workspace_id=slack_workspace.pk, kind="reply", key="r:eph",
        payload={"message": message, "channel": CHANNEL, "user": "U0ALICE", "thread": ""},
    )  # fmt: skip
    post_send(post_id=by_url.pk)
    post_send(post_id=alone.pk)
    post_send(post_id=alone.pk)  # a second copy of the task: sent once
    assert set(ChatPost.objects.values_list("status", flat=True)) == {"sent"}
    (answered,) = slack_server.responses[url.rsplit("/", 1)[1]]
    assert answered["text"].startswith("Acknowledged #4.")
    assert [e["user"] for e in slack_server.ephemerals] == ["U0ALICE"]


def test_a_reply_retries_and_a_dialog_does_not(slack_server, slack_workspace):
    slack_server.fail(500, times=2)
    reply = post_record(
        workspace_id=slack_workspace.pk, kind="reply", key="r:1",
        payload={"message": Message(text="hi").as_dict(), "channel": CHANNEL, "user": "U1"},
    )  # fmt: skip
    post_send(post_id=reply.pk)
    reply.refresh_from_db()
    assert reply.status == "retrying"
    dialog = Dialog(title="Resolve #4", action="resolve", submit="Resolve").as_dict()
    view = post_record(
        workspace_id=slack_workspace.pk, kind="view", key="v:1",
        payload={"dialog": dialog, "trigger": slack_server.new_trigger(), "user": "U1",
                 "dialog_id": ""},
    )  # fmt: skip
    post_send(post_id=view.pk)
    view.refresh_from_db()
    assert view.status == "failed"
    assert view.next_attempt_at is None
    ChatPost.objects.filter(pk=reply.pk).update(next_attempt_at=timezone.now())
    assert posts_requeue() == 1
    post_send(post_id=reply.pk)
    reply.refresh_from_db()
    assert (reply.status, reply.attempts) == ("sent", 2)


def test_a_dialog_opens_and_keeps_its_id(slack_server, slack_workspace):
    dialog = Dialog(title="Request scale_lws", action="request_confirm").as_dict()
    view = post_record(
        workspace_id=slack_workspace.pk, kind="view", key="v:2",
        payload={"dialog": dialog, "trigger": slack_server.new_trigger(), "user": "U1",
                 "dialog_id": ""},
    )  # fmt: skip
    post_send(post_id=view.pk)
    view.refresh_from_db()
    assert view.status == "sent"
    assert view.external_id in slack_server.views


def test_a_dialog_left_waiting_is_given_up(slack_workspace, settings):
    view = post_record(
        workspace_id=slack_workspace.pk, kind="view", key="v:3",
        payload={"dialog": Dialog(title="x", action="resolve").as_dict(), "trigger": "t",
                 "user": "U1", "dialog_id": ""},
    )  # fmt: skip
    ChatPost.objects.filter(pk=view.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert posts_requeue() == 0
    view.refresh_from_db()
    assert view.status == "failed"
    assert "trigger" in view.last_error
