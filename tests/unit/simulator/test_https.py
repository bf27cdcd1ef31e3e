"""The simulator serves its Kubernetes API over HTTPS with a CA it writes into the
kubeconfig, so kubectl and the official client work against it unchanged, while plain
HTTP on the same port keeps serving /metrics and /sim (Prometheus, the CLI, drills)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config

from tests.conftest import need_service
from tests.helpers import free_port, wait_for

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`python -m simulator serve` as a user starts it; its URL and kubeconfig."""
    tmp = tmp_path_factory.mktemp("sim-https")
    port, kubeconfig = free_port(), tmp / "kubeconfig"
    log = open(tmp / "simulator.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "simulator", "serve", "--port", str(port),
         "--kubeconfig", str(kubeconfig), "--startup-delay", "0"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def up():
        if proc.poll() is not None:
            log.seek(0)
            raise AssertionError(f"simulator exited:\n{log.read()[-3000:]}")
        with urllib.request.urlopen(url + "/sim/status", timeout=2):  # noqa: S310
            return kubeconfig.exists()

    wait_for(up, timeout=30, what="the simulator")
    yield url, kubeconfig, tmp
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


def test_the_kubeconfig_names_https_and_the_ca(served):
    url, kubeconfig, _ = served
    cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
    assert cluster["server"] == url.replace("http://", "https://")
    assert "insecure-skip-tls-verify" not in cluster
    assert cluster["certificate-authority-data"]


def test_the_official_client_verifies_the_server_and_reads_the_lws(served):
    _, kubeconfig, _ = served
    api_client = config.new_client_from_config(config_file=str(kubeconfig))
    assert api_client.configuration.verify_ssl
    lws = client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        "leaderworkerset.x-k8s.io", "v1", "llm-serving", "leaderworkersets", "vllm-chat",
        _request_timeout=5,
    )  # fmt: skip
    assert lws["spec"]["replicas"] == 4


def test_a_client_that_does_not_trust_the_ca_is_refused(served):
    url, _, _ = served
    https = url.replace("http://", "https://") + "/version"
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(https, timeout=5, context=ssl.create_default_context())  # noqa: S310


def test_plain_http_still_serves_metrics_and_controls_on_the_same_port(served):
    url, _, _ = served
    with urllib.request.urlopen(url + "/metrics", timeout=5) as response:  # noqa: S310
        assert b"vllm:" in response.read()
    with urllib.request.urlopen(url + "/sim/status", timeout=5) as response:  # noqa: S310
        assert "scenarios" in json.loads(response.read())


def test_a_silent_connection_does_not_hold_up_the_others(served):
    """The first byte is awaited in the connection's thread, not the accept loop."""
    url, _, _ = served
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        started = time.monotonic()
        with urllib.request.urlopen(url + "/healthz", timeout=5) as response:  # noqa: S310
            assert response.status == 200
        assert time.monotonic() - started < 2


def test_kubectl_gets_the_leaderworkersets_over_https(served):
    _, kubeconfig, tmp = served
    # PATH, or the virtualenv (a kubectl shipped as a Python wheel installs there).
    kubectl = shutil.which(
        "kubectl", path=f"{os.environ['PATH']}{os.pathsep}{Path(sys.executable).parent}"
    )
    need_service("kubectl", kubectl is not None, "apt-get install kubectl (see .ci/run)")
    env = {**os.environ, "KUBECACHEDIR": str(tmp / "kube-cache"), "HOME": str(tmp)}
    env.pop("KUBECONFIG", None)
    done = subprocess.run(
        [kubectl, "--kubeconfig", str(kubeconfig), "get", "leaderworkersets", "-o", "json"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = {item["metadata"]["name"] for item in json.loads(done.stdout)["items"]}
    assert names == {"vllm-chat", "vllm-long"}

    # The token is the console worker's least-privilege one; server dry runs change nothing.
    def kubectl_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [kubectl, "--kubeconfig", str(kubeconfig), *args, "--dry-run=server"],
            capture_output=True, text=True, timeout=60, env=env, check=False,
        )  # fmt: skip

    scaled = kubectl_run("scale", "leaderworkerset", "vllm-chat", "--replicas=5")
    assert scaled.returncode == 0, scaled.stderr
    denied = kubectl_run("delete", "configmap", "vllm-router-config")
    assert denied.returncode != 0
    assert 'cannot delete resource "configmaps"' in denied.stderr
