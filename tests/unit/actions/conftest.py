"""The action kinds and the action-run services against the real fleet simulator (its
fixtures are in tests/unit/conftest.py), over real HTTP, through the official
`kubernetes` client configured from a kubeconfig file, as the Celery worker runs them."""

from __future__ import annotations

import pytest

from actions.k8s import kube_api
from actions.kinds import Context, kind_for


@pytest.fixture
def no_kubernetes(settings, monkeypatch):
    """For action runs planned without a cluster: no kubeconfig, not in a pod."""
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


@pytest.fixture
def reader_api(sim, settings):
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 5
    return kube_api(sim.kubeconfig("read-only"))


@pytest.fixture
def prepare(api):
    """clean -> read -> plan, as the request service does; returns (kind, params, current,
    plan)."""

    def _prepare(kind_name: str, params: dict, ctx: Context | None = None):
        kind = kind_for(kind_name)
        clean = kind.clean(params)
        current = kind.read(api, clean)
        return kind, clean, current, kind.plan(current, clean, ctx or Context())

    return _prepare
