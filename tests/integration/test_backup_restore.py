"""The backup and restore drill (issue 29, docs/operations.md "Backup and restore"), on
PostgreSQL as an operator runs it: `pg_dump --format=custom` while Alertmanager
notifications pour into the production stack (gunicorn, the webhook), a restore into a
new database with `pg_restore --no-owner`, and the console started on the restored
database.

pg_dump reads one snapshot, taken after it starts, and the webhook answers 2xx only once
its body's receipt is committed: so every body acknowledged before pg_dump started must
come back, byte for byte; those acknowledged later may or may not. The storm goes on
until bodies were acknowledged after the dump finished, so the dump really ran under
writes. Then the restored console must need no migration, answer /readyz, let the admin
sign in, show the snapshot's incidents (each named by a restored receipt), keep its
append-only guarantees, and take new notifications.

Databases `<TEST_DB_NAME>_backup_src` and `_backup_restored` (the run's own, dropped at
the end); every port free. About 45 s on a quiet 2-CPU machine (70 s beside other
work), most of it `migrate` of the source and DROP DATABASE's checkpoint.
"""

import os
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import requests
from django.conf import settings

from tests.bench import stack
from tests.bench.fleet_storm import build_storm
from tests.conftest import need_service
from tests.integration.backup_drill import (
    StormWithDump,
    database_create,
    database_drop,
    database_url,
    list_total,
    manage,
    missing_tools,
    query,
    receipt_bodies,
    run_tool,
    signed_in,
    storm_with_dump,
)
from tests.payloads import alert, notification

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SEED = 29
NOTIFICATIONS = 400  # more than the storm needs: it stops once the dump is behind it
THREADS = 3  # Alertmanager replicas, or route groups sent in parallel
ACKED_BEFORE_DUMP = 40
ACKED_AFTER_DUMP = 20
ADMIN, PASSWORD = "drill-admin", "drill-admin-pw-29"


@dataclass
class Drill:
    source: str
    restored: str
    storm: StormWithDump
    base: str  # the restored console's URL
    migrate_check: subprocess.CompletedProcess[str]  # manage.py migrate --check on it

    @property
    def before_dump(self):
        return [a for a in self.storm.ledger.acked if a.answered < self.storm.dump_started]


def _console_env(name: str, tmp: Path, **extra: str) -> dict[str, str]:
    return stack.console_env(name, tmp / f"var-{name}", DATABASE_URL=database_url(name), **extra)


def _ok(proc) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    return session


def _gunicorn(env: dict[str, str], log: Path):
    port = stack.free_port()
    args = ["-c", "python:config.gunicorn_conf", "--bind", f"127.0.0.1:{port}"]
    proc = stack.start_gunicorn([*args, "config.wsgi:application"], env, log, port)
    return proc, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def drill(tmp_path_factory):
    need_service(
        "PostgreSQL", settings.DATABASES["default"]["ENGINE"].endswith("postgresql"), "on SQLite"
    )
    missing = missing_tools()
    need_service(
        "PostgreSQL client tools",
        not missing,
        f"{', '.join(missing)} not on PATH (Debian package postgresql-client)",
    )
    tmp = tmp_path_factory.mktemp("backup")
    source = f"{os.environ['TEST_DB_NAME']}_backup_src"
    restored = f"{os.environ['TEST_DB_NAME']}_backup_restored"
    procs = []
    try:
        # The source: a console as deployed, with an admin, taking a storm.
        database_create(source)
        env = _console_env(source, tmp)
        _ok(manage(env, "migrate", "--noinput"))
        with ThreadPoolExecutor(1) as pool:  # the admin is made while gunicorn starts
            admin = pool.submit(
                manage, {**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}, "createsuperuser",
                "--noinput", "--username", ADMIN, "--email", "drill-admin@example.org",
            )  # fmt: skip
            web, base = _gunicorn(env, tmp / "web-source.log")
            procs.append(web)
            _ok(admin.result())
        notes = build_storm(NOTIFICATIONS, SEED).notifications
        queues = [[n.body for n in notes if n.group % THREADS == i] for i in range(THREADS)]
        dump = tmp / "console.dump"
        storm = storm_with_dump(
            base,
            stack.TOKEN,
            queues,
            lambda: run_tool("pg_dump", "--format=custom", "--file", str(dump), source),
            acked_before=ACKED_BEFORE_DUMP,
            acked_after=ACKED_AFTER_DUMP,
        )
        web.terminate()  # its graceful stop overlaps the restore; waited for at the end

        # The restore, as docs/operations.md tells an operator to do it.
        database_create(restored)
        run_tool("pg_restore", "--no-owner", "--exit-on-error", "--single-transaction",
                 "--dbname", restored, str(dump))  # fmt: skip
        env = _console_env(restored, tmp, WEB_CONCURRENCY="1")
        with ThreadPoolExecutor(1) as pool:  # checked while gunicorn starts
            check = pool.submit(manage, env, "migrate", "--check")
            web, base = _gunicorn(env, tmp / "web-restored.log")
            procs.append(web)
            checked = check.result()
        yield Drill(source, restored, storm, base, checked)
    finally:
        # In parallel: gunicorn's master takes seconds to stop, and DROP DATABASE waits
        # for a checkpoint.
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(stack.stop, procs))
            list(pool.map(database_drop, (source, restored)))


def test_the_dump_ran_during_the_storm(drill):
    storm = drill.storm
    after = [a for a in storm.ledger.acked if a.answered > storm.dump_finished]
    restored = receipt_bodies(drill.restored)
    during = [
        a for a in storm.ledger.acked if storm.dump_started <= a.answered <= storm.dump_finished
    ]
    print(  # the figures: shown with -s, or when this test fails
        f"acknowledged {len(storm.ledger.acked)} bodies, refused {len(storm.ledger.refused)};"
        f" pg_dump took {storm.dump_finished - storm.dump_started:.2f} s;"
        f" before it {len(drill.before_dump)}, during it {len(during)}"
        f" ({sum(a.receipt in restored for a in during)} restored),"
        f" after it {len(after)} ({sum(a.receipt in restored for a in after)} restored)"
    )
    assert len(drill.before_dump) >= ACKED_BEFORE_DUMP
    assert len(after) >= ACKED_AFTER_DUMP, f"refused: {storm.ledger.refused[:5]}"


def test_the_source_kept_every_acknowledged_body(drill):
    """The premise: a 2xx means the body is stored."""
    stored = receipt_bodies(drill.source)
    for ack in drill.storm.ledger.acked:
        assert stored.get(ack.receipt) == ack.body, f"receipt {ack.receipt}"


def test_every_body_acknowledged_before_the_dump_is_restored(drill):
    restored = receipt_bodies(drill.restored)
    missing = [a.receipt for a in drill.before_dump if restored.get(a.receipt) != a.body]
    assert not missing, f"{len(missing)} acknowledged bodies lost, receipts {missing[:10]}"
    # By content too, whatever the ids: a repeated notification is as many bodies.
    wanted = Counter(a.body for a in drill.before_dump)
    assert not wanted - Counter(restored.values())


def test_the_restored_database_needs_no_migration(drill):
    _ok(drill.migrate_check)  # exits 1 while a migration is unapplied


def test_the_restored_console_opens_with_the_snapshots_incidents(drill):
    ready = _session().get(drill.base + "/readyz", timeout=30)
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["database"] == "ok"

    session = signed_in(drill.base, ADMIN, PASSWORD)
    assert session.get(drill.base + "/admin/", timeout=30).status_code == 200
    page = session.get(drill.base + "/", timeout=30)
    assert page.status_code == 200

    # The snapshot's incidents are the ones its receipts name: each receipt was committed
    # with the incidents it opened or touched, so a consistent snapshot has both or neither.
    incidents = {pk for (pk,) in query(drill.restored, "SELECT id FROM incidents_incident")}
    named = {
        pk
        for (ids,) in query(drill.restored, "SELECT incident_ids FROM incidents_webhookreceipt")
        for pk in ids
    }
    assert incidents == named
    assert {pk for a in drill.before_dump for pk in a.incidents} <= incidents
    assert list_total(page.text) == len(incidents)


def test_the_append_only_tables_still_refuse(drill):
    def refused(statement: str) -> str:
        with pytest.raises(psycopg.errors.RestrictViolation) as caught:
            query(drill.restored, statement)
        return str(caught.value)

    assert query(drill.restored, "SELECT count(*) FROM incidents_timelineevent")[0][0] > 0
    assert "append-only" in refused("UPDATE incidents_timelineevent SET message = 'rewritten'")
    assert "append-only" in refused("DELETE FROM incidents_timelineevent")
    refused("UPDATE incidents_webhookreceipt SET body = 'rewritten'")
    assert "TRUNCATE refused" in refused("TRUNCATE incidents_timelineevent")
    triggers = (
        "SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
        " JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal"
    )
    assert set(query(drill.restored, triggers)) == set(query(drill.source, triggers))


def test_the_restored_console_takes_new_notifications(drill):
    """Alertmanager re-sends what still fires once the console is back: ids go on from
    the restored sequences."""
    last = query(drill.restored, "SELECT max(id) FROM incidents_webhookreceipt")[0][0]
    body = notification(
        [alert(pod="vllm-chat-restored-0", extra_labels={"cluster": "restored"})],
        group_key='{}:{alertname="VLLMHighTTFT", cluster="restored"}',
    )
    answer = _session().post(
        drill.base + stack.WEBHOOK_PATH,
        json=body,
        headers={"Authorization": f"Bearer {stack.TOKEN}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["receipt"] > last
    assert answer.json()["opened"]
