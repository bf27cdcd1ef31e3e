# The console's image: gunicorn by default; the Celery worker, beat, the migration Job and
# the demo simulator run from the same image with another command (deploy/k8s,
# docker-compose.yml). Two stages: the first builds the virtualenv from the runtime lock
# (requirements-runtime.lock: pyproject's dependencies only, every one pinned with its
# hash), the second copies it next to the code; no compiler, pip cache or test tool ships.
# `make image` builds it, `make image-size` prints its size.

# Pinned to a patch release: a rebuild months later starts from the same Python.
FROM python:3.11.11-slim-bookworm AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements-runtime.lock /tmp/requirements-runtime.lock
# --require-hashes: every package, dependencies included, must be pinned with its hash.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --require-hashes -r /tmp/requirements-runtime.lock
# The Chinese catalogue (locale/zh_Hans) is compiled here, so gettext never ships. No
# settings needed: compilemessages compiles ./locale.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gettext \
    && rm -rf /var/lib/apt/lists/*
COPY locale /src/locale
RUN cd /src && /opt/venv/bin/python -m django compilemessages


FROM python:3.11.11-slim-bookworm AS runtime

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    VAR_DIR=/app/var

# A home directory the user can write outside Kubernetes: gunicorn puts its control socket
# ($HOME/.gunicorn/gunicorn.ctl, for `gunicornc`) there (deploy/k8s points it at /tmp).
RUN groupadd --system --gid 10001 console \
    && useradd --system --uid 10001 --gid console --create-home --home-dir /home/console \
        --shell /usr/sbin/nologin console

COPY --from=build /opt/venv /opt/venv
WORKDIR /app
# The code stays owned by root (read-only for the app user); only var/ is writable, and
# /sim, where the demo simulator writes the kubeconfig it shares with the worker (a new
# named volume takes this directory's owner). .dockerignore keeps tests, docs and the
# development tooling out.
COPY . .
COPY --from=build /src/locale /app/locale
# Static files are collected into the image ($VAR_DIR/staticfiles, served by whitenoise),
# so a read-only root filesystem serves them. The settings refuse to load without
# SECRET_KEY when DEBUG is off; these exist for this build step only and are not kept in
# the image (with them set, embedded mode writes no secret files into var/).
RUN SECRET_KEY=collectstatic-build-only-not-a-secret ALERTMANAGER_TOKEN=build-only \
    python manage.py collectstatic --noinput \
    && mkdir -p /app/var /sim \
    && chown -R console:console /app/var /sim

USER 10001:10001
EXPOSE 8000

# slim has no curl: probe /healthz with the standard library. The Host header comes from
# the first ALLOWED_HOSTS entry (".example.com" -> "example.com"; "localhost" when unset or
# "*"), so the probe passes Django's host check whatever the deployment allows. Proxy
# variables from the environment are ignored. (Kubernetes uses its own probes instead.)
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD python -c "import os, sys, urllib.request as u; \
hosts = [h.strip().lstrip('.') for h in os.environ.get('ALLOWED_HOSTS', '').split(',')]; \
hosts = [h for h in hosts if h and h != '*'] or ['localhost']; \
req = u.Request('http://127.0.0.1:8000/healthz', headers={'Host': hosts[0]}); \
sys.exit(0 if u.build_opener(u.ProxyHandler({})).open(req, timeout=4).status == 200 else 1)"

CMD ["gunicorn", "-c", "python:config.gunicorn_conf", "config.wsgi:application", \
     "--bind", "0.0.0.0:8000"]
