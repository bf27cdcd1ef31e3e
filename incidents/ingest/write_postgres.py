"""Stage 6, write, on PostgreSQL: the hot path's statements (write.Writer), each one
statement whatever the number of rows.

Rows travel as one jsonb parameter (`jsonb_to_recordset`): one json.dumps in C, where
the ORM compiled each query and adapted every value in Python (building, compiling and
dumping took longer than the database took to store the rows; issue #14). Every
statement goes through Django's cursor wrapper, so it is logged and counted
(tests/unit/incidents/test_ingest_queries.py) and its errors are Django's; under it is a
cursor that binds parameters on the server (`_cursor`), so the body's rows are not
quoted into the SQL text and psycopg prepares each statement after its fifth use on a
connection: the database stops parsing and planning them per request (the storm bench
measured 15-20% more alerts/s). The rest of the console keeps Django's client-side
binding, which every ORM query is tested with.

Round trips: inside `pipeline()` (psycopg's pipeline mode) statements go out without
waiting for the previous answer, and the ids asked back (RETURNING) are read when the
block ends, so the full path's writes, timeline entries and receipt cost one round trip,
and the first read goes out with the transaction's BEGIN.

The repeat fast path (`repeat_apply`, PostgreSQL only): Alertmanager re-sends every group
unchanged each repeat_interval. Each incident keeps a digest of the alerts of the last
notification applied in full and when that was (those alerts' last_received_at), so one
statement can tell an unchanged repeat, move its receive bookkeeping (the function
incidents_repeat_apply, migration 0012) and store the receipt.
"""

import functools
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from django.db import connection, models
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from psycopg.pq import Format

from incidents.ingest.write import (
    ALERT_READ_COLUMNS,
    ALERT_UPDATE_COLUMNS,
    INCIDENT_UPDATE_COLUMNS,
    AlertRow,
    M,
    Row,
    json_value,
)
from incidents.models import Alert, Incident, WebhookReceipt

_TIMESTAMPTZ_OID = psycopg.adapters.types["timestamptz"].oid


def _open_cursor() -> CursorWrapper:
    """Django's cursor wrapper (logging, counting, execute wrappers, error translation)
    around a server-side binding psycopg cursor on the same connection."""
    with connection.cursor() as django_cursor:  # connects, checks health and threads
        raw = psycopg.Cursor(connection.connection)
        tzloader = connection.connection.adapters.get_loader(_TIMESTAMPTZ_OID, Format.TEXT)
        if connection.timezone != getattr(tzloader, "timezone", None):  # as create_cursor
            register_tzloader(connection.timezone, raw)
        logged = isinstance(django_cursor, CursorDebugWrapper)  # DEBUG, or tests counting
    return (_LoggedCursor if logged else CursorWrapper)(raw, connection)


@contextmanager
def _cursor() -> Iterator[CursorWrapper]:
    with _open_cursor() as cursor:
        yield cursor


# --- pipeline mode ----------------------------------------------------------------------
# Inside pipeline(), statements go out without waiting for the previous answer, and
# those whose ids are wanted (RETURNING) are read once the block ends: a delivery's
# writes, its timeline entries and its receipt cost one round trip instead of one each
# (issue 29: most of a request's time was waiting on the database's answers).
_local = threading.local()


@contextmanager
def pipeline() -> Iterator[None]:
    if getattr(_local, "pending", None) is not None:  # nested: the outer block reads
        yield
        return
    connection.ensure_connection()
    pending: list[tuple[CursorWrapper, Callable[[CursorWrapper], None]]] = []
    _local.pending = pending
    try:
        # Errors surface as Django's (IntegrityError: alerts_ingest retries), whether
        # at a read inside the block or at the synchronisation when it ends.
        with connection.wrap_database_errors, connection.connection.pipeline():
            yield
        with connection.wrap_database_errors:
            for cursor, read in pending:
                read(cursor)
    finally:
        _local.pending = None
        for cursor, _ in pending:
            cursor.close()


def _execute_later(sql: str, params: Any, read: Callable[[CursorWrapper], None]) -> None:
    """Execute now and `read` the answer now, or at the end of the pipeline block."""
    pending = getattr(_local, "pending", None)
    if pending is None:
        with _cursor() as cursor:
            cursor.execute(sql, params)
            read(cursor)
        return
    cursor = _open_cursor()
    cursor.execute(sql, params)
    pending.append((cursor, read))


class _LoggedCursor(CursorDebugWrapper):
    """Logs the statement as written (placeholders, not values): Django would ask psycopg
    for the text it sent, and psycopg keeps none for a prepared statement."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _json(value: object) -> str:
    return json.dumps(value, default=_iso, separators=(",", ":"))


def _columns(columns: Mapping[str, str]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns.items())


# Statements are built from this module's constants and the models' own field names,
# never from input (S608).
def _update_sql(table: str, columns: Mapping[str, str]) -> str:
    sets = ", ".join(f"{name} = v.{name}" for name in columns)
    return (
        f"UPDATE {table} AS t SET {sets} FROM jsonb_to_recordset(%s::jsonb) "  # noqa: S608
        f"AS v(id bigint, {_columns(columns)}) WHERE t.id = v.id"
    )


_UPDATE_ALERTS = _update_sql("incidents_alert", ALERT_UPDATE_COLUMNS)
_UPDATE_INCIDENTS = _update_sql("incidents_incident", INCIDENT_UPDATE_COLUMNS)

# The alerts a body names (a range scan per fingerprint on the (fingerprint, starts_at)
# index, exact pairs picked out by the caller) and the recent orphans of its groups.
_ALERTS_FOR_UPDATE = f"""
SELECT {", ".join(ALERT_READ_COLUMNS)} FROM incidents_alert
WHERE (fingerprint = ANY(ARRAY(SELECT jsonb_array_elements_text(%(fingerprints)s::jsonb)))
       AND starts_at BETWEEN %(first)s AND %(last)s)
   OR (incident_id IS NULL AND last_received_at >= %(since)s
       AND grouping_key = ANY(ARRAY(SELECT jsonb_array_elements_text(%(groups)s::jsonb))))
ORDER BY id FOR UPDATE
"""  # noqa: S608
_INCIDENT_FIELDS = Incident._meta.concrete_fields
_INCIDENT_JSON = [i for i, f in enumerate(_INCIDENT_FIELDS) if isinstance(f, models.JSONField)]
_INCIDENTS_FOR_UPDATE = f"""
SELECT {", ".join(f.attname for f in _INCIDENT_FIELDS)} FROM incidents_incident
WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)::bigint))
   OR (grouping_key = ANY(ARRAY(SELECT jsonb_array_elements_text(%(groups)s::jsonb)))
       AND (status <> 'resolved' OR resolved_at >= %(since)s))
ORDER BY id FOR UPDATE
"""  # noqa: S608
_FIRING = """
SELECT incident_id, count(*) FROM incidents_alert
WHERE incident_id = ANY(ARRAY(SELECT jsonb_array_elements_text(%s::jsonb)::bigint))
  AND status = 'firing'
GROUP BY incident_id
"""


# --- the repeat fast path, outside any transaction ----------------------------------------
@functools.cache
def _receipt_fields() -> "list[models.Field[Any, Any]]":
    return [f for f in WebhookReceipt._meta.concrete_fields if not f.primary_key]


def _receipt_values(receipt: WebhookReceipt, fields: "list[models.Field[Any, Any]]") -> list[Any]:
    return [f.get_db_prep_save(f.pre_save(receipt, True), connection) for f in fields]


@functools.cache
def _repeat_sql() -> "tuple[str, list[models.Field[Any, Any]]]":
    """The repeat check and the receipt as one statement: the receipt is stored if and
    only if every group matched. Each receipt value is cast to its column's type (a
    SELECT list, unlike VALUES, gives parameters no type of their own); to text, not
    varchar(n), so a value too long still fails as it would in VALUES."""
    fields = _receipt_fields()
    types = [str(f.db_type(connection)) for f in fields]
    casts = ", ".join(f"%s::{'text' if t.startswith('varchar') else t}" for t in types)
    # Table, columns and types are the model's; the values are parameters.
    sql = (
        "WITH applied AS MATERIALIZED ("  # noqa: S608
        "SELECT incidents_repeat_apply(%s::jsonb, %s, %s, %s) AS n) "
        f"INSERT INTO {WebhookReceipt._meta.db_table} "
        f"({', '.join(f.attname for f in fields)}) "
        f"SELECT {casts} FROM applied WHERE applied.n = %s RETURNING id"
    )
    return sql, fields


def repeat_apply(
    *, groups: Sequence[Row], now: datetime, orphans_since: datetime, receipt: WebhookReceipt
) -> int | None:
    """Apply an unchanged repeat and store its receipt in one statement, if it is one;
    `groups` holds grouping_key, digest, alerts and severity per group of the body. The
    check is the function incidents_repeat_apply (migration 0012, which says what it
    checks), whose plan the database keeps. Run outside a transaction, the statement is
    its own: one round trip, and the bookkeeping and the receipt commit together.

    Returns the receipt's id; None (nothing written) when the body is not an unchanged
    repeat."""
    if not groups:
        return None
    sql, fields = _repeat_sql()
    values = _receipt_values(receipt, fields)
    with _cursor() as cursor:
        cursor.execute(sql, [_json(groups), len(groups), now, orphans_since, *values, len(groups)])
        row = cursor.fetchone()
    if row is None:
        return None
    receipt.pk = int(row[0])
    return receipt.pk


# --- the full path, in one transaction, in the order it runs --------------------------------
def rows_for_update(
    *,
    keys: Sequence[tuple[str, datetime]],
    groups: Sequence[str],
    orphans_since: datetime,
    resolved_since: datetime,
) -> tuple[list[AlertRow], list[Incident]]:
    """The alerts' read goes out with the transaction's BEGIN (one round trip, not two);
    the incidents' read needs its answer. (Both in one round trip was tried: finding the
    incidents of the body's alerts again in SQL cost the database more CPU, 1-2 ms for a
    50-alert resolution, than the round trip saves.)"""
    starts = [s for _, s in keys]
    group_list = _json(sorted(groups))
    alert_params: dict[str, str | datetime] = {
        "fingerprints": _json(sorted({fp for fp, _ in keys})),
        "first": min(starts),
        "last": max(starts),
        "groups": group_list,
        "since": orphans_since,
    }
    with _cursor() as cursor:
        with pipeline():
            cursor.execute(_ALERTS_FOR_UPDATE, alert_params)
        rows = [AlertRow(*values) for values in cursor.fetchall()]
    wanted = set(keys)
    held = {r.incident_id for r in rows if r.incident_id and (r.fingerprint, r.starts_at) in wanted}
    incident_params: dict[str, str | datetime] = {
        "ids": _json(sorted(held)),
        "groups": group_list,
        "since": resolved_since,
    }
    with _cursor() as cursor:
        cursor.execute(_INCIDENTS_FOR_UPDATE, incident_params)
        found = cursor.fetchall()
    names = [f.attname for f in _INCIDENT_FIELDS]
    incidents = []
    for row in found:  # the columns in the model's order, jsonb as text: what from_db takes
        values = list(row)
        for i in _INCIDENT_JSON:
            values[i] = json_value(values[i])
        incidents.append(Incident.from_db(connection.alias, names, values))
    return rows, incidents


@functools.cache
def _insert_sql(model: type[models.Model]) -> "tuple[str, list[models.Field[Any, Any]]]":
    # Cached: a model's columns do not change while the process runs (and db_type per
    # field per request cost more than the rest of the insert). attname is the column
    # name: no field of these models renames its column.
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    names = ", ".join(f.attname for f in fields)
    types = ", ".join(f"{f.attname} {f.db_type(connection)}" for f in fields)
    sql = (
        f"INSERT INTO {model._meta.db_table} ({names}) SELECT {names} "  # noqa: S608
        f"FROM jsonb_to_recordset(%s::jsonb) AS v({types}) RETURNING id"
    )
    return sql, fields


def models_insert(objs: Sequence[M]) -> Sequence[M]:
    if not objs:
        return objs
    sql, fields = _insert_sql(type(objs[0]))
    rows = []
    for obj in objs:
        # pre_save: what save() would store (auto_now stamps, for one).
        rows.append({f.attname: f.pre_save(obj, True) for f in fields})

    def read(cursor: CursorWrapper) -> None:
        ids = [pk for (pk,) in cursor.fetchall()]  # in the order of the array
        for obj, pk in zip(objs, ids, strict=True):
            obj.pk = pk
            obj._state.adding = False
            obj._state.db = connection.alias

    _execute_later(sql, [_json(rows)], read)
    return objs


def alerts_insert(rows: Sequence[Row]) -> None:
    """One plain INSERT (the rows go as they are: 50 model instances cost more than the
    statement)."""
    if not rows:
        return
    sql, _ = _insert_sql(Alert)
    with _cursor() as cursor:
        cursor.execute(sql, [_json(rows)])


def alerts_update(rows: Sequence[Row]) -> None:
    if not rows:
        return
    with _cursor() as cursor:
        cursor.execute(_UPDATE_ALERTS, [_json(rows)])


def firing_counts(incident_ids: Sequence[int]) -> dict[int, int]:
    if not incident_ids:
        return {}
    with _cursor() as cursor:
        cursor.execute(_FIRING, [_json(list(incident_ids))])
        return {int(pk): int(n) for pk, n in cursor.fetchall()}


def incidents_update(incidents: Sequence[Incident]) -> None:
    if not incidents:
        return
    rows = [
        {"id": inc.pk, **{name: getattr(inc, name) for name in INCIDENT_UPDATE_COLUMNS}}
        for inc in incidents
    ]
    with _cursor() as cursor:
        cursor.execute(_UPDATE_INCIDENTS, [_json(rows)])


@functools.cache
def _receipt_sql() -> "tuple[str, list[models.Field[Any, Any]]]":
    fields = _receipt_fields()
    sql = (
        f"INSERT INTO {WebhookReceipt._meta.db_table} "  # noqa: S608
        f"({', '.join(f.attname for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING id"
    )
    return sql, fields


def receipt_insert(receipt: WebhookReceipt) -> None:
    """The bulk of a request's bytes, and maybe not text: a VALUES row, not jsonb."""
    sql, fields = _receipt_sql()

    def read(cursor: CursorWrapper) -> None:
        (receipt.pk,) = cursor.fetchone()

    _execute_later(sql, _receipt_values(receipt, fields), read)
