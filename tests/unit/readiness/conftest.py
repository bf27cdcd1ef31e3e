"""The checklist against the real fleet simulator over HTTP (the actions' `sim` fixture)
and a Prometheus stand-in answering DCGM counts."""

import pytest

from actions.k8s import kube_api
from tests.prometheus_standin import StandInPrometheus
from tests.unit.conftest import NS


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus({"DCGM_FI_DEV_GPU_UTIL": 16, "DCGM_FI_DEV_XID_ERRORS": 16})
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    settings.TRIAGE_CACHE_SECONDS = 10
    yield fake
    fake.close()


@pytest.fixture
def worker_api(sim, settings):
    """What the worker's task uses: the production factory on the worker's kubeconfig."""
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 2
    settings.READINESS_NAMESPACES = [NS]
    return kube_api


@pytest.fixture
def admin_api(sim, settings):
    """Someone with kubectl changing the cluster between verifications."""
    return kube_api(sim.kubeconfig("kubernetes-admin"))
