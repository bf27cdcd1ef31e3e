"""The chat pages: who may see them, what /chat/ shows (installations with the addresses
to paste, never the secrets; team channels; who is who; requests; posts not delivered
with "Send again" for commanders), an incident's thread drawn from its stored posts, the
incident page's chat panel, empty states, and a fixed number of queries.

`seed_thread` (rows made with the ORM: they are the data the pages read) is shared with
the browser test (tests/e2e/test_chat_browser.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from chatops.messages import Button, Message
from chatops.models import (
    ChatIdentity,
    ChatInteraction,
    ChatPost,
    ChatThread,
    InteractionKind,
    InteractionStatus,
    MappedBy,
    PostKind,
    PostStatus,
    Surface,
    TeamChannel,
    Workspace,
)
from chatops.panel import panel_context
from console import roles
from console.audit.models import AuditEvent, AuditKind
from incidents.models import Incident
from incidents.panels import PANELS, incident_panel_register
from pager.models import Team
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
BOT_TOKEN = "xoxb-1111-2222-secret-bot-token"
SIGNING_SECRET = "8f2b6c1d9e0a4b7c5d3e1f2a"


@dataclass
class Seeded:
    workspace: Workspace
    incident: Incident
    thread: ChatThread
    failed: ChatPost
    reply: ChatPost


def _post(
    thread: ChatThread,
    kind: str,
    key: str,
    message: Message,
    *,
    at,
    status=PostStatus.SENT,
    error: str = "",
    attempts: int = 1,
    extra: dict | None = None,
) -> ChatPost:
    post = ChatPost.objects.create(
        workspace=thread.workspace,
        thread=thread,
        kind=kind,
        key=key,
        payload={"message": message.as_dict(), **(extra or {})},
        status=status,
        attempts=attempts,
        last_error=error,
        external_id=key if status == PostStatus.SENT else "",
        sent_at=at if status == PostStatus.SENT else None,
        next_attempt_at=at + timedelta(seconds=30) if status == PostStatus.RETRYING else None,
    )
    ChatPost.objects.filter(pk=post.pk).update(created_at=at)  # auto_now_add: set after
    post.refresh_from_db()
    return post


def _state(incident: Incident, *, status: str, commander: str) -> Message:
    value = {"incident": incident.pk}
    return Message(
        text=f"#{incident.pk} {incident.title}",
        title=f"#{incident.pk} {incident.title}",
        fields=(
            ("Status", status),
            ("Severity", incident.severity),
            ("Commander", commander),
            ("Firing alerts", "2 of 2 (VLLMHighTTFT x2)"),
            ("Triage", "KV cache pressure"),
            ("Recommended action", "Scale vllm-chat from 2 to 4 replicas"),
            ("Pending approvals", "none"),
            ("Guard", "not started"),
        ),
        lines=("Namespace llm-serving · opened 14 min ago",),
        buttons=(
            Button("ack", "Acknowledge", value, style="primary"),
            Button("command", "Take command", value),
            Button("silence", "Silence 1 h", {**value, "minutes": 60}),
            Button("request", "Request: scale out", value),
            Button("resolve", "Resolve", value, style="danger", confirm=f"Resolve #{incident.pk}?"),
        ),
        color="#e8590c",
        link=f"https://console.example.com/incidents/{incident.pk}/",
    )


def seed_thread(*, users: dict[str, User] | None = None) -> Seeded:
    """An installation, a team channel, an incident with its thread: the state message
    (posted, then edited), three timeline posts, one retrying, one failed, and an answer
    only one person saw; three chat users (mapped by email, by an admin, not mapped) and
    three requests from chat."""
    users = users or {}
    now = timezone.now().replace(microsecond=0)
    start = now - timedelta(minutes=14)
    workspace = Workspace.objects.create(
        name="Acme Slack",
        surface=Surface.SLACK,
        api_url="https://slack.com/api/",
        bot_token=BOT_TOKEN,
        signing_secret=SIGNING_SECRET,
        external_team="T0ACME",
        default_channel="C0INCIDENTS",
        language="en",
    )
    team = Team.objects.create(slug="llm-serving", name="LLM serving")
    TeamChannel.objects.create(workspace=workspace, team=team, channel="C0SERVING")
    incident = IncidentFactory(
        title="VLLMHighTTFT: TTFT p99 above 2s on vllm-chat",
        severity="SEV2",
        status="acknowledged",
        triggered_at=start,
    )
    thread = ChatThread.objects.create(
        incident=incident,
        workspace=workspace,
        channel="C0SERVING",
        root="1733380000.000100",
        language="en",
    )
    ChatThread.objects.filter(pk=thread.pk).update(created_at=start)
    _post(
        thread,
        PostKind.STATE,
        "state",
        _state(incident, status="Triggered", commander="—"),
        at=start,
    )
    _post(
        thread,
        PostKind.STATE_EDIT,
        "state-2",
        _state(incident, status="Acknowledged", commander="ana"),
        at=start + timedelta(minutes=3),
    )
    lines = [
        (1, "Acknowledged by ana (from Slack). ana is the incident commander."),
        (2, "Triage finished: branch “KV cache pressure”. Recommended: scale vllm-chat to 4."),
        (3, "Note by ben: the 09:00 traffic peak started early; watching queue depth."),
    ]
    for minute, text in lines:
        _post(
            thread,
            PostKind.TIMELINE,
            f"tl-{minute}",
            Message(text=text),
            at=start + timedelta(minutes=minute),
        )
    _post(
        thread,
        PostKind.TIMELINE,
        "tl-4",
        Message(text="ana requested “Scale out llm-serving/vllm-chat to 4” (run #7)."),
        at=start + timedelta(minutes=4),
        status=PostStatus.RETRYING,
        attempts=2,
        error="ratelimited: Slack asked to wait 30 s",
    )
    failed = _post(
        thread,
        PostKind.TIMELINE,
        "tl-5",
        Message(text="Silence created for 60 minutes by ana."),
        at=start + timedelta(minutes=5),
        status=PostStatus.FAILED,
        attempts=6,
        error="channel_not_found: the bot is not in C0SERVING",
    )
    reply = _post(
        thread,
        PostKind.REPLY,
        "reply-1",
        Message(text="You requested run #7 yourself: another commander approves it (four-eyes)."),
        at=start + timedelta(minutes=6),
        extra={"channel": "C0SERVING", "user": "U0BEN", "thread": "1733380000.000100"},
    )
    ChatIdentity.objects.create(
        workspace=workspace,
        external_user="U0ANA",
        external_name="ana",
        email="ana@example.com",
        user=users.get("ana"),
        mapped_by=MappedBy.EMAIL if users.get("ana") else MappedBy.NONE,
        checked_at=now,
    )
    ChatIdentity.objects.create(
        workspace=workspace,
        external_user="U0BEN",
        external_name="Ben",
        user=users.get("ben"),
        mapped_by=MappedBy.ADMIN if users.get("ben") else MappedBy.NONE,
        checked_at=now,
    )
    ChatIdentity.objects.create(
        workspace=workspace, external_user="U0GUEST", external_name="guest-contractor"
    )
    for n, (action, who, status, outcome) in enumerate(
        [
            ("ack", "U0ANA", InteractionStatus.DONE, f"Acknowledged #{incident.pk}."),
            ("approve", "U0BEN", InteractionStatus.REFUSED, "You requested this run yourself."),
            ("command", "U0GUEST", InteractionStatus.REFUSED, "Not mapped to a console user."),
        ]
    ):
        ChatInteraction.objects.create(
            workspace=workspace,
            key=f"trigger-{n}",
            kind=InteractionKind.BUTTON,
            action=action,
            external_user=who,
            incident=incident,
            status=status,
            outcome=outcome,
            repeats=1 if n == 0 else 0,
            received_at=start + timedelta(minutes=n + 1),
        )
    return Seeded(workspace, incident, thread, failed, reply)


@pytest.fixture
def seeded(make_user) -> Seeded:
    ana = make_user("ana", roles.RESPONDER, email="ana@example.com")
    return seed_thread(users={"ana": ana, "ben": make_user("ben", roles.COMMANDER)})


@pytest.fixture
def chat_panel():
    """The panel as ChatopsConfig.ready() registers it (removed after, if it was not)."""
    had = "chatops" in PANELS.sections
    incident_panel_register(
        key="chatops", order=30, template="chatops/_incident_panel.html", context=panel_context
    )
    yield
    if not had:
        PANELS.sections.pop("chatops", None)


# --- who may see ---------------------------------------------------------------------------
def test_anonymous_is_sent_to_log_in(client, seeded):
    for url in (reverse("chatops:index"), reverse("chatops:thread", args=[seeded.thread.pk])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_a_user_without_a_role_is_refused(client, make_user, seeded):
    client.force_login(make_user("nobody", role=None))
    assert client.get(reverse("chatops:index")).status_code == 403
    assert client.get(reverse("chatops:thread", args=[seeded.thread.pk])).status_code == 403


def test_the_nav_links_to_chat(client, make_user):
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(reverse("chatops:index")).content.decode()
    assert f'href="{reverse("chatops:index")}" aria-current="page"' in page


# --- /chat/ ----------------------------------------------------------------------------------
def test_viewer_reads_the_installations_without_secrets_or_the_retry_button(
    client, make_user, seeded
):
    client.force_login(make_user("vic", roles.VIEWER))
    response = client.get(reverse("chatops:index"))
    assert response.status_code == 200
    page = response.content.decode()
    pk = seeded.workspace.pk
    assert "Acme Slack" in page
    # The addresses to paste, absolute, built from the request.
    assert f"http://testserver/chat/slack/{pk}/commands/" in page
    assert f"http://testserver/chat/slack/{pk}/interactions/" in page
    assert BOT_TOKEN not in page
    assert SIGNING_SECRET not in page
    assert "C0SERVING" in page
    assert "LLM serving" in page
    # Who is who: the unmapped listed first, with how to map them.
    assert 'data-testid="unmapped-help"' in page
    assert page.index("guest-contractor") < page.index("U0BEN")
    # Requests and posts not delivered, with their errors.
    assert "You requested this run yourself." in page
    assert "channel_not_found: the bot is not in C0SERVING" in page
    assert "ratelimited: Slack asked to wait 30 s" in page
    assert 'data-testid="send-again"' not in page


def test_commander_sends_a_failed_post_again(
    client, make_user, seeded, django_capture_on_commit_callbacks
):
    client.force_login(make_user("cara", roles.COMMANDER))
    page = client.get(reverse("chatops:index")).content.decode()
    assert page.count('data-testid="send-again"') == 1  # the failed one, not the retrying
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(reverse("chatops:index"), {"post": seeded.failed.pk})
    assert response.status_code == 302
    assert response["Location"] == reverse("chatops:index") + "#chat-posts"
    seeded.failed.refresh_from_db()
    assert seeded.failed.status == PostStatus.PENDING
    assert seeded.failed.attempts == 0
    assert seeded.failed.last_error == ""
    assert len(queued) == 1  # thread_flush, once this commits
    event = AuditEvent.objects.get(kind=AuditKind.CHAT_CONFIG)
    assert event.username == "cara"
    assert event.old["status"] == "failed"
    assert event.new["status"] == "pending"
    # Not failed any more: a second press is refused with a message, nothing changes.
    response = client.post(reverse("chatops:index"), {"post": seeded.failed.pk}, follow=True)
    assert "only a failed one is sent again" in response.content.decode()
    assert AuditEvent.objects.filter(kind=AuditKind.CHAT_CONFIG).count() == 1


def test_viewer_cannot_send_again(client, make_user, seeded):
    client.force_login(make_user("vic", roles.VIEWER))
    response = client.post(reverse("chatops:index"), {"post": seeded.failed.pk})
    assert response.status_code == 403
    seeded.failed.refresh_from_db()
    assert seeded.failed.status == PostStatus.FAILED


def test_empty_states_say_what_to_do(client, make_user):
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(reverse("chatops:index")).content.decode()
    assert "No chat installed." in page
    assert "docs/chatops.md" in page
    Workspace.objects.create(
        name="Ops Mattermost",
        surface=Surface.MATTERMOST,
        api_url="https://chat.example.com",
        bot_token="t" * 26,
        signing_secret="s" * 26,
        external_team="team1",
        default_channel="town-square",
    )
    page = client.get(reverse("chatops:index")).content.decode()
    assert "No chat installed." not in page
    for empty in ("identities-empty", "interactions-empty", "posts-empty"):
        assert f'data-testid="{empty}"' in page
    assert "/chat/mattermost/" in page
    assert "/commands/" in page
    assert "No team has a channel here" in page


def _more_rows(seeded: Seeded, n: int) -> None:
    for i in range(n):
        ChatIdentity.objects.create(workspace=seeded.workspace, external_user=f"U{i:05}")
        ChatInteraction.objects.create(
            workspace=seeded.workspace,
            key=f"more-{i}",
            kind=InteractionKind.COMMAND,
            action="status",
            external_user=f"U{i:05}",
            received_at=timezone.now(),
        )
        _post(
            seeded.thread,
            PostKind.TIMELINE,
            f"more-{i}",
            Message(text=f"line {i}"),
            at=timezone.now(),
            status=PostStatus.FAILED,
            error="boom",
        )


@pytest.mark.parametrize("extra", [0, 30])
def test_the_pages_cost_a_fixed_number_of_queries(
    client, make_user, seeded, django_assert_max_num_queries, extra
):
    _more_rows(seeded, extra)
    client.force_login(make_user("cara", roles.COMMANDER))
    with django_assert_max_num_queries(16):
        assert client.get(reverse("chatops:index")).status_code == 200
    with django_assert_max_num_queries(14):
        assert client.get(reverse("chatops:thread", args=[seeded.thread.pk])).status_code == 200


def test_lists_are_paginated_each_keeping_the_others_place(client, make_user, seeded):
    _more_rows(seeded, 30)
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(reverse("chatops:index") + "?asked=2").content.decode()
    assert "?asked=2&amp;people=2#chat-people" in page  # the next people page keeps asked=2
    assert "Page 2 of 2" in page


# --- a thread ---------------------------------------------------------------------------------
def test_thread_is_drawn_from_the_stored_posts(client, make_user, seeded):
    client.force_login(make_user("vic", roles.VIEWER))
    response = client.get(reverse("chatops:thread", args=[seeded.thread.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    # The state message as last edited, its buttons drawn disabled.
    assert "(edited)" in page
    assert "<dd>Acknowledged</dd>" in page
    assert "<dd>Triggered</dd>" not in page
    assert page.count("disabled") >= 5
    assert ">Take command</button>" in page
    # The timeline posts in order, then the answer only Ben saw.
    order = [
        page.index(t)
        for t in (
            "Acknowledged by ana",
            "Triage finished",
            "Note by ben",
            "Silence created",
            "You requested run #7",
        )
    ]
    assert order == sorted(order)
    assert "Only visible to Ben" in page
    # Delivery: the failed one with its error (no retry button for a viewer).
    assert "channel_not_found: the bot is not in C0SERVING" in page
    assert "failed after 6 attempts" in page
    assert "retrying after 2 attempts" in page
    assert 'data-testid="send-again"' not in page
    assert reverse("incidents:detail", args=[seeded.incident.pk]) in page
    assert (
        "https://app.slack.com/client/T0ACME/C0SERVING/thread/C0SERVING-1733380000.000100" in page
    )


def test_a_newer_state_not_delivered_is_named_under_the_one_people_see(client, make_user, seeded):
    _post(
        seeded.thread,
        PostKind.STATE_EDIT,
        "state-3",
        _state(seeded.incident, status="Mitigated", commander="ana"),
        at=timezone.now(),
        status=PostStatus.FAILED,
        attempts=6,
        error="message_not_found",
    )
    client.force_login(make_user("cara", roles.COMMANDER))
    page = client.get(reverse("chatops:thread", args=[seeded.thread.pk])).content.decode()
    assert "<dd>Acknowledged</dd>" in page
    assert "<dd>Mitigated</dd>" not in page
    assert 'data-testid="state-newer"' in page
    assert "message_not_found" in page


def test_thread_retry_goes_back_to_the_thread(client, make_user, seeded):
    client.force_login(make_user("ada", roles.ADMIN))
    url = reverse("chatops:thread", args=[seeded.thread.pk])
    assert 'data-testid="send-again"' in client.get(url).content.decode()
    response = client.post(url, {"post": seeded.failed.pk})
    assert response.status_code == 302
    assert response["Location"] == url


def test_a_thread_not_started_yet_says_so(client, make_user):
    workspace = Workspace.objects.create(
        name="W",
        surface=Surface.SLACK,
        api_url="https://slack.com/api/",
        bot_token="x" * 20,
        signing_secret="y" * 20,
        default_channel="C1",
    )
    thread = ChatThread.objects.create(
        incident=IncidentFactory(), workspace=workspace, language="en"
    )
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(reverse("chatops:thread", args=[thread.pk])).content.decode()
    assert 'data-testid="no-state"' in page
    assert 'data-testid="no-posts"' in page
    assert 'data-testid="chat-link"' not in page
    assert client.get(reverse("chatops:thread", args=[thread.pk + 99])).status_code == 404


# --- the incident page's panel ------------------------------------------------------------
def test_incident_panel_lists_the_threads(client, make_user, seeded, chat_panel):
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(reverse("incidents:detail", args=[seeded.incident.pk])).content.decode()
    assert 'data-testid="chat-panel"' in page
    assert reverse("chatops:thread", args=[seeded.thread.pk]) in page
    assert "Thread in Acme Slack" in page
    assert "1 failed" in page
    assert "1 waiting" in page


def test_incident_panel_is_absent_without_a_chat(client, make_user, chat_panel):
    incident = IncidentFactory()
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert 'data-testid="chat-panel"' not in page
