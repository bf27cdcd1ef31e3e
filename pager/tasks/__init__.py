"""The pager's Celery tasks, one module per part; imported here so Celery's
autodiscovery (which imports `pager.tasks`) registers them all."""

from pager.tasks import escalation, heartbeats, maintenance, paging, schedules  # noqa: F401
