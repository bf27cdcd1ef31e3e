"""The systems the console calls: Prometheus, Alertmanager's API, Kubernetes, the fleet
simulator (drills) and mail; and which internal addresses the outgoing-call guard lets
through. How the apps use them (guardrails, retries, windows) is apps.py."""

from config.settings.env import EMBEDDED, env

# --- Outgoing calls to URLs users supply (console/outgoing/) -------------------------------
# Notification targets, the guard's paging webhook and the reminder webhook may not reach
# loopback, link-local, private or other internal addresses; this list (CIDR networks
# and/or host names, comma-separated) admits an internal receiver on purpose.
OUTGOING_URL_ALLOWLIST = env.list("OUTGOING_URL_ALLOWLIST", default=[])

# --- Prometheus and Alertmanager --------------------------------------------------------
PROMETHEUS_URL = env.str("PROMETHEUS_URL", default="http://127.0.0.1:9090")
PROMETHEUS_TIMEOUT_SECONDS = env.float("PROMETHEUS_TIMEOUT_SECONDS", default=3.0)
# Silences from the incident page go to Alertmanager's v2 API (incidents/silences/client.py).
ALERTMANAGER_URL = env.str("ALERTMANAGER_URL", default="http://127.0.0.1:9093")
ALERTMANAGER_TIMEOUT_SECONDS = env.float("ALERTMANAGER_TIMEOUT_SECONDS", default=3.0)
# Alertmanager replicas (HA), each asked for its alerts when the console reconciles with
# Alertmanager's view (incidents/alertmanager_view/); empty: ALERTMANAGER_URL alone.
ALERTMANAGER_REPLICA_URLS = env.list("ALERTMANAGER_REPLICA_URLS", default=[])

# --- Kubernetes (remediation actions, readiness) ----------------------------------------
# A kubeconfig path, else in-cluster config when running in a pod.
KUBECONFIG = env.str("KUBECONFIG", default="")
ACTIONS_K8S_TIMEOUT_SECONDS = env.float("ACTIONS_K8S_TIMEOUT_SECONDS", default=5.0)
# The namespace the console's RBAC Role grants (deploy/k8s/rbac.yaml): the default for
# every action's `namespace` parameter and for readiness discovery.
ACTIONS_K8S_NAMESPACE = env.str("ACTIONS_K8S_NAMESPACE", default="llm-serving")

# --- The fleet simulator (drills/) --------------------------------------------------------
# Its HTTP API injects and clears the drills' faults.
DRILLS_SIMULATOR_URL = env.str(
    "DRILLS_SIMULATOR_URL",
    default=env.str(
        "SIMULATOR_URL",
        default=f"http://127.0.0.1:{env.str('SIMULATOR_PORT', default='9400')}",
    ),
)

# --- Mail (email notification targets) ---------------------------------------------------
# Email targets go through Django's mail (the console backend prints them in embedded mode).
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend"
    if EMBEDDED
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="incident-console@localhost")
