"""The Celery app shared by the web process (which enqueues) and the worker."""

import os

from celery import Celery, signals
from kombu.transport import TRANSPORT_ALIASES

from config.celery_routes import QUEUES, TASK_ROUTES, beat_schedule
from console.localstack.processes import die_with_parent

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Embedded mode's broker: kombu's filesystem transport, with each message written whole
# before a consumer can see it (console/localstack/fs_broker.py says why).
TRANSPORT_ALIASES["filesystem"] = "console.localstack.fs_broker:Transport"

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# By dotted path: the worker imports them once Django is set up (the heartbeat writes
# rows). This module is imported with the settings, before any model can load.
app.steps["consumer"].add("console.liveness.heartbeat:WorkerHeartbeatStep")
app.steps["worker"].add("console.metrics.worker:MetricsServerStep")
_worker_pid: int | None = None


@app.on_after_configure.connect
def _apply_routes(sender: Celery, **_kwargs) -> None:
    sender.conf.task_queues = QUEUES
    sender.conf.task_routes = TASK_ROUTES
    sender.conf.beat_schedule = beat_schedule()


@signals.worker_init.connect
def _remember_worker_pid(**_kwargs) -> None:
    global _worker_pid
    _worker_pid = os.getpid()


@signals.beat_embedded_init.connect
def _beat_dies_with_its_worker(**_kwargs) -> None:
    """Embedded beat (`worker -B`) is a child process the pool's death signal does not
    cover: if the worker is SIGKILLed or OOM-killed, beat would live on and keep sending
    due tasks that no worker of this stack consumes. Have the kernel stop it instead."""
    die_with_parent(_worker_pid or os.getppid())
