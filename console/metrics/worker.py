"""The Celery worker's /metrics: action runs end in the worker's pool processes, so the
worker serves its own counters on WORKER_METRICS_PORT (0: off, as in `make run`).

A worker bootstep runs in the worker's main process, which executes no task: with the
prefork pool every child writes its counters to PROMETHEUS_MULTIPROC_DIR and this server
adds them up at scrape time. Without that directory the children's counters would be
invisible, so the server refuses to start rather than report zeros.
"""

import logging
import os

from celery import bootsteps
from django.conf import settings
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.multiprocess import MultiProcessCollector

log = logging.getLogger(__name__)


class MetricsServerStep(bootsteps.StartStopStep):
    def __init__(self, worker, **kwargs):
        self.server = None
        super().__init__(worker, **kwargs)

    def start(self, worker) -> None:
        port = settings.WORKER_METRICS_PORT
        if not port:
            return
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            log.warning(
                "WORKER_METRICS_PORT=%s but PROMETHEUS_MULTIPROC_DIR is not set: the pool's "
                "counters cannot be collected, so the worker serves no metrics",
                port,
            )
            return
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        self.server, _thread = start_http_server(port, addr="0.0.0.0", registry=registry)  # noqa: S104
        log.info("worker metrics on :%s/metrics", port)

    def stop(self, worker) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server = None
