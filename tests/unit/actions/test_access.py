"""The actions page says up front when actions cannot run: Kubernetes not configured or
unreachable, or credentials missing a permission (read-only token against the simulator)."""

import pytest
from django.core.cache import cache

from actions.access import kubernetes_access_check, log_access_at_worker_start
from console import roles

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def page(client, make_user) -> str:
    client.force_login(make_user("vic", roles.VIEWER))
    return client.get("/runbooks/actions/").content.decode()


def test_not_configured_is_a_banner_not_an_error(client, make_user, settings, monkeypatch):
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    html = page(client, make_user)
    assert 'data-testid="k8s-access"' in html
    assert "Kubernetes is not configured" in html


def test_worker_token_is_enough_and_read_only_is_named(sim, settings, client, make_user, caplog):
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    assert kubernetes_access_check().ok
    assert 'data-testid="k8s-access-ok"' in page(client, make_user)
    settings.KUBECONFIG = str(sim.kubeconfig("read-only"))
    access = kubernetes_access_check()
    assert not access.ok
    assert any(m.startswith("patch leaderworkersets/scale") for m in access.missing)
    log_access_at_worker_start()
    assert "missing permission: patch leaderworkersets/scale" in caplog.text


def test_a_worker_without_the_actions_queue_does_not_check(sim, settings, caplog):
    """The notifier (queue "notifications" only) has no Kubernetes credentials: it must
    not log missing permissions at start-up. `sender` is Celery's consumer, as the
    worker_ready signal sends it."""
    from types import SimpleNamespace

    from kombu import Queue

    settings.KUBECONFIG = str(sim.kubeconfig("read-only"))

    def consumer(*queues):
        return SimpleNamespace(task_consumer=SimpleNamespace(queues=[Queue(q) for q in queues]))

    log_access_at_worker_start(sender=consumer("notifications"))
    assert "missing permission" not in caplog.text
    log_access_at_worker_start(sender=consumer("default", "actions"))
    assert "missing permission: patch leaderworkersets/scale" in caplog.text
