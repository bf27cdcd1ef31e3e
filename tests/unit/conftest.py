"""Fixtures shared by the unit tests of several apps: the fleet simulator behind its real
HTTP handler, and a KubeApi built from a kubeconfig for it, as the Celery worker builds
one (actions, readiness, drills and postmortems talk to it).

The simulator's HTTP handler and fleet are the ones `python -m simulator serve` runs; the
fleet's controllers only move when a test calls `tick()`, so each test decides when "LWS"
reacts (recreates a deleted group, reschedules pods off a cordoned node).
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer

import pytest

from actions.k8s import kube_api
from simulator.k8s_auth import token_for
from simulator.kubeconfig import write_kubeconfig
from simulator.server import Simulator, _handler

NS = "llm-serving"


class SimServer:
    def __init__(self, sim: Simulator, httpd: ThreadingHTTPServer, tmp_path) -> None:
        self.sim, self.httpd, self.tmp_path = sim, httpd, tmp_path
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self.store = sim.store

    def kubeconfig(self, user: str = "console-worker"):
        path = self.tmp_path / f"kubeconfig-{user}"
        write_kubeconfig(path, server=self.url, token=token_for(self.sim.tokens, user))
        return path

    def tick(self, seconds: float = 1.0) -> None:
        with self.sim.lock:
            self.sim.fleet.tick(seconds)


@pytest.fixture
def sim(tmp_path):
    simulator = Simulator(seed=0, speed=1.0, startup_delay_s=0.0)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(simulator))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield SimServer(simulator, httpd, tmp_path)
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture
def api(sim, settings):
    """A KubeApi built by the production factory from settings KUBECONFIG (worker token)."""
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 5
    return kube_api()
