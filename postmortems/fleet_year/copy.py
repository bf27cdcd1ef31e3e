"""COPY into the console's tables, and the indexes and constraints a big load sets aside.

Rows go in as pre-formatted COPY text on the Django connection's own psycopg connection,
so they share its transaction. For a big load the secondary indexes, unique constraints
and foreign keys of the large tables are dropped first and made again afterwards from
their exact definitions (`pg_get_indexdef`, `pg_get_constraintdef`): one sort per index
instead of a B-tree insert per row, one join per foreign key instead of a lookup per row.
Primary keys and CHECK constraints stay."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.management.color import no_style
from django.db import models

Progress = Callable[[str], None]
CHUNK_ROWS = 20_000


class YearRefused(Exception):
    """The generator cannot write here (not PostgreSQL, incidents already present...)."""


def qn(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _text(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def columns_for(model: type[models.Model], fields: Iterable[str]) -> tuple[list[str], str]:
    """The db columns of `fields`, plus every other NOT NULL column the model has (a field
    added after this generator was written) with its default as a constant suffix."""
    names = list(fields)
    columns = [str(model._meta.get_field(n).column) for n in names]  # type: ignore[union-attr]
    suffix = []
    for f in model._meta.concrete_fields:
        if f.name in names or f.null or f.db_default is not models.NOT_PROVIDED:
            continue
        if not f.has_default():
            raise YearRefused(
                f"{model.__name__}.{f.name} is NOT NULL without a default: teach "
                "postmortems/fleet_year what to write in it."
            )
        columns.append(str(f.column))
        suffix.append(_text(f.get_default()))
    return columns, "".join("\t" + s for s in suffix)


def _server_cpu(pid: int) -> float:
    """CPU seconds of a local PostgreSQL backend (0.0 when it is not on this machine): on a
    shared machine, wall time alone says little about what the load costs."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass
class Loader:
    """COPY streams on one psycopg connection, with rows/s reported per table and the CPU
    seconds spent on each side (this process; the PostgreSQL backend, when local)."""

    raw: Any  # the psycopg connection under Django's
    progress: Progress | None = None
    counts: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, tuple[float, float]] = field(default_factory=dict)
    backend: int = 0

    def cpu_now(self) -> tuple[float, float]:
        if not self.backend:
            self.backend = int(self.raw.info.backend_pid)
        return time.process_time(), _server_cpu(self.backend)

    def copy(
        self, model: type[models.Model], fields: Iterable[str], batches: Iterable[list[str]]
    ) -> int:
        """COPY the lines of `batches` (lists of lines without their newline)."""
        table = model._meta.db_table
        columns, suffix = columns_for(model, fields)
        tail = suffix + "\n"
        sql = f"COPY {qn(table)} ({', '.join(qn(c) for c in columns)}) FROM STDIN"
        started = last = time.monotonic()
        cpu_started = self.cpu_now()
        rows = reported = 0
        pending: list[str] = []
        with self.raw.cursor() as cursor, cursor.copy(sql) as copy:
            for batch in batches:
                pending.extend(batch)
                if len(pending) >= CHUNK_ROWS:
                    copy.write(tail.join(pending) + tail)
                    rows += len(pending)
                    pending.clear()
                    now = time.monotonic()
                    if self.progress and now - last >= 10:
                        rate = (rows - reported) / (now - last)
                        self.progress(f"  {table}: {rows:,} rows ({rate:,.0f} rows/s)")
                        last, reported = now, rows
            if pending:
                copy.write(tail.join(pending) + tail)
                rows += len(pending)
        spent = time.monotonic() - started
        mine, server = (b - a for a, b in zip(cpu_started, self.cpu_now(), strict=True))
        self.counts[table] = self.counts.get(table, 0) + rows
        self.seconds[table] = self.seconds.get(table, 0.0) + spent
        self.cpu[table] = (mine, server)
        if self.progress:
            rate = rows / spent if spent else 0.0
            self.progress(
                f"{table}: {rows:,} rows in {spent:,.1f} s ({rate:,.0f} rows/s; CPU "
                f"{mine:,.1f} s here, {server:,.1f} s in PostgreSQL)"
            )
        return rows

    def first_id(self, model: type[models.Model]) -> int:
        with self.raw.cursor() as cursor:
            table = qn(model._meta.db_table)
            cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")  # noqa: S608
            return int(cursor.fetchone()[0])


@dataclass
class SetAside:
    """What was dropped for the load, to be made again exactly."""

    indexes: list[tuple[str, str]] = field(default_factory=list)  # (name, CREATE INDEX ...)
    constraints: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # table, name, type, def


def set_aside(raw: Any, tables: list[str]) -> SetAside:
    aside = SetAside()
    with raw.cursor() as cursor:
        cursor.execute(
            """SELECT conrelid::regclass::text, conname, contype, pg_get_constraintdef(oid)
               FROM pg_constraint WHERE conrelid = ANY(%s::regclass[]) AND contype IN ('f', 'u')
               ORDER BY contype, conrelid::regclass::text, conname""",
            [tables],
        )
        aside.constraints = [tuple(r) for r in cursor.fetchall()]
        cursor.execute(
            """SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
               FROM pg_index i WHERE i.indrelid = ANY(%s::regclass[]) AND NOT EXISTS (
                 SELECT 1 FROM pg_constraint c
                 WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u', 'x'))
               ORDER BY 1""",
            [tables],
        )
        aside.indexes = [tuple(r) for r in cursor.fetchall()]
        for table, name, _, _ in aside.constraints:
            cursor.execute(f"ALTER TABLE {qn(table)} DROP CONSTRAINT {qn(name)}")
        for name, _ in aside.indexes:
            cursor.execute(f"DROP INDEX {name}")  # regclass text: already quoted if needed
    return aside


def put_back(raw: Any, aside: SetAside, progress: Progress | None) -> None:
    """Indexes first, then unique constraints (their own index), then foreign keys
    (validated by one join each)."""
    with raw.cursor() as cursor:
        cursor.execute("SET LOCAL maintenance_work_mem = '1GB'")
        for name, definition in aside.indexes:
            _timed(cursor, definition, name, progress)
        for wanted in ("u", "f"):
            for table, name, kind, definition in aside.constraints:
                if kind == wanted:
                    sql = f"ALTER TABLE {qn(table)} ADD CONSTRAINT {qn(name)} {definition}"
                    _timed(cursor, sql, name, progress)


def _timed(cursor: Any, sql: str, name: str, progress: Progress | None) -> None:
    started = time.monotonic()
    cursor.execute(sql)
    if progress:
        progress(f"  {name}: {time.monotonic() - started:,.1f} s")


def sequences_reset(connection: Any, models_: list[type[models.Model]]) -> None:
    """The console's own inserts continue after the generated ids."""
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), models_):
            cursor.execute(sql)


def analyze(raw: Any, tables: list[str], *, vacuum: bool) -> None:
    """Statistics for the planner; with `vacuum` (outside a transaction only) also the
    visibility map and hint bits, so the first benches do not pay for them or race an
    autovacuum of millions of fresh rows."""
    verb = "VACUUM (ANALYZE)" if vacuum else "ANALYZE"
    with raw.cursor() as cursor:
        for table in tables:
            cursor.execute(f"{verb} {qn(table)}")


def table_bytes(raw: Any, tables: list[str]) -> dict[str, int]:
    with raw.cursor() as cursor:
        cursor.execute(
            "SELECT t, pg_total_relation_size(t::regclass) FROM unnest(%s::text[]) t", [tables]
        )
        return {t: int(n) for t, n in cursor.fetchall()}
