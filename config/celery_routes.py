"""Every task's queue and every periodic task, in one place.

tests/unit/console/test_celery_routes.py fails when a task is registered without a route here,
so a new task cannot silently land on a queue no worker consumes.
"""

from datetime import timedelta

from kombu import Exchange, Queue

# Each queue its own exchange and routing key: with a shared default binding a message
# for "actions" would also land on "default" and run twice.
QUEUES = (
    Queue("default", Exchange("default"), routing_key="default"),
    Queue("actions", Exchange("actions"), routing_key="actions"),
    # Outgoing notifications wait on other people's servers: their own queue, so a slow
    # or dead target never delays an action run behind it.
    Queue("notifications", Exchange("notifications"), routing_key="notifications"),
)

TASK_ROUTES = {
    "incidents.tasks.webhook_receipt_replay": {"queue": "default"},
    "incidents.tasks.webhook_receipts_prune": {"queue": "default"},
    "runbooks.tasks.action_run_execute": {"queue": "actions"},
    "runbooks.tasks.action_runs_recover": {"queue": "default"},
    "runbooks.tasks.config_revisions_capture": {"queue": "default"},
    "runbooks.tasks.drill_run_inject": {"queue": "default"},
    "runbooks.tasks.drill_run_finish": {"queue": "default"},
    "runbooks.tasks.drill_runs_watch": {"queue": "default"},
    "runbooks.tasks.guard_watch_evaluate": {"queue": "default"},
    "runbooks.tasks.guard_watches_recover": {"queue": "default"},
    "runbooks.tasks.auto_triage_evaluate": {"queue": "default"},
    "runbooks.tasks.auto_triage_drain": {"queue": "default"},
    "runbooks.tasks.auto_triage_sweep": {"queue": "default"},
    "postmortems.tasks.postmortem_draft": {"queue": "default"},
    "postmortems.tasks.action_items_remind_overdue": {"queue": "default"},
    "readiness.tasks.checklist_verify": {"queue": "default"},
    "readiness.tasks.checklists_refresh": {"queue": "default"},
    "notifications.tasks.delivery_send": {"queue": "notifications"},
    "notifications.tasks.action_items_overdue_notify": {"queue": "default"},
    "notifications.tasks.deliveries_requeue": {"queue": "default"},
}

BEAT_SCHEDULE = {
    "prune-webhook-receipts": {
        "task": "incidents.tasks.webhook_receipts_prune",
        "schedule": timedelta(hours=1),
    },
    "recover-action-runs": {
        "task": "runbooks.tasks.action_runs_recover",
        "schedule": timedelta(seconds=60),
    },
    "remind-overdue-action-items": {
        "task": "postmortems.tasks.action_items_remind_overdue",
        "schedule": timedelta(hours=1),  # one notification per item and day (deduplicated)
    },
    "watch-drills": {
        "task": "runbooks.tasks.drill_runs_watch",
        "schedule": timedelta(seconds=10),  # link the incident, stop conditions, recovery
    },
    "capture-config-revisions": {
        "task": "runbooks.tasks.config_revisions_capture",
        "schedule": timedelta(seconds=30),
    },
    "recover-guard-watches": {
        "task": "runbooks.tasks.guard_watches_recover",
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
        "schedule": timedelta(hours=1),  # once per item and due date (deduplicated)
    },
    "requeue-notifications": {
        "task": "notifications.tasks.deliveries_requeue",
        "schedule": timedelta(seconds=60),  # what a broker outage left unqueued
    },
}
