"""TRUNCATE cannot empty an append-only table on PostgreSQL (it fires no row trigger, so
the UPDATE/DELETE triggers never see it): a statement-level trigger refuses it, unless the
transaction set `console.allow_truncate`, which only the test suite's flush does
(tests/flush_truncate.py). SQLite has no TRUNCATE statement: nothing to guard there."""

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.color import no_style
from django.core.management.sql import sql_flush
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from console.append_only import AppendOnlyModel
from incidents.models import TimelineEvent, WebhookReceipt
from tests.factories import TimelineEventFactory
from tests.unit.console.test_append_only import EXPECTED

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's (SQLite has none)"
)


def _guarded_tables() -> list[str]:
    """Every AppendOnlyModel's table, from the app registry (a future one cannot be
    forgotten), and the other tables with append-only triggers (the webhook receipts)."""
    models = {m._meta.db_table for m in apps.get_models() if issubclass(m, AppendOnlyModel)}
    return sorted(models | set(EXPECTED))


def _check_foreign_keys_now(cursor) -> None:
    """Rows this test's transaction inserted leave deferred foreign-key checks pending,
    and PostgreSQL truncates no table with pending trigger events."""
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _truncate(table: str) -> None:
    # CASCADE: a table other tables reference can only be truncated with them; the named
    # table's trigger fires first, so the message names it.
    with transaction.atomic(), connection.cursor() as cursor:
        _check_foreign_keys_now(cursor)
        cursor.execute(f'TRUNCATE "{table}" CASCADE')


@pytest.mark.django_db
@pytest.mark.parametrize("table", _guarded_tables())
def test_truncate_of_an_append_only_table_is_refused(table):
    with pytest.raises(IntegrityError, match=f"{table} rows are append-only: TRUNCATE refused"):
        _truncate(table)


@pytest.mark.django_db
def test_the_escape_hatch_lasts_one_transaction():
    event = TimelineEventFactory()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL console.allow_truncate = 'on'")
        _truncate("incidents_timelineevent")
        assert not TimelineEvent.objects.exists()
        transaction.set_rollback(True)  # rolled back, and the setting with it
    assert TimelineEvent.objects.filter(pk=event.pk).exists()
    with pytest.raises(IntegrityError, match="TRUNCATE refused"):
        _truncate("incidents_timelineevent")


@pytest.mark.django_db
def test_djangos_flush_sql_alone_is_refused():
    """`manage.py flush` against a real database: refused, the history stays."""
    TimelineEventFactory()
    with pytest.raises(IntegrityError, match="TRUNCATE refused"):
        _flush_as_production_would()
    assert TimelineEvent.objects.exists()


def _flush_as_production_would() -> None:
    """The statements of `manage.py flush`, run without the test suite's escape hatch."""
    with transaction.atomic(), connection.cursor() as cursor:
        _check_foreign_keys_now(cursor)
        for sql in sql_flush(no_style(), connection):
            cursor.execute(sql)


@pytest.mark.django_db(transaction=True)
def test_the_test_suites_flush_still_empties_every_table():
    TimelineEventFactory()
    WebhookReceipt.objects.create(
        received_at=timezone.now(), body="{}", outcome="rejected", http_status=400
    )
    call_command("flush", interactive=False, verbosity=0)  # what runs after this test too
    assert not TimelineEvent.objects.exists()
    assert not WebhookReceipt.objects.exists()
