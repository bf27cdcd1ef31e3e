"""How the console reports on itself: its workers' heartbeat (/readyz, the page banner),
its own /metrics, and its log."""

from config.settings.env import env

# Worker liveness (console/liveness/): each worker beats every WORKER_HEARTBEAT_SECONDS;
# none within WORKER_HEARTBEAT_STALE_SECONDS means no worker is alive (/readyz, banner).
WORKER_HEARTBEAT_SECONDS = env.float("WORKER_HEARTBEAT_SECONDS", default=15.0)
WORKER_HEARTBEAT_STALE_SECONDS = env.int("WORKER_HEARTBEAT_STALE_SECONDS", default=60)
# The console's own /metrics (console/metrics/series.py): a bearer token Prometheus must send
# (empty: open), and the port the Celery worker serves its metrics on (0: none).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
WORKER_METRICS_PORT = env.int("WORKER_METRICS_PORT", default=0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # apprise's own warnings can name an ntfy topic or a chat (as good as a secret);
        # notifications and the pager keep what they need from it in their own rows.
        "apprise": {"level": "WARNING", "propagate": False},
    },
}
