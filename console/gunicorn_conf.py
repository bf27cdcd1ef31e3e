"""gunicorn settings for production (docker-compose.yml, the image) and the benches:
`gunicorn -c python:console.gunicorn_conf console.wsgi:application --bind ...`.

Command-line flags and GUNICORN_CMD_ARGS still override any of these.
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
timeout = 30
accesslog = "-"
