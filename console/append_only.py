"""Rows the application inserts and never updates or deletes (timelines, audit logs, edit
histories, kept revisions). Imports no app, so every app can use it.

Two guards, so that neither the ORM nor a hand-typed SQL statement can rewrite history:

- `AppendOnlyModel`: `save()` of a stored row, `delete()`, and the queryset's `update()`
  and `delete()` (so `bulk_update` too) raise `AppendOnlyError` before any SQL is sent.
- `AppendOnlyTriggers`, a migration operation: BEFORE UPDATE / DELETE row triggers
  (PostgreSQL and SQLite) that refuse the statement with an IntegrityError. They also
  catch what the ORM guard cannot see: raw SQL, and the DELETEs of an `on_delete=CASCADE`
  (the deletion collector bypasses `QuerySet.delete`).

TRUNCATE fires no row trigger: on PostgreSQL `AppendOnlyTriggers` also installs a
statement-level BEFORE TRUNCATE trigger that refuses it. Its one way through is the
transaction-local setting `console.allow_truncate = 'on'`, which only the test suite's
flush between transactional tests sets (tests/flush_truncate.py); production code never
does, so `manage.py flush` is refused too. It is a guard against mistakes, not against
the tables' owner, who can drop a trigger. SQLite has no TRUNCATE (its `DELETE FROM t`
without WHERE fires the row triggers): nothing to add there.

Archiving (incidents/archive/) is the one other way rows leave, and only for tables whose
migration adds `AppendOnlyArchivable`: on PostgreSQL their DELETE trigger lets a row go
when the transaction-local setting `console.archiving = 'on'` is set, which only the
archive's service sets, in the transaction that copies the rows into the archive and
audits it. SQLite has no session settings: the archive drops and re-creates the DELETE
trigger inside that same transaction (SQLite's DDL is transactional and its writers
queue, so no other writer ever sees the table without it).

On SQLite, Django's table rebuild (an AlterField it cannot do in place) drops a table's
triggers: a migration that rebuilds one of these tables must add `AppendOnlyTriggers`
again (tests/unit/console/test_append_only.py checks).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn, TypeVar

from django.db import models, router
from django.db.migrations.operations.base import Operation


class AppendOnlyError(RuntimeError):
    """A change to a row of an append-only table was attempted through the ORM."""


_M = TypeVar("_M", bound=models.Model)


def _refuse(model: type[models.Model], what: str) -> NoReturn:
    raise AppendOnlyError(f"{model.__name__} rows are append-only: {what} refused.")


class AppendOnlyQuerySet(models.QuerySet[_M, _M]):
    def update(self, **kwargs: Any) -> int:
        _refuse(self.model, "queryset update()")

    # Django's own markers on QuerySet.update/delete (templates never call them; a
    # manager does not copy delete); function attributes the stubs do not declare.
    update.alters_data = True  # type: ignore[attr-defined]

    def delete(self) -> tuple[int, dict[str, int]]:
        _refuse(self.model, "queryset delete()")

    delete.alters_data = True  # type: ignore[attr-defined]
    delete.queryset_only = True  # type: ignore[attr-defined]


AppendOnlyManager = models.Manager.from_queryset(AppendOnlyQuerySet)


class AppendOnlyModel(models.Model):
    objects = AppendOnlyManager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            _refuse(type(self), "save() of a stored row")
        return super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(type(self), "delete()")


# --- database triggers -------------------------------------------------------------------
# The SQL is generated when a migration runs: change it only together with a migration
# that re-creates the triggers of existing databases.


def _name(table: str) -> str:
    return f"{table}_append_only"


def _message(table: str) -> str:
    return f"{table} rows are append-only"


def _changed(vendor: str, columns: Iterable[str]) -> str:
    """SQL true when an UPDATE changes any of `columns` (NULL-safe)."""
    op = "IS DISTINCT FROM" if vendor == "postgresql" else "IS NOT"
    return " OR ".join(f'OLD."{c}" {op} NEW."{c}"' for c in columns)


# The escape hatch of the TRUNCATE trigger, for the test suite's flush only: a custom
# setting, read with missing_ok so that a session which never set it reads NULL.
ALLOW_TRUNCATE = "console.allow_truncate"
ALLOW_TRUNCATE_SQL = f"SET LOCAL {ALLOW_TRUNCATE} = 'on'"


def truncate_trigger_sql(vendor: str, table: str) -> list[str]:
    """Statements creating (again, harmlessly) the BEFORE TRUNCATE trigger of `table`."""
    if vendor != "postgresql":
        return []
    name = f"{_name(table)}_truncate"
    return [
        f'CREATE OR REPLACE FUNCTION "{name}"() RETURNS trigger LANGUAGE plpgsql AS $$ '
        f"BEGIN IF current_setting('{ALLOW_TRUNCATE}', true) = 'on' THEN RETURN NULL; "
        f"END IF; RAISE EXCEPTION USING MESSAGE = '{_message(table)}: TRUNCATE refused', "
        "ERRCODE = 'restrict_violation'; END $$",
        f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"',
        f'CREATE TRIGGER "{name}" BEFORE TRUNCATE ON "{table}" FOR EACH STATEMENT '
        f'EXECUTE FUNCTION "{name}"()',
    ]


def truncate_trigger_drop_sql(vendor: str, table: str) -> list[str]:
    if vendor != "postgresql":
        return []
    name = f"{_name(table)}_truncate"
    return [f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"', f'DROP FUNCTION IF EXISTS "{name}"()']


def trigger_sql(
    vendor: str, table: str, *, delete: bool = True, columns: Iterable[str] = ()
) -> list[str]:
    """Statements creating the triggers of `table`: every UPDATE refused, or with
    `columns` only an UPDATE that changes one of them; every DELETE if `delete`; and
    (PostgreSQL) every TRUNCATE. A table whose DELETE is allowed is still emptied only
    row by row, by the statements its row triggers can see."""
    name, columns = _name(table), tuple(columns)
    when = _changed(vendor, columns) if columns else ""
    if vendor == "postgresql":
        # The message is concatenated rather than a RAISE format string: a '%' in SQL sent
        # through a DB-API cursor is a placeholder trap.
        statements = [
            f'CREATE OR REPLACE FUNCTION "{name}"() RETURNS trigger LANGUAGE plpgsql AS $$ '
            f"BEGIN RAISE EXCEPTION USING MESSAGE = '{_message(table)}: ' || TG_OP || "
            "' refused', ERRCODE = 'restrict_violation'; END $$",
            f'CREATE TRIGGER "{name}_update" BEFORE UPDATE ON "{table}" FOR EACH ROW '
            + (f"WHEN ({when}) " if when else "")
            + f'EXECUTE FUNCTION "{name}"()',
        ]
        if delete:
            statements.append(
                f'CREATE TRIGGER "{name}_delete" BEFORE DELETE ON "{table}" FOR EACH ROW '
                f'EXECUTE FUNCTION "{name}"()'
            )
        return statements + truncate_trigger_sql(vendor, table)
    if vendor == "sqlite":
        # RAISE(ABORT) surfaces as sqlite3.IntegrityError, like restrict_violation above.
        statements = [
            f'CREATE TRIGGER "{name}_update" BEFORE UPDATE ON "{table}" FOR EACH ROW '
            + (f"WHEN {when} " if when else "")
            + f"BEGIN SELECT RAISE(ABORT, '{_message(table)}: UPDATE refused'); END"
        ]
        if delete:
            statements.append(
                f'CREATE TRIGGER "{name}_delete" BEFORE DELETE ON "{table}" FOR EACH ROW '
                f"BEGIN SELECT RAISE(ABORT, '{_message(table)}: DELETE refused'); END"
            )
        return statements
    return []


def trigger_drop_sql(vendor: str, table: str) -> list[str]:
    name = _name(table)
    if vendor == "postgresql":
        return [
            f'DROP TRIGGER IF EXISTS "{name}_update" ON "{table}"',
            f'DROP TRIGGER IF EXISTS "{name}_delete" ON "{table}"',
            f'DROP FUNCTION IF EXISTS "{name}"()',
            *truncate_trigger_drop_sql(vendor, table),
        ]
    if vendor == "sqlite":
        return [
            f'DROP TRIGGER IF EXISTS "{name}_update"',
            f'DROP TRIGGER IF EXISTS "{name}_delete"',
        ]
    return []


# The escape hatch of an archivable table's DELETE trigger (PostgreSQL), for the archive only.
ARCHIVING = "console.archiving"
ARCHIVING_SQL = f"SET LOCAL {ARCHIVING} = 'on'"
# The tables whose migration added AppendOnlyArchivable (incidents 0006): whoever re-creates
# their triggers (the demo reset) re-creates the archivable DELETE trigger too.
ARCHIVABLE_TABLES = frozenset({"incidents_timelineevent"})


def archivable_delete_sql(vendor: str, table: str) -> list[str]:
    """Statements replacing the DELETE trigger of `table` (PostgreSQL) by one that lets a
    row go while the archive's setting is on. Nothing on SQLite (see the module doc)."""
    if vendor != "postgresql":
        return []
    name = _name(table)
    return [
        f'CREATE OR REPLACE FUNCTION "{name}_delete"() RETURNS trigger LANGUAGE plpgsql AS $$ '
        f"BEGIN IF current_setting('{ARCHIVING}', true) = 'on' THEN RETURN OLD; END IF; "
        f"RAISE EXCEPTION USING MESSAGE = '{_message(table)}: DELETE refused', "
        "ERRCODE = 'restrict_violation'; END $$",
        f'DROP TRIGGER IF EXISTS "{name}_delete" ON "{table}"',
        f'CREATE TRIGGER "{name}_delete" BEFORE DELETE ON "{table}" FOR EACH ROW '
        f'EXECUTE FUNCTION "{name}_delete"()',
    ]


def archivable_delete_undo_sql(vendor: str, table: str) -> list[str]:
    """The reverse: the plain DELETE trigger of `trigger_sql` again."""
    if vendor != "postgresql":
        return []
    name = _name(table)
    return [
        f'DROP TRIGGER IF EXISTS "{name}_delete" ON "{table}"',
        f'DROP FUNCTION IF EXISTS "{name}_delete"()',
        f'CREATE TRIGGER "{name}_delete" BEFORE DELETE ON "{table}" FOR EACH ROW '
        f'EXECUTE FUNCTION "{name}"()',
    ]


def sqlite_delete_trigger_sql(table: str) -> tuple[str, str]:
    """(drop, create) of the SQLite DELETE trigger of `table`, for the archive's transaction."""
    create = next(s for s in trigger_sql("sqlite", table) if "BEFORE DELETE" in s)
    return f'DROP TRIGGER IF EXISTS "{_name(table)}_delete"', create


class _TriggerOperation(Operation):
    reversible = True
    reduces_to_sql = True

    def state_forwards(self, app_label, state) -> None:
        pass  # no model state: triggers are invisible to the ORM

    def _run(self, app_label, schema_editor, statements) -> None:
        if router.allow_migrate(schema_editor.connection.alias, app_label):
            for sql in statements:
                schema_editor.execute(sql, params=None)


class AppendOnlyTriggers(_TriggerOperation):
    """Migration operation: install (reverse: drop) the triggers of one table, with the
    SQL of the database's vendor. Other vendors get none (the console runs on PostgreSQL
    and SQLite; the ORM guard still holds elsewhere). `sqlmigrate` shows the SQL."""

    def __init__(self, table: str, *, delete: bool = True, columns: Iterable[str] = ()):
        self.table, self.delete, self.columns = table, delete, tuple(columns)

    def deconstruct(self):
        kwargs: dict[str, Any] = {}
        if not self.delete:
            kwargs["delete"] = False
        if self.columns:
            kwargs["columns"] = self.columns
        return self.__class__.__qualname__, [self.table], kwargs

    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        vendor = schema_editor.connection.vendor
        sql = trigger_sql(vendor, self.table, delete=self.delete, columns=self.columns)
        self._run(app_label, schema_editor, sql)

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        self._run(
            app_label, schema_editor, trigger_drop_sql(schema_editor.connection.vendor, self.table)
        )

    def describe(self) -> str:
        what = "UPDATE" if not self.columns else f"UPDATE of {', '.join(self.columns)}"
        return f"Refuse {what}{', DELETE' if self.delete else ''} and TRUNCATE on {self.table}"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.table}_append_only"


class AppendOnlyArchivable(_TriggerOperation):
    """Migration operation: let the archive (and nothing else) delete rows of an
    append-only table on PostgreSQL (see the module doc). Reverse: refuse every DELETE."""

    def __init__(self, table: str):
        self.table = table

    def deconstruct(self):
        return self.__class__.__qualname__, [self.table], {}

    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        vendor = schema_editor.connection.vendor
        self._run(app_label, schema_editor, archivable_delete_sql(vendor, self.table))

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        vendor = schema_editor.connection.vendor
        self._run(app_label, schema_editor, archivable_delete_undo_sql(vendor, self.table))

    def describe(self) -> str:
        return f"Let the archive delete rows of {self.table}"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.table}_archivable"
