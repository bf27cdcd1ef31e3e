"""The apps' own settings, lowest layer first: alert ingestion and incidents, runbooks,
remediation actions, the pre-launch checklist, guarded changes, postmortems and
notifications. Where the systems they call are (Prometheus, Kubernetes, the simulator,
mail) is integrations.py."""

from pathlib import Path

from config.settings.env import BASE_DIR, EMBEDDED, env, local_secret

# --- Alert ingestion and incidents (incidents/) -------------------------------------------
# Empty means every webhook is refused (401); embedded mode makes one in var/.
ALERTMANAGER_TOKEN = env.str("ALERTMANAGER_TOKEN", default="")
if not ALERTMANAGER_TOKEN and EMBEDDED:
    ALERTMANAGER_TOKEN = local_secret("alertmanager_token")
# During a rotation, the token Alertmanager may still send; empty once every Alertmanager
# sends the new one (the webhook's log line says which token each delivery used).
ALERTMANAGER_TOKEN_PREVIOUS = env.str("ALERTMANAGER_TOKEN_PREVIOUS", default="")
WEBHOOK_MAX_BYTES = env.int("WEBHOOK_MAX_BYTES", default=2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = max(WEBHOOK_MAX_BYTES + 1024, 2_621_440)
# Grouping: empty = Alertmanager's groupKey; otherwise these alert labels, in order.
INCIDENT_GROUP_BY = env.list("INCIDENT_GROUP_BY", default=[])
# A group that fires again within this many seconds of being resolved reopens the same
# incident instead of opening a new one (flapping).
INCIDENT_REOPEN_WINDOW_SECONDS = env.int("INCIDENT_REOPEN_WINDOW_SECONDS", default=1800)
INCIDENT_SEVERITY_MAP = env.dict(
    "INCIDENT_SEVERITY_MAP",
    default={"critical": "SEV1", "error": "SEV2", "warning": "SEV3", "info": "SEV4"},
)
INCIDENT_DEFAULT_SEVERITY = env.str("INCIDENT_DEFAULT_SEVERITY", default="SEV3")
# Related incidents (incidents/related/): an incident opened within this many seconds of
# an open one that shares all the labels of one of these sets ("namespace+lws" = both
# labels) is linked to it; one leads, the others are part of it. Empty or 0: no linking.
INCIDENT_RELATED_LABEL_SETS = [
    [label for label in labels.split("+") if label]
    for labels in env.list("INCIDENT_RELATED_LABEL_SETS", default=["namespace+lws", "node"])
]
INCIDENT_RELATED_WINDOW_SECONDS = env.int("INCIDENT_RELATED_WINDOW_SECONDS", default=300)
# Reconciling with Alertmanager's own view (incidents/alertmanager_view/): how often
# beat asks it about the open incidents' firing alerts; at most once per this many
# seconds per incident when its page is opened; how long an alert must have gone
# unlisted by every replica that answered before it counts as ended (a restarted
# Alertmanager lists nothing until Prometheus resends, every minute by default).
ALERTMANAGER_RECONCILE_SECONDS = env.int("ALERTMANAGER_RECONCILE_SECONDS", default=60)
ALERTMANAGER_RECONCILE_PAGE_SECONDS = env.int("ALERTMANAGER_RECONCILE_PAGE_SECONDS", default=15)
ALERTMANAGER_RECONCILE_GRACE_SECONDS = env.int("ALERTMANAGER_RECONCILE_GRACE_SECONDS", default=120)
# How long successfully processed webhook bodies are kept; dead letters are kept four times longer.
WEBHOOK_RECEIPT_RETENTION_DAYS = env.int("WEBHOOK_RECEIPT_RETENTION_DAYS", default=14)
# Retention (incidents/archive/): resolved incidents older than this many days have their
# alerts and timeline archived out of the hot tables every night. 0 keeps everything.
RETENTION_RESOLVED_DAYS = env.int("RETENTION_RESOLVED_DAYS", default=0)
# How often list and timeline partials poll for changes, in seconds.
LIVE_REFRESH_SECONDS = env.int("LIVE_REFRESH_SECONDS", default=10)

# --- Runbooks (runbooks/) -----------------------------------------------------------------
TRIAGE_CACHE_SECONDS = env.int("TRIAGE_CACHE_SECONDS", default=10)
# The runbook catalogue (YAML); the drill suite points it at a copy with short windows.
RUNBOOKS_CATALOG_DIR = Path(
    env.str("RUNBOOKS_CATALOG_DIR", default=str(BASE_DIR / "runbooks" / "catalog"))
)

# --- Remediation actions (actions/) ---------------------------------------------------------
# Guardrails.
ACTIONS_SCALE_MIN_REPLICAS = env.int("ACTIONS_SCALE_MIN_REPLICAS", default=1)
ACTIONS_SCALE_MAX_REPLICAS = env.int("ACTIONS_SCALE_MAX_REPLICAS", default=16)
ACTIONS_SCALE_MAX_STEP = env.int("ACTIONS_SCALE_MAX_STEP", default=4)
ACTIONS_MAX_CORDONED_NODES = env.int("ACTIONS_MAX_CORDONED_NODES", default=2)
# Approval: these severities always, plus the kinds marked risky (or this list, if set).
ACTIONS_APPROVAL_SEVERITIES = env.list("ACTIONS_APPROVAL_SEVERITIES", default=["SEV1"])
ACTIONS_APPROVAL_KINDS = env.list("ACTIONS_APPROVAL_KINDS", default=None)
# Execution: bounded retries for 409 and for timeouts/5xx, then the run fails with the reason.
ACTIONS_CONFLICT_RETRIES = env.int("ACTIONS_CONFLICT_RETRIES", default=3)
ACTIONS_TRANSIENT_RETRIES = env.int("ACTIONS_TRANSIENT_RETRIES", default=3)
ACTIONS_RETRY_BACKOFF_SECONDS = env.float("ACTIONS_RETRY_BACKOFF_SECONDS", default=0.5)
ACTIONS_VERIFY_SECONDS = env.float("ACTIONS_VERIFY_SECONDS", default=15.0)
# How long to wait between two read-backs while verifying.
ACTIONS_VERIFY_INTERVAL_SECONDS = env.float("ACTIONS_VERIFY_INTERVAL_SECONDS", default=1.0)
ACTIONS_TASK_TIME_LIMIT = env.int("ACTIONS_TASK_TIME_LIMIT", default=120)
# A claimed run whose worker has not finished by then is taken for lost (> task limit).
ACTIONS_LEASE_SECONDS = env.int("ACTIONS_LEASE_SECONDS", default=300)
ACTIONS_MAX_ATTEMPTS = env.int("ACTIONS_MAX_ATTEMPTS", default=3)
ACTIONS_REQUEUE_AFTER_SECONDS = env.int("ACTIONS_REQUEUE_AFTER_SECONDS", default=120)
ACTIONS_TRACKED_CONFIGMAPS = env.list(
    "ACTIONS_TRACKED_CONFIGMAPS",
    default=["llm-serving/vllm-router-config", "llm-serving/llm-gateway-config"],
)

# --- Pre-launch checklist (readiness/) ----------------------------------------------------
# Where to find deployments (empty: the actions namespace) and how long a model load may
# take before the readiness probe gives up.
READINESS_NAMESPACES = env.list("READINESS_NAMESPACES", default=[])
READINESS_MODEL_LOAD_SECONDS = env.int("READINESS_MODEL_LOAD_SECONDS", default=300)
# A verification not finished in this long is given up (its worker died, or none runs).
READINESS_VERIFICATION_STALE_SECONDS = env.int("READINESS_VERIFICATION_STALE_SECONDS", default=300)
# Finished verifications older than this are pruned by beat (the latest one always stays).
READINESS_KEEP_DAYS = env.int("READINESS_KEEP_DAYS", default=30)
# Where the Prometheus alert rules are (the runbook catalogue is checked against them),
# and the ConfigMaps holding the router and gateway config (the defaults of the
# rollback_router_config and update_gateway_limits actions).
READINESS_RULES_DIR = Path(
    env.str("READINESS_RULES_DIR", default=str(BASE_DIR / "deploy" / "prometheus" / "rules"))
)
READINESS_ROUTER_CONFIGMAP = env.str("READINESS_ROUTER_CONFIGMAP", default="vllm-router-config")
READINESS_GATEWAY_CONFIGMAP = env.str("READINESS_GATEWAY_CONFIGMAP", default="llm-gateway-config")

# --- Guarded changes (actions/guard/) -----------------------------------------------------
# 0 keeps each runbook's own window and interval (tests compress time); pages also go to
# this Slack-compatible webhook when set.
GUARD_WINDOW_SECONDS = env.int("GUARD_WINDOW_SECONDS", default=0)
GUARD_INTERVAL_SECONDS = env.int("GUARD_INTERVAL_SECONDS", default=0)
# Readings in the first seconds after a change are shown but never count (new groups start,
# queues drain); 0 keeps each runbook's own settle_seconds.
GUARD_SETTLE_SECONDS = env.int("GUARD_SETTLE_SECONDS", default=0)
# An alert is live while Alertmanager keeps re-sending it: it re-sends a firing group at
# least every repeat_interval (1h in deploy/alertmanager/alertmanager.yml and the local
# stack), so an alert not received for repeat_interval plus a few group intervals is stale.
# Only live alerts excuse a guard signal or tie a change made outside the console to an
# incident.
GUARD_ALERT_LIVE_SECONDS = env.int("GUARD_ALERT_LIVE_SECONDS", default=3900)
# A signal undoes a change only after this many breaching checks in a row (a fix often
# takes a minute to bite; one bad reading in that minute must not undo it).
GUARD_CONFIRM_CHECKS = env.int("GUARD_CONFIRM_CHECKS", default=3)
GUARD_USERNAME = env.str("GUARD_USERNAME", default="console-guard")
GUARD_PAGE_WEBHOOK_URL = env.str("GUARD_PAGE_WEBHOOK_URL", default="")
GUARD_PAGE_TIMEOUT_SECONDS = env.float("GUARD_PAGE_TIMEOUT_SECONDS", default=5.0)

# --- Postmortems (postmortems/) -----------------------------------------------------------
# Incidents with more timeline events + alerts than this are drafted on the worker.
POSTMORTEM_ASYNC_THRESHOLD = env.int("POSTMORTEM_ASYNC_THRESHOLD", default=2000)

# --- Outgoing notifications (notifications/) ---------------------------------------------
# Targets and rules are edited in the admin; these are how sending behaves. Links in
# messages start with NOTIFY_CONSOLE_URL, the console's address as responders reach it
# (`make run` sets it from its port; `check --deploy` requires it). Unset: the scheme and
# Host of the last signed-in request that passed ALLOWED_HOSTS (notifications/links.py).
NOTIFY_CONSOLE_URL = env.str("NOTIFY_CONSOLE_URL", default="")
NOTIFY_TIMEOUT_SECONDS = env.float("NOTIFY_TIMEOUT_SECONDS", default=5.0)
# Retries after the first attempt, waiting a random 0..BACKOFF x 2^n seconds (at most
# BACKOFF_MAX) before the n-th: with the defaults all six tries fit in about 5 minutes.
NOTIFY_MAX_RETRIES = env.int("NOTIFY_MAX_RETRIES", default=5)
NOTIFY_RETRY_BACKOFF_SECONDS = env.int("NOTIFY_RETRY_BACKOFF_SECONDS", default=10)
NOTIFY_RETRY_BACKOFF_MAX_SECONDS = env.int("NOTIFY_RETRY_BACKOFF_MAX_SECONDS", default=300)
# Deliveries the broker did not take (it was down) are queued again after this long.
NOTIFY_REQUEUE_AFTER_SECONDS = env.int("NOTIFY_REQUEUE_AFTER_SECONDS", default=60)
# The overdue action-item digest (notifications/services/overdue.py): one Slack-compatible
# post {"text": ...} a day listing the overdue items, through the outgoing guard.
POSTMORTEM_REMINDER_WEBHOOK_URL = env.str("POSTMORTEM_REMINDER_WEBHOOK_URL", default="")
POSTMORTEM_WEBHOOK_TIMEOUT_SECONDS = env.float("POSTMORTEM_WEBHOOK_TIMEOUT_SECONDS", default=5.0)

# --- The pager (pager/): schedules, escalation, paging, heartbeats -----------------------
# Beat runs the escalation tick this often: a step is sent at most this late (plus the
# worker's pickup) after its due time; a late step says how late on the timeline.
PAGER_TICK_SECONDS = env.float("PAGER_TICK_SECONDS", default=5.0)
# Overall deadline of one page delivery call (push, SMS, voice, chat, webhook, email).
PAGER_TIMEOUT_SECONDS = env.float("PAGER_TIMEOUT_SECONDS", default=10.0)
# A delivery claimed longer ago than this was cut off by a dying worker: its outcome is
# unknown and the page falls through to the next method (never sent twice through one).
PAGER_SEND_LEASE_SECONDS = env.int("PAGER_SEND_LEASE_SECONDS", default=120)
# A transient failure (timeout, HTTP 5xx/429, SMTP 4xx) is tried once more through the
# same method after this pause, then the page falls through to the next method. Keep
# PAGER_SEND_LEASE_SECONDS above 2 x PAGER_TIMEOUT_SECONDS + this (one delivery's longest).
PAGER_RETRY_BACKOFF_SECONDS = env.float("PAGER_RETRY_BACKOFF_SECONDS", default=2.0)
# The one-tap acknowledge link in a page: signed, single use, valid this long.
PAGE_ACK_LINK_TTL_SECONDS = env.int("PAGE_ACK_LINK_TTL_SECONDS", default=4 * 3600)
# Imported iCal calendars read from a URL (through the outgoing guard).
PAGER_ICAL_TIMEOUT_SECONDS = env.float("PAGER_ICAL_TIMEOUT_SECONDS", default=10.0)
PAGER_ICAL_MAX_BYTES = env.int("PAGER_ICAL_MAX_BYTES", default=2_000_000)
# Alerts that are heartbeats, not incidents: Alertmanager's always-firing Watchdog, one
# heartbeat per replica (told apart by the notification's externalURL).
HEARTBEAT_ALERTNAMES = env.list("HEARTBEAT_ALERTNAMES", default=["Watchdog"])
HEARTBEAT_WATCHDOG_INTERVAL_SECONDS = env.int("HEARTBEAT_WATCHDOG_INTERVAL_SECONDS", default=300)
HEARTBEAT_GRACE_SECONDS = env.int("HEARTBEAT_GRACE_SECONDS", default=60)
# Drill incidents rehearse the response, not the pager: off, nobody is woken for one.
PAGER_PAGE_DRILLS = env.bool("PAGER_PAGE_DRILLS", default=False)
# "Out of hours" in the pager reports: outside these hours, Monday to Friday, in the
# zone of the team's first schedule.
PAGER_BUSINESS_HOURS = env.str("PAGER_BUSINESS_HOURS", default="09:00-18:00")

# --- Chat-ops (chatops/): Slack and Mattermost -------------------------------------------
# Overall deadline of one call to a chat's API (post, edit, dialog, profile).
CHAT_TIMEOUT_SECONDS = env.float("CHAT_TIMEOUT_SECONDS", default=10.0)
# A request signed longer ago than this is refused as stale (Slack's own advice: 5 min);
# Mattermost's button and dialog signatures expire after CHAT_ACTION_MAX_AGE_SECONDS.
CHAT_REQUEST_MAX_AGE_SECONDS = env.int("CHAT_REQUEST_MAX_AGE_SECONDS", default=300)
CHAT_ACTION_MAX_AGE_SECONDS = env.int("CHAT_ACTION_MAX_AGE_SECONDS", default=30 * 86400)
# Actions one chat user may start per minute (more are refused with a message).
CHAT_ACTIONS_PER_MINUTE = env.int("CHAT_ACTIONS_PER_MINUTE", default=20)
# A failed post is tried again after CHAT_RETRY_BACKOFF_SECONDS x attempts (or what a
# 429 asks for), up to CHAT_POST_MAX_ATTEMPTS; beat looks for due posts this often.
CHAT_POST_MAX_ATTEMPTS = env.int("CHAT_POST_MAX_ATTEMPTS", default=6)
CHAT_RETRY_BACKOFF_SECONDS = env.float("CHAT_RETRY_BACKOFF_SECONDS", default=15.0)
CHAT_REQUEUE_SECONDS = env.float("CHAT_REQUEUE_SECONDS", default=20.0)
# A worker sending a thread's posts holds it this long (a dead worker's hold runs out).
CHAT_SEND_LEASE_SECONDS = env.int("CHAT_SEND_LEASE_SECONDS", default=120)
# A chat user's profile (their verified email) is read again after this long.
CHAT_IDENTITY_RECHECK_SECONDS = env.int("CHAT_IDENTITY_RECHECK_SECONDS", default=86400)
