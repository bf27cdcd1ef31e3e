"""The incident's thread (chatops/threads/services.py) through the real stack: the
console's services write the timeline, `timeline_appended` records the posts after the
commit, and thread_flush (what the worker runs) sends them with the real SlackTransport
to the local Slack stand-in (tests/chat_slack_server.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from chatops.models import ChatPost, ChatThread, TeamChannel
from chatops.posts import thread_flush
from chatops.threads.services import channel_name, thread_ensure, timeline_events_post
from incidents.models import TimelineEvent
from incidents.services import incident_acknowledge
from incidents.services.declare import incident_declare
from incidents.services.lifecycle import incident_note_add
from pager.models import Team
from tests.factories import IncidentFactory

pytest_plugins = ["tests.chat_slack_server"]
CHANNEL = "C0INCIDENTS"  # the stand-in workspace's default channel
pytestmark = pytest.mark.django_db(transaction=True)
CATALOGUE = Path(django_settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"


@pytest.fixture(autouse=True)
def loopback(settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.NOTIFY_CONSOLE_URL = "https://console.example.com"


def kinds(thread: ChatThread) -> list[tuple[str, str]]:
    return list(thread.posts.order_by("pk").values_list("kind", "status"))


def test_a_new_incident_gets_a_thread_state_first_then_its_timeline(
    slack_server, slack_workspace, make_user
):
    alice = make_user("alice")
    incident = incident_declare(actor=alice, title="TTFT p99 above 2s", severity="SEV3")
    thread = ChatThread.objects.get(incident=incident)
    assert (thread.channel, thread.own_channel, thread.language) == (CHANNEL, False, "en")
    assert kinds(thread) == [("state", "pending"), ("timeline", "pending")]

    thread_flush(thread_id=thread.pk)

    thread.refresh_from_db()
    assert kinds(thread) == [("state", "sent"), ("timeline", "sent")]
    root = slack_server.message(CHANNEL, thread.root)
    assert root is not None
    assert root["thread_ts"] is None
    assert f"#{incident.pk} TTFT p99 above 2s" in root["text"]
    assert [b["action_id"].split(":")[0] for b in slack_server.buttons(CHANNEL, thread.root)]
    (line,) = slack_server.thread(CHANNEL, thread.root)
    assert "Incident opened: TTFT p99 above 2s" in line["text"]
    assert "alice" in line["text"]
    posted = [c.method for c in slack_server.calls]
    assert posted == ["chat.postMessage", "chat.postMessage"]
    assert slack_server.calls[1].thread_ts == thread.root
    assert thread_ensure(incident_id=incident.pk) == [thread]  # idempotent


def test_a_sev1_gets_a_channel_of_its_own_first(slack_server, slack_workspace, make_user):
    incident = incident_declare(
        actor=make_user("alice"), title="GPU node ECC storm!", severity="SEV1"
    )
    thread = ChatThread.objects.get(incident=incident)
    assert thread.own_channel
    assert thread.channel == ""
    assert [k for k, _ in kinds(thread)] == ["channel", "state", "timeline"]

    thread_flush(thread_id=thread.pk)

    thread.refresh_from_db()
    name = f"inc-{incident.pk}-gpu-node-ecc-storm"
    assert slack_server.channels[thread.channel]["name"] == name
    assert [c.method for c in slack_server.calls][:2] == [
        "conversations.create",
        "chat.postMessage",
    ]
    assert slack_server.message(thread.channel, thread.root) is not None
    assert len(slack_server.thread(thread.channel, thread.root)) == 1
    assert slack_server.messages[CHANNEL] == []


def test_the_state_is_edited_in_place_when_it_changes_and_only_then(
    slack_server, slack_workspace, make_user
):
    alice = make_user("alice")
    incident = incident_declare(actor=alice, title="TTFT p99 above 2s", severity="SEV3")
    thread = ChatThread.objects.get(incident=incident)
    thread_flush(thread_id=thread.pk)
    thread.refresh_from_db()
    before = thread.state_digest

    incident_acknowledge(incident_id=incident.pk, actor=alice)
    thread.refresh_from_db()
    assert thread.state_digest != before
    # Two entries (acknowledged, command taken), each announced on its own: two lines,
    # one edit (the second finds the state unchanged).
    assert sorted(k for k, _ in kinds(thread)[2:]) == ["state_edit", "timeline", "timeline"]
    thread_flush(thread_id=thread.pk)
    root = slack_server.message(CHANNEL, thread.root)
    assert root.get("edited")
    assert "Acknowledged" in root["text"]
    assert "alice" in root["text"]  # the commander: the first acknowledgement takes command
    assert len(slack_server.messages[CHANNEL]) == 4  # root + three lines, no second root

    # A note changes nothing the state says: a line, no edit.
    updates = len(slack_server.calls_to("chat.update"))
    incident_note_add(incident_id=incident.pk, actor=alice, text="Scaling by hand.")
    assert [k for k, _ in kinds(thread)][-1] == "timeline"
    # The same entries announced again: nothing new (same keys, same digest).
    ack = TimelineEvent.objects.filter(incident=incident, kind="status_changed").last()
    assert timeline_events_post(events=[ack]) == 0
    thread_flush(thread_id=thread.pk)
    assert len(slack_server.calls_to("chat.update")) == updates
    assert "Scaling by hand." in slack_server.thread(CHANNEL, thread.root)[-1]["text"]


def test_demo_incidents_are_never_threaded_and_drills_only_when_asked(slack_workspace):
    demo = IncidentFactory(is_demo=True)
    TimelineEvent.objects.create(
        incident=demo, kind="note", occurred_at=timezone.now(), message="demo"
    )
    assert thread_ensure(incident_id=demo.pk) == []
    drill = IncidentFactory(is_drill=True)
    TimelineEvent.objects.create(
        incident=drill, kind="note", occurred_at=timezone.now(), message="drill"
    )
    assert not ChatThread.objects.exists()
    slack_workspace.include_drills = True
    slack_workspace.save()
    (thread,) = thread_ensure(incident_id=drill.pk)
    assert thread.incident_id == drill.pk


def test_no_thread_is_started_for_a_resolved_incident(slack_workspace):
    old = IncidentFactory(status="resolved")
    assert thread_ensure(incident_id=old.pk) == []


def test_the_owning_teams_channel_and_language(slack_server, slack_workspace, make_user):
    team = Team.objects.create(slug="serving", name="Serving")
    TeamChannel.objects.create(
        workspace=slack_workspace, team=team, channel="C0SERVING", language="zh-hans"
    )
    incident = incident_declare(
        actor=make_user("alice"), title="KV cache full", severity="SEV3", labels={"team": "serving"}
    )
    thread = ChatThread.objects.get(incident=incident)
    assert (thread.channel, thread.language) == ("C0SERVING", "zh-hans")
    thread_flush(thread_id=thread.pk)
    thread.refresh_from_db()
    assert slack_server.message("C0SERVING", thread.root) is not None


@pytest.mark.skipif(not CATALOGUE.exists(), reason="django.mo is not compiled yet")
def test_a_chinese_thread_reads_chinese(slack_server, slack_workspace, make_user):
    slack_workspace.language = "zh-hans"
    slack_workspace.save()
    incident = incident_declare(actor=make_user("alice"), title="KV cache full", severity="SEV3")
    thread = ChatThread.objects.get(incident=incident)
    thread_flush(thread_id=thread.pk)
    thread.refresh_from_db()
    root = slack_server.message(CHANNEL, thread.root)
    assert "状态" in root["text"]
    assert "指挥官" in root["text"]
    (line,) = slack_server.thread(CHANNEL, thread.root)
    assert "KV cache full" in line["text"]
    assert "Incident opened" not in line["text"]


def test_channel_names_follow_slacks_rules(slack_workspace):
    incident = IncidentFactory(title="Überlast: " + "x" * 100)
    name = channel_name(slack_workspace, incident)
    assert name.startswith(f"inc-{incident.pk}-uberlast-xxx")
    assert len(name) <= 80
    chinese = IncidentFactory(title="推理延迟")
    assert channel_name(slack_workspace, chinese) == f"inc-{chinese.pk}"


def test_the_receiver_records_one_timeline_post_per_incident_per_batch(slack_workspace):
    incident = IncidentFactory()
    (thread,) = thread_ensure(incident_id=incident.pk)
    now = timezone.now()
    events = TimelineEvent.objects.bulk_create(
        [
            TimelineEvent(incident=incident, kind="note", occurred_at=now, message=f"n{n}")
            for n in range(3)
        ]
        + [
            TimelineEvent(
                incident=incident,
                kind="webhook_replayed",
                occurred_at=now,
                message="Webhook receipt #3 replayed",
            )
        ]
    )
    assert timeline_events_post(events=events) == 1
    post = ChatPost.objects.get(thread=thread, kind="timeline")
    assert post.key == f"timeline:{events[0].pk}"
    lines = post.payload["message"]["lines"]
    assert [line.rsplit(": ", 1)[1] for line in lines] == ["n0", "n1", "n2"]
