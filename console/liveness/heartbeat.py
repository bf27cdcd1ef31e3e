"""The worker's heartbeat: a Celery consumer bootstep that records "alive" every
WORKER_HEARTBEAT_SECONDS in console.models.WorkerHeartbeat.

Why a consumer step on the consumer's own timer, and not a beat task or a thread:
- a beat task only proves beat runs (and beat is embedded in the worker in `make run`);
  it would be queued behind the very backlog a stuck worker leaves;
- a free-running thread keeps beating while the consumer is wedged. The consumer's timer
  is driven by its event loop (Redis), so a loop that stops consuming stops beating;
  a stopped (SIGSTOP) or dead worker beats no more, whatever the transport.
The step stops with the consumer (a lost broker connection stops beating until it is
back) and marks the row stopped on a clean shutdown. Each beat says which queues the
worker consumes, so the actions worker and the notifier are told apart (selectors.py).

config/celery.py adds the step by its dotted path: the worker imports this module once
Django is set up, as it reads the models.
"""

import logging
import os

from celery import bootsteps
from django.conf import settings
from django.db import close_old_connections

from console.liveness.services import worker_heartbeat_record, worker_heartbeat_stop

log = logging.getLogger(__name__)


def consumed_queues(consumer) -> list[str]:
    """The queues a worker's consumer takes from: its live task consumer's (control
    commands may add or cancel one), else the worker's -Q (every queue without it)."""
    task_consumer = getattr(consumer, "task_consumer", None)
    if task_consumer is not None and task_consumer.queues:
        return sorted({queue.name for queue in task_consumer.queues})
    return sorted(consumer.app.amqp.queues.consume_from)


class WorkerHeartbeatStep(bootsteps.StartStopStep):
    requires = ("celery.worker.consumer.tasks:Tasks",)  # beat once tasks are consumed

    def __init__(self, c, **kwargs):
        self.tref = None
        super().__init__(c, **kwargs)

    def start(self, c) -> None:
        # Well inside the staleness window, so one late beat does not flap the banner.
        interval = min(
            settings.WORKER_HEARTBEAT_SECONDS, settings.WORKER_HEARTBEAT_STALE_SECONDS / 3
        )
        self._beat(c, starting=True)
        self.tref = c.timer.call_repeatedly(interval, self._beat, (c,))

    def stop(self, c) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    def shutdown(self, c) -> None:
        self.stop(c)
        self._write("stop", c.hostname)

    def _beat(self, c, starting: bool = False) -> None:
        self._write("beat", c.hostname, starting=starting, queues=consumed_queues(c))

    @staticmethod
    def _write(
        what: str, hostname: str, starting: bool = False, queues: list[str] | None = None
    ) -> None:
        try:
            close_old_connections()  # a connection broken since the last beat is reopened
            if what == "stop":
                worker_heartbeat_stop(hostname=hostname)
            else:
                worker_heartbeat_record(
                    hostname=hostname, pid=os.getpid(), starting=starting, queues=queues
                )
        except Exception:  # a database hiccup must not kill the worker; the beat goes stale
            log.warning("worker heartbeat (%s) not recorded", what, exc_info=True)
