"""Shared by the core's chat tests (test_interactions.py, test_actions_*.py), loaded
with `pytest_plugins`: the local chat servers admitted, the broker replaced by a list of
the tasks sent, four people mapped by email, and a request received and run as the
worker runs it."""

from pathlib import Path
from uuid import uuid4

import pytest
from celery import current_app
from django.conf import settings as django_settings

from chatops.models import ChatInteraction, InteractionKind
from chatops.requests import ChatRequest
from chatops.services.interactions import interaction_receive, interaction_run
from console import roles
from console.audit.models import AuditEvent, AuditKind
from tests.chat_slack_server import CHANNEL

pytest_plugins = ["tests.chat_slack_server", "tests.chat_mattermost_server"]

CATALOGUE = Path(django_settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"


@pytest.fixture
def chat_env(settings, monkeypatch):
    """Loopback chat servers admitted, the console's address known, no cluster. Not
    autouse: this module is a plugin (pytest_plugins), whose autouse fixtures would reach
    every test of the session; modules ask for it with their pytestmark."""
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    settings.NOTIFY_CONSOLE_URL = "https://console.example.com"
    settings.KUBECONFIG = ""  # previews say "not configured"; runs are still recorded
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


@pytest.fixture
def sent(monkeypatch):
    """(task name, args) of every task handed to the broker."""
    tasks: list[tuple[str, tuple]] = []
    app = current_app._get_current_object()

    def send_task(name, args=None, kwargs=None, **options):
        tasks.append((name, tuple(args or ())))

    monkeypatch.setattr(app, "send_task", send_task)
    return tasks


@pytest.fixture
def people(make_user, slack_server):
    found = {}
    for name, role, chat_id in (
        ("vic", roles.VIEWER, "UVIC"),
        ("rita", roles.RESPONDER, "URITA"),
        ("cara", roles.COMMANDER, "UCARA"),
        ("cole", roles.COMMANDER, "UCOLE"),
    ):
        found[name] = make_user(name, role, email=f"{name}@example.com")
        slack_server.add_user(chat_id, name, email=f"{name}@example.com")
    slack_server.add_user("UNOBODY", "stranger", email="stranger@elsewhere.example")
    return found


def ask(workspace, server, action, value=None, *, user="URITA", kind=InteractionKind.BUTTON,
        key=None, trigger=True, reply=True, channel=CHANNEL):  # fmt: skip
    value = dict(value or {})
    request = ChatRequest(
        surface=workspace.surface, workspace_id=workspace.pk, kind=kind,
        key=key or uuid4().hex, external_user=user, action=action,
        incident_id=value.get("incident"), args=value, channel=channel,
        reply_url=server.response_url() if reply else "",
        trigger=server.new_trigger() if trigger else "",
    )  # fmt: skip
    return interaction_receive(request=request)


def run(workspace, server, action, value=None, **kw) -> ChatInteraction:
    receipt = ask(workspace, server, action, value, **kw)
    interaction_run(interaction_id=receipt.interaction_id)
    return ChatInteraction.objects.get(pk=receipt.interaction_id)


def answers(server) -> list[str]:
    """What people were told, in order: replies through response URLs and ephemerals."""
    said = [body.get("text", "") for bodies in server.responses.values() for body in bodies]
    return said + [e.get("text", "") for e in server.ephemerals]


def audit_rows():
    return list(AuditEvent.objects.filter(kind=AuditKind.CHAT_ACTION).order_by("id"))
