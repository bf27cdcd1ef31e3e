"""The Kubernetes client's calls have an overall deadline (issue 23, finding 3): its own
timeout bounds each read, so an API server (or anything posing as one) that drips a
header line every half second held an action's worker for as long as it liked."""

import time

import pytest

from actions.k8s import kube_api
from actions.kinds import Transient
from simulator.kubeconfig import write_kubeconfig
from tests.unit.conftest import NS
from tests.unit.console.outgoing_servers import Dripper


@pytest.fixture
def dripper():
    server = Dripper()
    yield server
    server.close()


def test_an_api_server_that_drips_is_cut_at_the_deadline(tmp_path, settings, dripper):
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 1.0
    path = tmp_path / "kubeconfig-dripping"
    write_kubeconfig(path, server=dripper.url, token="t")
    api = kube_api(path)
    started = time.monotonic()
    with pytest.raises(Transient, match=r"did not answer within 1 s \(get leaderworkersets\)"):
        api.get_lws(NS, "vllm-chat")
    assert time.monotonic() - started < 10
    assert dripper.released.wait(10), "the connection outlived the call"
