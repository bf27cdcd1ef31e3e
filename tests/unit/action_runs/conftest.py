import pytest

from tests.unit.actions.conftest import sim  # noqa: F401  (the simulated cluster)


@pytest.fixture(autouse=True)
def no_kubernetes(settings, monkeypatch):
    """Action runs here are planned without a cluster: no kubeconfig, not in a pod."""
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
