"""Append-only rows cannot be rewritten by any path: the ORM (instance save/delete, queryset
update/delete, related managers, bulk_update) refuses before sending SQL, and database
triggers refuse raw UPDATE/DELETE, on PostgreSQL (the test database) and on SQLite (a
temporary database migrated from scratch here)."""

import sqlite3
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.models import ProtectedError
from django.db.utils import ConnectionHandler
from django.utils import timezone

from console.append_only import AppendOnlyError, AppendOnlyModel
from incidents.models import Incident, ReceiptOutcome, TimelineEvent, WebhookReceipt
from incidents.services import webhook_receipts_prune
from tests.factories import TimelineEventFactory

pytestmark = pytest.mark.django_db

# Written out, not derived from the models: a new append-only model must be added here,
# with its triggers in a migration. (table, DELETE refused, columns an UPDATE may change)
EXPECTED = {
    "incidents_timelineevent": (True, ()),
    "runbooks_actionrunevent": (True, ()),
    "runbooks_configrevision": (True, ()),
    "runbooks_drillrunevent": (True, ()),
    "postmortems_reviewcomment": (True, ()),
    "postmortems_postmortemedit": (True, ()),
    "readiness_signoff": (True, ()),
    "console_auditevent": (True, ()),
    # A verification's item results go with it when old verifications are pruned.
    "readiness_itemcheck": (False, ()),
    # Not an AppendOnlyModel (receipts are pruned), but what a receipt records is fixed;
    # `replay_of` becomes NULL when the receipt it replayed is pruned.
    "incidents_webhookreceipt": (False, ("replay_of_id",)),
}


def _append_only_models():
    return [m for m in apps.get_models() if issubclass(m, AppendOnlyModel)]


def test_every_append_only_model_has_triggers_listed():
    tables = {m._meta.db_table for m in _append_only_models()}
    assert tables == set(EXPECTED) - {"incidents_webhookreceipt"}


# --- the ORM ---------------------------------------------------------------------------
def test_the_orm_refuses_every_rewrite_of_a_timeline_event():
    event = TimelineEventFactory(message="hello")
    incident = event.incident
    event.message = "rewritten"
    attempts = {
        "save": event.save,
        "delete": event.delete,
        "queryset update": lambda: TimelineEvent.objects.filter(pk=event.pk).update(message="x"),
        "queryset delete": lambda: TimelineEvent.objects.filter(pk=event.pk).delete(),
        "all().delete": lambda: TimelineEvent.objects.all().delete(),
        "related update": lambda: incident.events.update(message="x"),
        "related delete": lambda: incident.events.all().delete(),
        "bulk_update": lambda: TimelineEvent.objects.bulk_update([event], ["message"]),
    }
    for what, attempt in attempts.items():
        # bulk_update runs in atomic(savepoint=False): a savepoint keeps the test's own
        # transaction usable after the refusal.
        with pytest.raises(AppendOnlyError, match="append-only"), transaction.atomic():
            attempt()
        assert TimelineEvent.objects.get(pk=event.pk).message == "hello", what


@pytest.mark.parametrize("model", _append_only_models(), ids=lambda m: m.__name__)
def test_every_append_only_queryset_refuses_update_and_delete(model):
    with pytest.raises(AppendOnlyError, match=f"{model.__name__} rows are append-only"):
        model.objects.filter(pk=0).update(pk=1)
    with pytest.raises(AppendOnlyError, match=f"{model.__name__} rows are append-only"):
        model.objects.filter(pk=0).delete()
    with pytest.raises(AppendOnlyError):
        model(pk=1).save()
    with pytest.raises(AppendOnlyError):
        model(pk=1).delete()


def test_new_rows_are_still_written():
    event = TimelineEventFactory()
    assert TimelineEvent.objects.filter(pk=event.pk).exists()
    more = TimelineEvent(incident=event.incident, kind="note", occurred_at=timezone.now())
    TimelineEvent.objects.bulk_create([more])
    assert event.incident.events.count() == 2


# --- PostgreSQL: raw SQL ---------------------------------------------------------------
def _pg_dummy(data_type: str) -> str:
    return {
        "bigint": "1",
        "integer": "1",
        "smallint": "1",
        "boolean": "false",
        "jsonb": "'{}'::jsonb",
        "bytea": "'\\x00'::bytea",
        "inet": "'127.0.0.1'",
        "date": "current_date",
        "timestamp with time zone": "now()",
    }.get(data_type, "'x'")


def _pg_insert(table: str) -> int:
    """A row with placeholder values. Django's foreign keys are DEFERRABLE INITIALLY
    DEFERRED and the test's transaction is never committed, so dangling ids are fine."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = "
            "%s AND is_nullable = 'NO' AND column_default IS NULL AND column_name <> 'id' "
            "AND is_identity = 'NO'",
            [table],
        )
        columns = cursor.fetchall()
        names = ", ".join(f'"{name}"' for name, _ in columns)
        values = ", ".join(_pg_dummy(data_type) for _, data_type in columns)
        cursor.execute(f'INSERT INTO "{table}" ({names}) VALUES ({values}) RETURNING id')  # noqa: S608
        return cursor.fetchone()[0]


def _pg_refused(sql: str, params) -> bool:
    """True when the statement fails with the trigger's message."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
    except IntegrityError as exc:
        return "append-only" in str(exc)
    return False


def _a_text_column(table: str, vendor_columns: list[tuple[str, str]]) -> str:
    return next(name for name, data_type in vendor_columns if data_type in ("text", "TEXT")
                or data_type.startswith(("character", "varchar")))  # fmt: skip


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL triggers")
@pytest.mark.parametrize("table", sorted(EXPECTED))
def test_postgresql_refuses_raw_update_and_delete(table):
    # Rolled back before the test's end, which checks the deferred foreign keys.
    with transaction.atomic():
        _check_postgresql_table(table)
        transaction.set_rollback(True)


def _check_postgresql_table(table: str) -> None:
    delete_refused, may_change = EXPECTED[table]
    row = _pg_insert(table)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s",
            [table],
        )
        columns = cursor.fetchall()
    for name, _ in columns:
        if name == "id" or name in may_change:
            continue
        # A no-op UPDATE of a guarded table is refused too; of the receipt it is allowed.
        refused = _pg_refused(f'UPDATE "{table}" SET "{name}" = "{name}" WHERE id = %s', [row])  # noqa: S608
        assert refused == (not may_change), (table, name)
    text = _a_text_column(table, columns)
    refused = _pg_refused(f'UPDATE "{table}" SET "{text}" = \'changed\' WHERE id = %s', [row])  # noqa: S608
    assert refused, (table, text)
    for name in may_change:
        assert not _pg_refused(f'UPDATE "{table}" SET "{name}" = NULL WHERE id = %s', [row])  # noqa: S608
    assert _pg_refused(f'DELETE FROM "{table}" WHERE id = %s', [row]) == delete_refused  # noqa: S608


# --- cascades and the legitimate paths -------------------------------------------------
def test_deleting_an_incident_with_a_timeline_is_refused():
    event = TimelineEventFactory()
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        Incident.objects.filter(pk=event.incident_id).delete()
    assert TimelineEvent.objects.filter(pk=event.pk).exists()


def test_a_user_who_acted_on_a_timeline_cannot_be_deleted(make_user):
    user = make_user("rita")
    TimelineEventFactory(actor=user)
    with pytest.raises(ProtectedError):
        user.delete()


def test_pruning_receipts_still_works_and_clears_replay_of(settings):
    settings.WEBHOOK_RECEIPT_RETENTION_DAYS = 1
    old = timezone.now() - timedelta(days=30)
    original = WebhookReceipt.objects.create(
        received_at=old, body="{}", outcome=ReceiptOutcome.REJECTED, http_status=400
    )
    replay = WebhookReceipt.objects.create(
        received_at=timezone.now(), outcome=ReceiptOutcome.REPLAYED, http_status=200,
        replay_of=original,
    )  # fmt: skip
    assert webhook_receipts_prune() == 1
    replay.refresh_from_db()
    assert replay.replay_of_id is None
    assert replay.outcome == ReceiptOutcome.REPLAYED


def test_a_receipts_outcome_is_never_rewritten():
    receipt = WebhookReceipt.objects.create(
        received_at=timezone.now(), body="{}", outcome=ReceiptOutcome.REJECTED, http_status=400
    )
    receipt.save()  # an unchanged save (the admin's) is not a rewrite
    receipt.outcome = ReceiptOutcome.ACCEPTED
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        receipt.save()
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        WebhookReceipt.objects.filter(pk=receipt.pk).update(outcome=ReceiptOutcome.ACCEPTED)
    receipt.refresh_from_db()
    assert receipt.outcome == ReceiptOutcome.REJECTED


# --- SQLite: every migration from scratch, then raw SQL --------------------------------
def _sqlite_dummy(declared: str):
    declared = declared.lower()
    if any(t in declared for t in ("int", "bool")):
        return 1
    if "blob" in declared:
        return b"\x00"
    return "{}"  # text, and valid JSON for the JSON columns' CHECK


def _sqlite_migrate(path, *targets) -> None:
    """Migrate the SQLite database at `path` (every app's latest, or to `targets`)
    through a handler of its own (it wants a "default"): the suite's connections stay."""
    handler = ConnectionHandler(
        {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(path)}}
    )
    conn = handler["default"]
    try:
        executor = MigrationExecutor(conn)
        executor.migrate(list(targets) or executor.loader.graph.leaf_nodes())
    finally:
        conn.close()


def _sqlite_triggers(path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    finally:
        db.close()


@pytest.fixture(scope="module")
def sqlite_path(tmp_path_factory, django_db_setup, django_db_blocker):
    """A fresh SQLite database with every migration applied, as `make run` has it.
    (After django_db_setup: a data migration's historical model writes to the default
    database, which must be the test database by then.)"""
    path = tmp_path_factory.mktemp("sqlite") / "console.sqlite3"
    with django_db_blocker.unblock():
        _sqlite_migrate(path)
    return path


def test_sqlite_migrations_install_every_trigger(sqlite_path):
    names = _sqlite_triggers(sqlite_path)
    for table, (delete_refused, _) in EXPECTED.items():
        assert f"{table}_append_only_update" in names, table
        assert (f"{table}_append_only_delete" in names) == delete_refused, table


def test_migrating_back_drops_the_triggers(tmp_path, django_db_blocker):
    path = tmp_path / "console.sqlite3"
    with django_db_blocker.unblock():
        _sqlite_migrate(path)
        _sqlite_migrate(path, ("readiness", None))
    names = _sqlite_triggers(path)
    assert not {n for n in names if n.startswith("readiness_")}
    assert "incidents_timelineevent_append_only_update" in names


@pytest.mark.parametrize("table", sorted(EXPECTED))
def test_sqlite_refuses_raw_update_and_delete(sqlite_path, table):
    delete_refused, may_change = EXPECTED[table]
    db = sqlite3.connect(sqlite_path, isolation_level=None)  # foreign keys off: dummy ids
    try:
        columns = [(r[1], r[2], r[3], r[4]) for r in db.execute(f'PRAGMA table_info("{table}")')]
        needed = [(name, kind) for name, kind, notnull, default in columns
                  if notnull and default is None and name != "id"]  # fmt: skip
        names = ", ".join(f'"{name}"' for name, _ in needed)
        marks = ", ".join("?" for _ in needed)
        row = db.execute(
            f'INSERT INTO "{table}" ({names}) VALUES ({marks})',  # noqa: S608
            [_sqlite_dummy(kind) for _, kind in needed],
        ).lastrowid
        text = _a_text_column(table, [(name, kind) for name, kind, _, _ in columns])
        with pytest.raises(sqlite3.IntegrityError, match="append-only: UPDATE refused"):
            db.execute(f'UPDATE "{table}" SET "{text}" = \'[]\' WHERE id = ?', [row])  # noqa: S608
        for name in may_change:
            db.execute(f'UPDATE "{table}" SET "{name}" = NULL WHERE id = ?', [row])  # noqa: S608
        if delete_refused:
            with pytest.raises(sqlite3.IntegrityError, match="append-only: DELETE refused"):
                db.execute(f'DELETE FROM "{table}" WHERE id = ?', [row])  # noqa: S608
        else:
            db.execute(f'DELETE FROM "{table}" WHERE id = ?', [row])  # noqa: S608
        left = db.execute(f'SELECT count(*) FROM "{table}" WHERE id = ?', [row]).fetchone()[0]  # noqa: S608
        assert left == (1 if delete_refused else 0)
    finally:
        db.close()
