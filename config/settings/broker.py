"""Celery (the CELERY_ namespace config/celery.py reads): the broker, JSON only, never
eager, acknowledged late. CELERY_BROKER_URL (Redis in production), else kombu's
filesystem broker under VAR_DIR (embedded mode). Queues, routes and the beat schedule
are config/celery_routes.py (one place to check)."""

from config.settings.env import VAR_DIR, env

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
BROKER_DIR = VAR_DIR / "broker"
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport: one folder of message files both ways, so a web
    # process and a worker process on the same machine share a queue with no server.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        # Broadcast/control exchanges; the default is ./control in the working directory.
        "control_folder": str(BROKER_DIR / "control"),
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Longer than the longest task time limit so a slow task is not redelivered.
        "visibility_timeout": 3600,
        "socket_timeout": 5,
        "socket_connect_timeout": 5,
    }
    # A key prefix lets several consoles (or concurrent test runs) share one Redis
    # database without reading each other's queues.
    if prefix := env.str("CELERY_BROKER_KEY_PREFIX", default=""):
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = prefix
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TASK_DEFAULT_QUEUE = "default"  # console.queues.DEFAULT
CELERY_TASK_CREATE_MISSING_QUEUES = False
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
