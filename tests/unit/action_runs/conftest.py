import pytest


@pytest.fixture(autouse=True)
def no_kubernetes(settings, monkeypatch):
    """Action runs here are planned without a cluster: no kubeconfig, not in a pod."""
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
