"""The test suite's one way past the append-only tables' TRUNCATE trigger
(console/append_only.py): Django's flush between transactional tests (TransactionTestCase,
pytest-django's transactional_db, live_server) is one TRUNCATE of every table, which the
trigger refuses unless the transaction set `console.allow_truncate`. So the PostgreSQL
backend's `execute_sql_flush`, which runs the flush in one transaction, sets it first
(SET LOCAL: it ends with that transaction). Installed by tests/conftest.py; no production
code path sets it."""

from django.db import connections

from console.append_only import ALLOW_TRUNCATE_SQL


def install() -> None:
    for connection in connections.all():
        if connection.vendor != "postgresql":
            continue
        operations = type(connection.ops)
        original = operations.execute_sql_flush
        if getattr(original, "allows_truncate", False):
            continue

        def execute_sql_flush(self, sql_list, _original=original):
            return _original(self, [ALLOW_TRUNCATE_SQL, *sql_list] if sql_list else sql_list)

        execute_sql_flush.allows_truncate = True  # type: ignore[attr-defined]
        operations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]
