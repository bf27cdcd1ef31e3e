"""The Celery queues, by name.

config/celery_routes.py declares these queues and routes every task to one of them; the
platform reads the names to tell which workers consume what (console.liveness) and how
much waits in each (console.metrics.series) without importing the configuration.
"""

DEFAULT = "default"
# Action runs. A worker counts as "a worker" (/readyz, the banner) when it consumes this.
ACTIONS = "actions"
# Outgoing notifications wait on other people's servers: a queue (and workers) of their
# own, so a slow or dead target never delays an action run behind it.
NOTIFICATIONS = "notifications"

QUEUE_NAMES = (DEFAULT, ACTIONS, NOTIFICATIONS)  # the order /readyz and /metrics list them in
