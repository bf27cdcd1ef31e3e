"""The one way demo rows leave the append-only tables, for `seed_demo --reset` only.

The append-only guards (console/append_only.py) stay whole for every other row: the ORM
guard is not touched, and the database trigger of a table is dropped and re-created
inside the same transaction as one DELETE whose WHERE names demo rows only. On
PostgreSQL DROP TRIGGER takes the table's ACCESS EXCLUSIVE lock until commit, so no
other session writes (or deletes) there while the trigger is away; SQLite has a single
writer. If anything fails the transaction rolls back, trigger included. Each purge is
audited: a WARNING on the `incidents.demo` logger and a JSON line appended to
VAR_DIR/demo_resets.jsonl (who, when, which table, how many rows).
"""

from __future__ import annotations

import getpass
import json
import logging
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

from console.append_only import (
    ARCHIVABLE_TABLES,
    archivable_delete_sql,
    trigger_drop_sql,
    trigger_sql,
)

log = logging.getLogger("incidents.demo")
AUDIT_FILE = "demo_resets.jsonl"


def append_only_purge(queryset: models.QuerySet[Any], *, why: str) -> int:
    """Delete the rows of `queryset` (an append-only model's, filtered to demo rows by
    the caller) with the table's trigger lifted for this one statement. Must run inside
    the caller's transaction."""
    if not connection.in_atomic_block:
        raise RuntimeError("append_only_purge runs inside the reset's transaction")
    model = queryset.model
    table = model._meta.db_table
    vendor = connection.vendor
    ids = list(queryset.order_by().values_list("pk", flat=True))
    if not ids:
        return 0
    with connection.cursor() as cursor:
        for sql in trigger_drop_sql(vendor, table):
            cursor.execute(sql)
    # The plain QuerySet's raw delete: the AppendOnlyQuerySet refuses delete() (on
    # purpose), and these ids were just read from the caller's demo-only filter.
    deleted = models.QuerySet(model).filter(pk__in=ids)._raw_delete(connection.alias)
    with connection.cursor() as cursor:
        # The same statements the table's migration ran (AppendOnlyTriggers defaults:
        # every UPDATE and DELETE refused, and TRUNCATE on PostgreSQL).
        for sql in trigger_sql(vendor, table):
            cursor.execute(sql)
        if table in ARCHIVABLE_TABLES:  # and what a later migration made of its DELETE
            for sql in archivable_delete_sql(vendor, table):
                cursor.execute(sql)
    demo_reset_audit(table=table, rows=deleted, why=why)
    return deleted


def demo_reset_audit(*, table: str, rows: int, why: str) -> None:
    entry = {
        "at": timezone.now().isoformat(),
        "os_user": _os_user(),
        "database": str(settings.DATABASES["default"]["NAME"]),
        "table": table,
        "rows": rows,
        "why": why,
    }
    log.warning("seed_demo --reset deleted %s demo rows from %s (%s)", rows, table, why)
    path = settings.VAR_DIR / AUDIT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    # On commit: a reset that rolls back deleted nothing, so it records nothing.
    line = json.dumps(entry, sort_keys=True) + "\n"
    transaction.on_commit(lambda: _append(path, line))


def _append(path, line: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(line)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
