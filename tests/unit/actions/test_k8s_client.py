"""The client factory and error mapping, against the simulator and against servers that
misbehave the way real networks do (closed port, silent peer, 5xx)."""

import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from actions.k8s import kube_api
from actions.kinds import (
    ActionError,
    Context,
    Forbidden,
    Invalid,
    TargetNotFound,
    Transient,
    kind_for,
)
from simulator.kubeconfig import write_kubeconfig
from tests.unit.conftest import NS


def test_factory_reads_settings_kubeconfig_and_caches_until_it_changes(sim, settings):
    path = sim.kubeconfig("console-worker")
    settings.KUBECONFIG = str(path)
    first, second = kube_api(), kube_api()
    assert first.api_client is second.api_client
    assert first.host == sim.url
    # The simulator writes a fresh kubeconfig (new token) on every start: picked up.
    reader = sim.kubeconfig("read-only")
    os.replace(reader, path)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    third = kube_api()
    assert third.api_client is not first.api_client
    with pytest.raises(Forbidden):
        third.patch_scale(NS, "vllm-chat", {"spec": {"replicas": 5}})


def test_not_configured_says_what_to_set(settings, monkeypatch, tmp_path):
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ActionError, match="Kubernetes is not configured: set KUBECONFIG"):
        kube_api()
    settings.KUBECONFIG = str(tmp_path / "missing")
    with pytest.raises(ActionError, match="does not exist"):
        kube_api()
    (tmp_path / "garbage").write_text("clusters: 7\n")
    with pytest.raises(ActionError, match="could not be loaded"):
        kube_api(tmp_path / "garbage")


def test_read_only_token_is_forbidden_and_the_message_names_the_permission(sim, reader_api):
    kind = kind_for("scale_lws")
    params = kind.clean({"lws": "vllm-chat", "replicas": 5})
    current = kind.read(reader_api, params)  # reading is allowed
    plan = kind.plan(current, params, Context())
    with pytest.raises(Forbidden) as exc:
        kind.apply(reader_api, params, current, plan)
    assert "lacks the permission 'patch leaderworkersets/scale'" in exc.value.message
    assert "system:serviceaccount:llm-serving:read-only" in exc.value.message
    assert not exc.value.retryable


def test_404_and_422_are_mapped(api):
    with pytest.raises(TargetNotFound, match='configmaps "nope" not found'):
        api.get_configmap(NS, "nope")
    with pytest.raises(Invalid, match=r"spec\.replicas: Invalid value: -1"):
        api.patch_scale(NS, "vllm-chat", {"spec": {"replicas": -1}})


def _kubeconfig_for(tmp_path, url):
    path = tmp_path / "kubeconfig-elsewhere"
    write_kubeconfig(path, server=url, token="t")
    return path


def test_closed_port_is_transient_and_fast(tmp_path, settings):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    api = kube_api(_kubeconfig_for(tmp_path, f"http://127.0.0.1:{port}"))
    started = time.monotonic()
    with pytest.raises(Transient, match="Connection refused") as exc:
        api.get_lws(NS, "vllm-chat")
    assert time.monotonic() - started < 2
    assert exc.value.retryable


def test_silent_server_times_out_as_transient(tmp_path, settings):
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 0.5
    with socket.socket() as listener:  # accepts connections (backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        api = kube_api(_kubeconfig_for(tmp_path, url))
        started = time.monotonic()
        with pytest.raises(Transient, match=r"did not answer within 0\.5 s"):
            api.get_node("gpu-node-0")
        assert time.monotonic() - started < 3  # one attempt: the client does not retry


class _Unavailable(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"kind": "Status", "code": 503, "message": "etcd is unhappy"})
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


def test_5xx_is_transient(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        api = kube_api(_kubeconfig_for(tmp_path, f"http://127.0.0.1:{httpd.server_address[1]}"))
        with pytest.raises(Transient, match="answered 503 on get pods: etcd is unhappy"):
            api.get_pod(NS, "vllm-chat-0")
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
