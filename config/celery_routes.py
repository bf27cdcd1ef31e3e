"""Every task's queue and every periodic task, in one place.

tests/unit/console/test_celery_routes.py fails when a task is registered without a route here,
so a new task cannot silently land on a queue no worker consumes.
"""

from datetime import timedelta

from django.conf import settings
from kombu import Exchange, Queue

from console.queues import ACTIONS, NOTIFICATIONS, QUEUE_NAMES

# The names are console.queues' (the platform reads them without importing this). Each
# queue its own exchange and routing key: with a shared default binding a message for
# "actions" would also land on "default" and run twice.
QUEUES = tuple(Queue(name, Exchange(name), routing_key=name) for name in QUEUE_NAMES)

TASK_ROUTES = {
    "incidents.tasks.webhook_receipt_replay": {"queue": "default"},
    "incidents.tasks.webhook_receipts_prune": {"queue": "default"},
    "incidents.tasks.retention_run": {"queue": "default"},
    "incidents.tasks.archive_run": {"queue": "default"},
    "incidents.tasks.restore_run": {"queue": "default"},
    "incidents.tasks.alertmanager_reconcile": {"queue": "default"},
    "actions.tasks.action_run_execute": {"queue": ACTIONS},
    "actions.tasks.action_runs_recover": {"queue": "default"},
    "actions.tasks.config_revisions_capture": {"queue": "default"},
    "drills.tasks.drill_run_inject": {"queue": "default"},
    "drills.tasks.drill_run_finish": {"queue": "default"},
    "drills.tasks.drill_runs_watch": {"queue": "default"},
    "actions.tasks.guard_watch_evaluate": {"queue": "default"},
    "actions.tasks.guard_watches_recover": {"queue": "default"},
    "runbooks.tasks.auto_triage_evaluate": {"queue": "default"},
    "runbooks.tasks.auto_triage_drain": {"queue": "default"},
    "runbooks.tasks.auto_triage_sweep": {"queue": "default"},
    # The names actions' and drills' tasks had before 2026-12 (issue 24), still registered
    # for messages queued before the upgrade: routed as they were. Remove with them.
    "runbooks.tasks.action_run_execute": {"queue": ACTIONS},
    "runbooks.tasks.action_runs_recover": {"queue": "default"},
    "runbooks.tasks.config_revisions_capture": {"queue": "default"},
    "runbooks.tasks.drill_run_inject": {"queue": "default"},
    "runbooks.tasks.drill_run_finish": {"queue": "default"},
    "runbooks.tasks.drill_runs_watch": {"queue": "default"},
    "runbooks.tasks.guard_watch_evaluate": {"queue": "default"},
    "runbooks.tasks.guard_watches_recover": {"queue": "default"},
    "postmortems.tasks.postmortem_draft": {"queue": "default"},
    "readiness.tasks.checklist_verify": {"queue": "default"},
    "readiness.tasks.checklists_refresh": {"queue": "default"},
    "notifications.tasks.delivery_send": {"queue": NOTIFICATIONS},
    "notifications.tasks.action_items_overdue_notify": {"queue": "default"},
    "notifications.tasks.deliveries_requeue": {"queue": "default"},
    # The pager: pages go out on the notifier workers, like notifications.
    "pager.tasks.escalation.tick": {"queue": "default"},
    "pager.tasks.escalation.start": {"queue": "default"},
    "pager.tasks.escalation.advance": {"queue": "default"},
    "pager.tasks.escalation.acknowledge": {"queue": "default"},
    "pager.tasks.escalation.stop": {"queue": "default"},
    "pager.tasks.paging.page_send": {"queue": NOTIFICATIONS},
    "pager.tasks.paging.pages_requeue": {"queue": "default"},
    "pager.tasks.heartbeats.heartbeats_check": {"queue": "default"},
    "pager.tasks.maintenance.maintenance_summaries_write": {"queue": "default"},
    "pager.tasks.schedules.ical_refresh_due": {"queue": "default"},
    "pager.tasks.schedules.ical_refresh": {"queue": "default"},
    # Chat: a press or command is answered on the default queue (it acts through the
    # services); posts to the chat wait on its servers, on the notifier workers.
    "chatops.tasks.interaction_run": {"queue": "default"},
    "chatops.tasks.thread_flush": {"queue": NOTIFICATIONS},
    "chatops.tasks.post_send": {"queue": NOTIFICATIONS},
    "chatops.tasks.posts_requeue": {"queue": "default"},
}

BEAT_SCHEDULE = {
    "reconcile-alertmanager": {
        "task": "incidents.tasks.alertmanager_reconcile",
        # Silenced alerts get no resolved notification: ask Alertmanager what it holds.
        # The interval is ALERTMANAGER_RECONCILE_SECONDS (beat_schedule, below).
        "schedule": timedelta(seconds=60),
    },
    "prune-webhook-receipts": {
        "task": "incidents.tasks.webhook_receipts_prune",
        "schedule": timedelta(hours=1),
    },
    "archive-resolved-incidents": {
        "task": "incidents.tasks.retention_run",
        # Daily; a run is a no-op while RETENTION_RESOLVED_DAYS is 0.
        "schedule": timedelta(hours=24),
    },
    "recover-action-runs": {
        "task": "actions.tasks.action_runs_recover",
        "schedule": timedelta(seconds=60),
    },
    "watch-drills": {
        "task": "drills.tasks.drill_runs_watch",
        "schedule": timedelta(seconds=10),  # link the incident, stop conditions, recovery
    },
    "capture-config-revisions": {
        "task": "actions.tasks.config_revisions_capture",
        "schedule": timedelta(seconds=30),
    },
    "recover-guard-watches": {
        "task": "actions.tasks.guard_watches_recover",
        "schedule": timedelta(seconds=60),
    },
    "auto-triage-open-incidents": {
        "task": "runbooks.tasks.auto_triage_sweep",
        "schedule": timedelta(seconds=60),  # at most 50 open incidents, newest first
    },
    "refresh-readiness-checklists": {
        "task": "readiness.tasks.checklists_refresh",
        "schedule": timedelta(minutes=15),  # the pages read the stored result, never the cluster
    },
    "notify-overdue-action-items": {
        "task": "notifications.tasks.action_items_overdue_notify",
        # Targets once per item and due date; inbox and reminder webhook once a day.
        "schedule": timedelta(hours=1),
    },
    "requeue-notifications": {
        "task": "notifications.tasks.deliveries_requeue",
        "schedule": timedelta(seconds=60),  # what a broker outage left unqueued
    },
    "pager-escalation-tick": {
        "task": "pager.tasks.escalation.tick",
        # Advances every due escalation, expires acknowledgements, starts what a lost
        # start task did not. The interval is PAGER_TICK_SECONDS (beat_schedule, below);
        # a tick older than one interval is dropped: after a broker outage the next one
        # does all the work, with no backlog of ticks.
        "schedule": timedelta(seconds=5),
        "options": {"expires": 5},
    },
    # On both queues, so one dead worker pool does not silence the check (the two runs
    # never act on one heartbeat twice: SKIP LOCKED per heartbeat); a check that waited
    # in a backlog is stale (expires).
    "pager-heartbeats-check": {
        "task": "pager.tasks.heartbeats.heartbeats_check",
        "schedule": timedelta(seconds=30),
        "options": {"queue": "default", "expires": 30},
    },
    "pager-heartbeats-check-notifier": {
        "task": "pager.tasks.heartbeats.heartbeats_check",
        "schedule": timedelta(seconds=30),
        "options": {"queue": NOTIFICATIONS, "expires": 30},
    },
    "pager-maintenance-summaries": {
        "task": "pager.tasks.maintenance.maintenance_summaries_write",
        "schedule": timedelta(seconds=60),  # each ended occurrence summarised once
    },
    "requeue-pages": {
        "task": "pager.tasks.paging.pages_requeue",
        "schedule": timedelta(seconds=60),  # pages a broker outage or a dead worker left behind
    },
    "refresh-pager-calendars": {
        "task": "pager.tasks.schedules.ical_refresh_due",
        # Each schedule's own ical_refresh_minutes decides when it is read again.
        "schedule": timedelta(minutes=5),
    },
    "requeue-chat-posts": {
        "task": "chatops.tasks.posts_requeue",
        # Posts due a retry, and those a broker outage or a dead worker left behind; the
        # interval is CHAT_REQUEUE_SECONDS (beat_schedule, below).
        "schedule": timedelta(seconds=20),
        "options": {"expires": 20},
    },
}


def beat_schedule() -> dict[str, dict[str, object]]:
    """BEAT_SCHEDULE with the intervals the settings choose; called once Celery reads its
    configuration (config/celery.py), when Django's settings are loaded: this module is
    imported before they are, so it cannot read them at import."""
    schedule = {name: dict(entry) for name, entry in BEAT_SCHEDULE.items()}
    schedule["reconcile-alertmanager"]["schedule"] = timedelta(
        seconds=settings.ALERTMANAGER_RECONCILE_SECONDS
    )
    tick = float(settings.PAGER_TICK_SECONDS)
    schedule["pager-escalation-tick"]["schedule"] = timedelta(seconds=tick)
    schedule["pager-escalation-tick"]["options"] = {"expires": tick}
    chat = float(settings.CHAT_REQUEUE_SECONDS)
    schedule["requeue-chat-posts"]["schedule"] = timedelta(seconds=chat)
    schedule["requeue-chat-posts"]["options"] = {"expires": chat}
    return schedule
