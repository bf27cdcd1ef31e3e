"""Settings for the incident console, read from the environment.

With no environment at all the console runs on embedded defaults: a SQLite file in
WAL mode and kombu's filesystem broker under VAR_DIR, so `make run` needs no server.
Production sets DATABASE_URL=postgres://… and CELERY_BROKER_URL=redis://….

One module per concern, assembled here in this order (a module may read the names of
one above it, never below):

- env.py: the project root, the environment (.env), embedded mode, VAR_DIR and the
  secrets embedded mode makes there;
- core.py: DEBUG, the installed apps, middleware, root URLconf, templates, static files;
- security.py: SECRET_KEY and the encryption keys, allowed hosts, HTTPS, HSTS, cookies,
  CSRF and the Content-Security-Policy;
- database.py: DATABASES (PostgreSQL, or SQLite in WAL mode);
- cache.py: the Redis cache, when REDIS_URL is set;
- signin.py: password validators, the login lockout, single sign-on, local passwords;
- i18n.py: languages, the language cookie, date formats, time zone;
- broker.py: Celery (CELERY_*); queues, routes and the beat schedule are
  config/celery_routes.py;
- api.py: REST framework, API tokens, the OpenAPI schema;
- apps.py: each app's own settings (ingestion and incidents, runbooks, actions,
  readiness, the guard, postmortems, notifications);
- integrations.py: what the console calls (Prometheus, Alertmanager, Kubernetes, the
  simulator, mail) and the outgoing-call guard's allowlist;
- observability.py: the worker heartbeat, the console's own /metrics, logging.

Every setting that reads the environment says which variable, with its default, where
it is set; deploy/k8s wires each of those variables (tests/unit/deploy).
"""

# In the order above: each module runs after the ones whose names it reads, and a
# misconfiguration is reported in that order.
# isort: off
from config.settings.env import *  # noqa: F403
from config.settings.core import *  # noqa: F403
from config.settings.security import *  # noqa: F403
from config.settings.database import *  # noqa: F403
from config.settings.cache import *  # noqa: F403
from config.settings.signin import *  # noqa: F403
from config.settings.i18n import *  # noqa: F403
from config.settings.broker import *  # noqa: F403
from config.settings.api import *  # noqa: F403
from config.settings.apps import *  # noqa: F403
from config.settings.integrations import *  # noqa: F403
from config.settings.observability import *  # noqa: F403
# isort: on
