"""The database: DATABASE_URL (PostgreSQL in production), else a SQLite file in WAL mode
under VAR_DIR (embedded mode)."""

from config.settings.env import VAR_DIR, env

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'console.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while the worker writes; IMMEDIATE transactions take
    # the write lock up front so two writers queue on busy_timeout instead of failing
    # with "database is locked" halfway through a transaction.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": (
            "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;PRAGMA busy_timeout=20000;"
        ),
    }
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=5)
    )
    if DATABASES["default"]["ENGINE"].endswith("postgresql"):
        # psycopg prepares a statement after this many runs on a connection (ingestion's,
        # which bind on the server: incidents/ingest/write_postgres.py). "none" turns it
        # off, for a PgBouncer in transaction mode older than 1.21 or without
        # max_prepared_statements.
        threshold = env.str("DATABASE_PREPARE_THRESHOLD", default="5").strip().lower()
        DATABASES["default"]["OPTIONS"].setdefault(
            "prepare_threshold", None if threshold in ("none", "off", "") else int(threshold)
        )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
