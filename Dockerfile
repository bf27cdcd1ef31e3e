# The console's image: gunicorn by default; docker-compose.yml runs the Celery worker and
# beat from the same image with another command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    VAR_DIR=/app/var

# A home directory the user can write: gunicorn puts its control socket
# ($HOME/.gunicorn/gunicorn.ctl, for `gunicornc`) there.
RUN groupadd --system --gid 10001 console \
    && useradd --system --uid 10001 --gid console --create-home --home-dir /home/console \
        --shell /usr/sbin/nologin console

# Dependencies first, so this layer is rebuilt only when the lock file changes.
# --require-hashes: every package, dependencies included, must be pinned with its hash.
COPY requirements.lock /tmp/requirements.lock
RUN python -m venv /opt/venv \
    && pip install --require-hashes -r /tmp/requirements.lock \
    && rm /tmp/requirements.lock

WORKDIR /app
# The code stays owned by root (read-only for the app user); only var/ is writable, and
# /sim, where the demo simulator writes the kubeconfig it shares with the worker (a new
# named volume takes this directory's owner).
COPY . .
# Static files are collected into the image ($VAR_DIR/staticfiles, served by whitenoise).
# The settings refuse to load without SECRET_KEY when DEBUG is off; these exist for this
# build step only and are not kept in the image (with them set, embedded mode writes no
# secret files into var/).
RUN SECRET_KEY=collectstatic-build-only-not-a-secret ALERTMANAGER_TOKEN=build-only \
    python manage.py collectstatic --noinput \
    && mkdir -p /app/var /sim \
    && chown -R console:console /app/var /sim

USER console
EXPOSE 8000

# slim has no curl: probe /healthz with the standard library. The Host header comes from
# the first ALLOWED_HOSTS entry (".example.com" -> "example.com"; "localhost" when unset or
# "*"), so the probe passes Django's host check whatever the deployment allows. Proxy
# variables from the environment are ignored.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD python -c "import os, sys, urllib.request as u; \
hosts = [h.strip().lstrip('.') for h in os.environ.get('ALLOWED_HOSTS', '').split(',')]; \
hosts = [h for h in hosts if h and h != '*'] or ['localhost']; \
req = u.Request('http://127.0.0.1:8000/healthz', headers={'Host': hosts[0]}); \
sys.exit(0 if u.build_opener(u.ProxyHandler({})).open(req, timeout=4).status == 200 else 1)"

CMD ["gunicorn", "console.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", \
     "--timeout", "30", "--access-logfile", "-"]
