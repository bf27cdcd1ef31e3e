"""The statements that move an incident's alerts and timeline between the hot tables and
`IncidentArchive`, for PostgreSQL and for SQLite (embedded mode). Each runs inside the
caller's transaction, which holds the incidents' row locks; nothing here commits.

Rows travel as every column of their table by column name, so a restore writes back
exactly what left, ids included. PostgreSQL does it with `to_jsonb` and
`jsonb_populate_recordset` of the table's own row type; SQLite with `json_object` over
the model's columns and `json_each`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import JSONField, Model

from console.append_only import ARCHIVING_SQL, sqlite_delete_trigger_sql
from incidents.models import Alert, TimelineEvent

ARCHIVE = "incidents_incidentarchive"
# (key in IncidentArchive.rows, model): alerts go back before the timeline that names them.
_INSERT = f'INSERT INTO {ARCHIVE} (incident_id, batch_id, archived_at, alerts, events, "rows")'
MOVED: tuple[tuple[str, type[Model]], ...] = (("alerts", Alert), ("events", TimelineEvent))


@dataclass(frozen=True)
class Moved:
    incidents: int
    alerts: int
    events: int
    alerts_kept: int = 0  # on restore: alerts already present again, left as they are


def _table(model: type[Model]) -> str:
    return model._meta.db_table


def _columns(model: type[Model]) -> list[tuple[str, bool]]:
    """(column, is JSON) for every concrete column of `model`, in table order."""
    return [(str(f.column), isinstance(f, JSONField)) for f in model._meta.concrete_fields]


def archive_out(ids: Sequence[int], batch_id: int, now: str) -> Moved:
    """Copy the alerts and timeline of incidents `ids` into the archive, then delete them
    from the hot tables (the timeline's DELETE trigger lets the archive through)."""
    if not ids:
        return Moved(0, 0, 0)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(ARCHIVING_SQL)
            parts = [
                f"(SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.id), '[]'::jsonb) "
                f"FROM {_table(m)} r WHERE r.incident_id = i.id)"
                for _, m in MOVED
            ]
            counts = [
                f"(SELECT count(*) FROM {_table(m)} r WHERE r.incident_id = i.id)" for _, m in MOVED
            ]
            cursor.execute(
                f"{_INSERT} SELECT i.id, %s, %s, {counts[0]}, {counts[1]}, "
                f"jsonb_build_object('alerts', {parts[0]}, 'events', {parts[1]}) "
                "FROM incidents_incident i WHERE i.id = ANY(%s)",
                [batch_id, now, list(ids)],
            )
            moved = []
            for _, model in MOVED:
                cursor.execute(
                    f"DELETE FROM {_table(model)} WHERE incident_id = ANY(%s)", [list(ids)]
                )
                moved.append(cursor.rowcount)
            return Moved(len(ids), moved[0], moved[1])
        return _archive_out_sqlite(cursor, ids, batch_id, now)


def _sqlite_object(model: type[Model], alias: str) -> str:
    pairs = ", ".join(
        f"'{col}', json({alias}.\"{col}\")" if is_json else f"'{col}', {alias}.\"{col}\""
        for col, is_json in _columns(model)
    )
    return f"json_object({pairs})"


def _archive_out_sqlite(
    cursor: CursorWrapper, ids: Sequence[int], batch_id: int, now: str
) -> Moved:
    marks = ", ".join("%s" for _ in ids)
    parts = [
        f"(SELECT coalesce(json_group_array(json({_sqlite_object(m, 'r')})), '[]') FROM "
        f"(SELECT * FROM {_table(m)} WHERE incident_id = i.id ORDER BY id) r)"
        for _, m in MOVED
    ]
    counts = [f"(SELECT count(*) FROM {_table(m)} r WHERE r.incident_id = i.id)" for _, m in MOVED]
    cursor.execute(
        f"{_INSERT} SELECT i.id, %s, %s, {counts[0]}, {counts[1]}, "
        f"json_object('alerts', json({parts[0]}), 'events', json({parts[1]})) "
        f"FROM incidents_incident i WHERE i.id IN ({marks})",
        [batch_id, now, *ids],
    )
    moved = []
    for _, model in MOVED:
        if model is TimelineEvent:
            # SQLite has no session setting: lift the trigger inside this transaction only.
            drop, create = sqlite_delete_trigger_sql(_table(model))
            cursor.execute(drop)
            cursor.execute(f"DELETE FROM {_table(model)} WHERE incident_id IN ({marks})", ids)
            moved.append(cursor.rowcount)
            cursor.execute(create)
        else:
            cursor.execute(f"DELETE FROM {_table(model)} WHERE incident_id IN ({marks})", ids)
            moved.append(cursor.rowcount)
    return Moved(len(ids), moved[0], moved[1])


def archive_back(ids: Sequence[int]) -> Moved:
    """Write the archived alerts and timeline of incidents `ids` back into the hot tables
    and delete their archive rows. An alert ingested again since (same fingerprint and
    start) is kept as it is now and counted in `alerts_kept`."""
    if not ids:
        return Moved(0, 0, 0)
    with connection.cursor() as cursor:
        written, wanted = [], []
        for key, model in MOVED:
            table = _table(model)
            columns = ", ".join(f'"{c}"' for c, _ in _columns(model))
            picked = ", ".join(f'r."{c}"' for c, _ in _columns(model))
            conflict = " ON CONFLICT DO NOTHING" if model is Alert else ""
            if connection.vendor == "postgresql":
                cursor.execute(
                    f"INSERT INTO {table} ({columns}) SELECT {picked} FROM {ARCHIVE} a, "
                    f"jsonb_populate_recordset(NULL::{table}, a.\"rows\"->'{key}') r "
                    f"WHERE a.incident_id = ANY(%s){conflict}",
                    [list(ids)],
                )
                count_sql = (
                    f"SELECT coalesce(sum({key}), 0) FROM {ARCHIVE} WHERE incident_id = ANY(%s)"
                )
                params: list[Any] = [list(ids)]
            else:
                marks = ", ".join("%s" for _ in ids)
                values = ", ".join(
                    (
                        f"CASE json_type(j.value, '$.{c}') WHEN 'text' THEN "
                        f"json_quote(json_extract(j.value, '$.{c}')) "
                        f"ELSE json_extract(j.value, '$.{c}') END"
                    )
                    if is_json
                    else f"json_extract(j.value, '$.{c}')"
                    for c, is_json in _columns(model)
                )
                verb = "INSERT OR IGNORE" if model is Alert else "INSERT"
                cursor.execute(
                    f"{verb} INTO {table} ({columns}) SELECT {values} FROM {ARCHIVE} a, "
                    f"json_each(a.\"rows\", '$.{key}') j WHERE a.incident_id IN ({marks}) "
                    "ORDER BY a.incident_id, j.key",
                    list(ids),
                )
                count_sql = (
                    f"SELECT coalesce(sum({key}), 0) FROM {ARCHIVE} WHERE incident_id IN ({marks})"
                )
                params = list(ids)
            written.append(cursor.rowcount)
            cursor.execute(count_sql, params)
            wanted.append(int(cursor.fetchone()[0]))
        if connection.vendor == "postgresql":
            cursor.execute(f"DELETE FROM {ARCHIVE} WHERE incident_id = ANY(%s)", [list(ids)])
        else:
            marks = ", ".join("%s" for _ in ids)
            cursor.execute(f"DELETE FROM {ARCHIVE} WHERE incident_id IN ({marks})", list(ids))
    return Moved(len(ids), written[0], written[1], alerts_kept=wanted[0] - written[0])
