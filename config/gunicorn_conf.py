"""gunicorn settings for production (docker-compose.yml, the image, deploy/k8s) and the
benches: `gunicorn -c python:config.gunicorn_conf config.wsgi:application --bind ...`.
Command-line flags and GUNICORN_CMD_ARGS still override any of these.

Sync workers, WEB_CONCURRENCY of them (3 by default, for 2 CPUs). On 2 CPUs the storm
bench (tests/bench/ingest_e2e.py) measured no gain from more workers (4) or from
threads (3 x 2, 2 x 4): the same CPU per request within noise, and each request holds
one database connection for its whole transaction either way. Threads would save
memory (2 x 4: 130 MiB less resident), which `make run` takes on SQLite (runstack).
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
timeout = 30
accesslog = "-"
