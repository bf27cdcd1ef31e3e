"""The Celery app shared by the web process (which enqueues) and the worker."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _apply_routes(sender: Celery, **_kwargs) -> None:
    from console.celery_routes import BEAT_SCHEDULE, QUEUES, TASK_ROUTES

    sender.conf.task_queues = QUEUES
    sender.conf.task_routes = TASK_ROUTES
    sender.conf.beat_schedule = BEAT_SCHEDULE
