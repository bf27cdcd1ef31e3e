"""The chat set-up in the Django admin: every page opens; the bot token and the signing
secret are write-only (never rendered back, blank keeps them); the API address goes
through the outgoing guard; every write leaves an audit row without the secrets; an
admin links and unlinks chat users; threads, posts and interactions are read-only."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from chatops.models import ChatIdentity, MappedBy, Surface, TeamChannel, Workspace
from console import roles
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from pager.models import Team
from tests.unit.chatops.test_views import seed_thread

pytestmark = pytest.mark.django_db
TOKEN = "xoxb-9999-8888-the-bot-token"
SECRET = "d41d8cd98f00b204e9800998ecf8427e"
LOCAL_API = "http://127.0.0.1:8099/api/"


@pytest.fixture
def ada(make_user, client):
    user = make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True)
    client.force_login(user)
    return user


@pytest.fixture
def local_api(settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"  # the local Slack stand-in's address


def _form(**changes) -> dict:
    data = {
        "name": "Acme Slack", "surface": Surface.SLACK, "enabled": "on", "api_url": LOCAL_API,
        "bot_token": TOKEN, "signing_secret": SECRET, "external_team": "T0ACME",
        "default_channel": "C0INCIDENTS", "own_channel_severities": '["SEV1", "SEV2"]',
        "channel_prefix": "inc-", "language": "en",
        "team_channels-TOTAL_FORMS": "0", "team_channels-INITIAL_FORMS": "0",
        "team_channels-MIN_NUM_FORMS": "0", "team_channels-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    data.update(changes)
    return data


def _audits() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=AuditKind.CHAT_CONFIG).order_by("pk"))


@pytest.mark.parametrize(
    ("model", "can_add"),
    [("workspace", True), ("chatidentity", False), ("chatthread", False), ("chatpost", False),
     ("chatinteraction", False)],
)  # fmt: skip
def test_every_admin_page_opens(client, ada, model, can_add):
    seeded = seed_thread()
    assert client.get(reverse(f"admin:chatops_{model}_changelist")).status_code == 200
    assert client.get(reverse(f"admin:chatops_{model}_add")).status_code == (
        200 if can_add else 403
    )
    row = {"workspace": seeded.workspace, "chatthread": seeded.thread, "chatpost": seeded.reply,
           "chatidentity": ChatIdentity.objects.first(),
           "chatinteraction": seeded.workspace.interactions.first()}[model]  # fmt: skip
    page = client.get(reverse(f"admin:chatops_{model}_change", args=[row.pk]))
    assert page.status_code == 200
    assert seeded.workspace.bot_token not in page.content.decode()
    assert seeded.workspace.signing_secret not in page.content.decode()


def test_secrets_are_write_only_and_blank_keeps_them(client, ada, local_api):
    response = client.post(reverse("admin:chatops_workspace_add"), _form())
    assert response.status_code == 302, response.content.decode()[:3000]
    workspace = Workspace.objects.get()
    assert (workspace.bot_token, workspace.signing_secret) == (TOKEN, SECRET)
    change = reverse("admin:chatops_workspace_change", args=[workspace.pk])
    page = client.get(change).content.decode()
    assert TOKEN not in page
    assert SECRET not in page
    assert "Leave blank to keep the current value" in page
    # Blank: kept. The other fields change.
    response = client.post(change, _form(bot_token="", signing_secret="", default_channel="C0NEW"))
    assert response.status_code == 302, response.content.decode()[:3000]
    workspace.refresh_from_db()
    assert (workspace.bot_token, workspace.signing_secret) == (TOKEN, SECRET)
    assert workspace.default_channel == "C0NEW"
    # A new token replaces the old one.
    assert (
        client.post(change, _form(bot_token="xoxb-new-token-0001", signing_secret="")).status_code
        == 302
    )
    workspace.refresh_from_db()
    assert workspace.bot_token == "xoxb-new-token-0001"
    assert workspace.signing_secret == SECRET

    added, kept, rotated = _audits()
    assert all(
        a.method == AuditMethod.ADMIN and a.username == "ada" for a in (added, kept, rotated)
    )
    assert added.old is None
    assert added.new["secrets_changed"] == ["bot_token", "signing_secret"]
    assert kept.old["default_channel"] == "C0INCIDENTS"
    assert kept.new["default_channel"] == "C0NEW"
    assert kept.new["secrets_changed"] == []
    assert rotated.new["secrets_changed"] == ["bot_token"]
    for event in (added, kept, rotated):
        stored = json.dumps([event.old, event.new, event.reason])
        assert TOKEN not in stored
        assert SECRET not in stored
        assert "xoxb-new" not in stored


def test_a_new_workspace_needs_its_secrets_and_a_long_enough_secret(client, ada, local_api):
    response = client.post(reverse("admin:chatops_workspace_add"), _form(bot_token=""))
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    response = client.post(reverse("admin:chatops_workspace_add"), _form(signing_secret="short"))
    assert response.status_code == 200
    assert "At least 16 characters." in response.content.decode()
    # A refused form renders no secret back.
    assert TOKEN not in response.content.decode()
    assert not Workspace.objects.exists()
    assert not _audits()


def test_an_internal_api_address_needs_the_allowlist(client, ada):
    response = client.post(reverse("admin:chatops_workspace_add"), _form())
    assert response.status_code == 200
    assert "OUTGOING_URL_ALLOWLIST" in response.content.decode()
    response = client.post(
        reverse("admin:chatops_workspace_add"), _form(api_url="https://user:pw@slack.com/api/")
    )
    assert "user name or password" in response.content.decode()
    assert not Workspace.objects.exists()


def test_team_channels_are_saved_through_the_service_and_audited(client, ada, local_api):
    team = Team.objects.create(slug="llm-serving", name="LLM serving")
    data = _form(**{
        "team_channels-TOTAL_FORMS": "1", "team_channels-0-team": str(team.pk),
        "team_channels-0-channel": "C0SERVING", "team_channels-0-language": "zh-hans",
    })  # fmt: skip
    response = client.post(reverse("admin:chatops_workspace_add"), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    channel = TeamChannel.objects.get()
    assert (channel.team, channel.channel) == (team, "C0SERVING")
    reasons = [a.reason for a in _audits()]
    assert reasons[-1] == "added the chat channel of team llm-serving in Acme Slack"


def test_admin_links_and_unlinks_a_chat_user(client, ada, make_user):
    seed_thread()
    ben = make_user("ben", roles.COMMANDER)
    guest = ChatIdentity.objects.get(external_user="U0GUEST")
    change = reverse("admin:chatops_chatidentity_change", args=[guest.pk])
    assert client.post(change, {"user": ben.pk}).status_code == 302
    guest.refresh_from_db()
    assert (guest.user, guest.mapped_by) == (ben, MappedBy.ADMIN)
    linked = _audits()[-1]
    assert linked.reason == "linked chat user guest-contractor in Acme Slack to ben"
    assert linked.old["user"] is None
    assert linked.new["user"] == "ben"

    changelist = reverse("admin:chatops_chatidentity_changelist")
    response = client.post(changelist, {"action": "unlink", "_selected_action": [guest.pk]})
    assert response.status_code == 302
    guest.refresh_from_db()
    assert (guest.user, guest.mapped_by) == (None, MappedBy.NONE)
    assert _audits()[-1].reason == "unlinked chat user guest-contractor in Acme Slack"


def test_deleting_a_workspace_is_audited(client, ada):
    workspace = seed_thread().workspace
    delete = reverse("admin:chatops_workspace_delete", args=[workspace.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 302
    assert not Workspace.objects.exists()
    removed = _audits()[-1]
    assert removed.reason == f"removed chat workspace Acme Slack (#{workspace.pk})"
    assert removed.new is None
    assert "bot_token" not in removed.old


def test_a_viewer_has_no_admin(client, make_user):
    client.force_login(make_user("vic", roles.VIEWER, is_staff=True))
    response = client.get(reverse("admin:chatops_workspace_changelist"))
    assert response.status_code == 403
