"""Fixtures for the notification tests: a local HTTP receiver, targets and rules, the
queue replaced by a list (these tests run the task themselves), and one person per role."""

import pytest

from console import roles
from notifications import tasks
from notifications.models import Rule, Target, TargetKind
from tests.unit.notifications.receiver import Receiver

SECRET = "s3cret-signing-key-for-tests"


@pytest.fixture
def receiver(settings):
    # The guard (console/outgoing) refuses loopback unless the operator allows it.
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def queued(monkeypatch):
    """Delivery ids handed to the broker, in order (nothing reaches a real broker)."""
    sent: list[int] = []

    def apply_async(args, **kwargs):
        sent.append(args[0])

    monkeypatch.setattr(tasks.delivery_send_task, "apply_async", apply_async)
    return sent


@pytest.fixture
def webhook_target(receiver):
    return Target.objects.create(
        name="ops-webhook", kind=TargetKind.WEBHOOK, url=f"{receiver.url}/hook", secret=SECRET
    )


@pytest.fixture
def make_rule():
    def _make(*targets, **fields):
        rule = Rule.objects.create(name=fields.pop("name", "all"), **fields)
        rule.targets.set(targets)
        return rule

    return _make


@pytest.fixture
def people(make_user):
    return {
        "vic": make_user("vic", roles.VIEWER),
        "rita": make_user("rita", roles.RESPONDER),
        "cara": make_user("cara", roles.COMMANDER),
        "cole": make_user("cole", roles.COMMANDER),
        "ada": make_user("ada", roles.ADMIN, is_staff=True),
    }


def send(delivery_id: int) -> None:
    """Run the delivery task here, as the worker would, retries included (eagerly: the
    backoff's waits are the worker's business, tested in tests/integration)."""
    tasks.delivery_send_task.apply(args=[delivery_id])
