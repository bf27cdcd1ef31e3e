"""Upgrading from the previous release (commit cd7389c) now that each app's migrations
are squashed (issue 24): the squashed ones `replace` that release's, which are gone, so
its databases must upgrade through them, and new databases must come out the same.

For PostgreSQL and for the embedded SQLite of `make run`, two databases of this test's
own: one migrated from zero, and one restored from the previous release's dump
(tests/fixtures/previous_release, made by make_previous_release.py there) and then
migrated forward. Both by `manage.py migrate`, as an operator runs it. Then: the same
schema, nothing for makemigrations, every row readable through the current models (the
action and drill models now in their own apps, on their old tables), every grant
following its content type, and the append-only triggers still refusing."""

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.db import connections

from actions.guard.models import GuardWatch
from actions.models import ActionRun, ConfigRevision
from drills.models import DrillPlan, DrillRun
from incidents.models import Incident, WebhookReceipt
from notifications.models import Delivery, Target
from postmortems.models import ActionItem, Postmortem
from readiness.models import Deployment, SignOff
from tests.conftest import need_service

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "previous_release"
# Written by tests/fixtures/previous_release/populate.py.
SECRET = "previous-release-signing-secret"
HOOK_URL = "https://hooks.example/console?token=previous-release-token"
MOVED = {"actions.approve_actionrun", "drills.run_drill"}  # runbooks.* at the release


# --- running the current code's manage.py -------------------------------------------
def run_manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`manage.py <args>` with the production settings and `env` (the database)."""
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "VAR_DIR")}
    base.update(DJANGO_SETTINGS_MODULE="config.settings", CELERY_BROKER_URL="memory://")
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=280,
    )  # fmt: skip


def manage(env: dict[str, str], *args: str) -> str:
    proc = run_manage(env, *args)
    assert proc.returncode == 0, f"manage.py {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


# --- PostgreSQL ------------------------------------------------------------------------
def _server() -> str:
    """The suite's PostgreSQL server, as tests/integration/conftest.py's database_url."""
    db = settings.DATABASES["default"]
    user, host = db.get("USER") or "postgres", db.get("HOST") or "127.0.0.1"
    return f"postgres://{user}@{host}:{db.get('PORT') or 5432}"


class PgDatabase:
    """A database of this test run's own (named after the suite's TEST_DB_NAME)."""

    def __init__(self, suffix: str, tmp: Path) -> None:
        self.name = f"{os.environ['TEST_DB_NAME']}_{suffix}"
        self.url = f"{_server()}/{self.name}"
        self.env = {"DATABASE_URL": self.url, "VAR_DIR": str(tmp)}
        self.before: dict = {}
        self._admin("DROP DATABASE IF EXISTS", "CREATE DATABASE")

    def restore(self) -> None:
        """The previous release's database, as its dump has it."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute((FIXTURES / "postgresql.sql").read_text())  # plain SQL, no params
        self.before = _release_facts(self.query)

    def _admin(self, *statements: str) -> None:
        with psycopg.connect(f"{_server()}/postgres", autocommit=True) as admin:
            for statement in statements:
                admin.execute(f'{statement} "{self.name}"')

    def query(self, sql: str) -> list[tuple]:
        with psycopg.connect(self.url) as conn:
            return conn.execute(sql).fetchall()

    def drop(self) -> None:
        self._admin("DROP DATABASE IF EXISTS")


@pytest.fixture(scope="module")
def postgresql():
    need_service("PostgreSQL", settings.DATABASES["default"]["ENGINE"].endswith("postgresql"))


@pytest.fixture(scope="module")
def pg_fresh(postgresql, tmp_path_factory):
    db = PgDatabase("upgrade_fresh", tmp_path_factory.mktemp("pg-fresh"))
    try:
        manage(db.env, "migrate", "--noinput")
        yield db
    finally:
        db.drop()


@pytest.fixture(scope="module")
def pg_upgraded(postgresql, tmp_path_factory):
    """The previous release's database, migrated forward; `before` holds what it had."""
    db = PgDatabase("upgrade_previous", tmp_path_factory.mktemp("pg-previous"))
    try:
        db.restore()
        manage(db.env, "migrate", "--noinput")
        yield db
    finally:
        db.drop()


# --- SQLite (embedded: no DATABASE_URL, VAR_DIR/console.sqlite3) -------------------------
class SqliteDatabase:
    def __init__(self, var: Path) -> None:
        self.path = var / "console.sqlite3"
        self.env = {"VAR_DIR": str(var)}
        self.before: dict = {}

    def restore(self) -> None:
        db = sqlite3.connect(self.path)
        try:
            db.executescript((FIXTURES / "sqlite.sql").read_text())
        finally:
            db.close()
        self.before = _release_facts(self.query)

    def query(self, sql: str) -> list[tuple]:
        db = sqlite3.connect(self.path)
        try:
            return db.execute(sql).fetchall()
        finally:
            db.close()


@pytest.fixture(scope="module")
def sqlite_fresh(tmp_path_factory):
    db = SqliteDatabase(tmp_path_factory.mktemp("sqlite-fresh"))
    manage(db.env, "migrate", "--noinput")
    return db


@pytest.fixture(scope="module")
def sqlite_upgraded(tmp_path_factory):
    db = SqliteDatabase(tmp_path_factory.mktemp("sqlite-previous"))
    db.restore()
    manage(db.env, "migrate", "--noinput")
    return db


def _release_facts(query) -> dict:
    """What a database says of the release it is at: the migrations applied, and the
    permissions of the moved models (runbooks' at the release) with their ids."""
    migrations = {f"{app}.{name}" for app, name in query("SELECT app, name FROM django_migrations")}
    perms = query(
        "SELECT t.app_label, p.codename, p.id FROM auth_permission p"
        " JOIN django_content_type t ON t.id = p.content_type_id"
        " WHERE p.codename IN ('approve_actionrun', 'run_drill')"
    )
    return {"migrations": migrations, "perm_ids": {f"{a}.{c}": pk for a, c, pk in perms}}


UPGRADED = ["pg_upgraded", "sqlite_upgraded"]
PAIRS = [("pg_fresh", "pg_upgraded"), ("sqlite_fresh", "sqlite_upgraded")]


@pytest.fixture
def upgraded(request, django_db_blocker):
    """The upgraded database of the parameter, with `alias` for the current models."""
    db = request.getfixturevalue(request.param)
    if isinstance(db, PgDatabase):
        s = settings.DATABASES["default"]
        config = {**s, "NAME": db.name, "TEST": {}}
    else:
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(db.path)}
    name = db.alias = f"upgraded_{request.param}"
    connections.settings[name] = connections.configure_settings({"default": config})["default"]
    try:
        with django_db_blocker.unblock():
            yield db
            connections[name].close()
    finally:
        del connections.settings[name]
        if hasattr(connections._connections, name):
            delattr(connections._connections, name)


# --- the tests -------------------------------------------------------------------------
@pytest.mark.parametrize("name", UPGRADED)
def test_the_fixture_is_the_previous_release(request, name):
    before = request.getfixturevalue(name).before
    assert "runbooks.0008_append_only_truncate" in before["migrations"]
    assert "incidents.0015_append_only_truncate" in before["migrations"]
    assert not {m for m in before["migrations"] if m.split(".")[0] in ("actions", "drills")}
    assert set(before["perm_ids"]) == {"runbooks.approve_actionrun", "runbooks.run_drill"}


@pytest.mark.parametrize("name", ["pg_fresh", "pg_upgraded", "sqlite_fresh", "sqlite_upgraded"])
def test_nothing_left_to_migrate_or_to_make(request, name):
    db = request.getfixturevalue(name)
    manage(db.env, "migrate", "--check")  # exits 1 while a migration is unapplied
    # Also checks the recorded history is consistent with the graph.
    assert "No changes detected" in manage(db.env, "makemigrations", "--check", "--dry-run")
    recorded = {f"{app}.{n}" for app, n in db.query("SELECT app, name FROM django_migrations")}
    assert "incidents.0001_squashed_0015_append_only_truncate" in recorded
    assert "actions.0001_moved_from_runbooks" in recorded
    assert "drills.0001_moved_from_runbooks" in recorded


# PostgreSQL describes the schema; what a dump and restore re-parse (the WHERE of a
# partial index) may come back with casts spelled differently, so casts and brackets
# are dropped before comparing.
PG_SCHEMA = {
    "columns": "SELECT table_name, column_name, data_type, character_maximum_length,"
    " numeric_precision, is_nullable, column_default, is_identity, identity_generation"
    " FROM information_schema.columns WHERE table_schema = 'public'",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'",
    "constraints": "SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid),"
    " k.condeferrable, k.condeferred FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid"
    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'",
    "triggers": "SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
    " JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = 'public' AND NOT t.tgisinternal",
    "functions": "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p"
    " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'",
    # fillfactor (incidents: HOT updates) and lz4 (webhook bodies) are schema too.
    "storage": "SELECT c.relname, c.relkind, array_to_string(c.reloptions, ',') FROM pg_class c"
    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'",
    "compression": "SELECT c.relname, a.attname, a.attcompression FROM pg_attribute a"
    " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped",
}


def _pg_normal(value):
    if not isinstance(value, str):
        return value
    return re.sub(r"\s+", " ", re.sub(r"::[a-z ]+(\[\])?|[()]", "", value)).strip()


def pg_schema(db: PgDatabase) -> dict[str, set[tuple]]:
    return {
        part: {tuple(_pg_normal(v) for v in row) for row in db.query(sql)}
        for part, sql in PG_SCHEMA.items()
    }


def _sqlite_items(sql: str) -> frozenset[str]:
    """A CREATE TABLE's column and constraint definitions, in any order (a column added
    later sits last)."""
    body, items, depth, current = sql[sql.index("(") + 1 : sql.rindex(")")], [], 0, ""
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    return frozenset(re.sub(r"\s+", " ", item).strip() for item in [*items, current])


def _sqlite_normal(sql: str) -> str:
    # Django writes a JSON key lookup's `IN ('null','false','true')` in set order, which
    # differs between processes: sorted here.
    sql = re.sub(
        r"IN \(('[a-z]+'(?:,'[a-z]+')*)\)",
        lambda m: "IN (" + ",".join(sorted(m.group(1).split(","))) + ")",
        sql,
    )
    return re.sub(r"\s+", " ", sql)


def sqlite_schema(db: SqliteDatabase) -> dict[str, set[tuple]]:
    rows = db.query(
        "SELECT type, name, tbl_name, sql FROM sqlite_master"
        " WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
    )
    schema: dict[str, set[tuple]] = {
        "table": set(),
        "index": set(),
        "trigger": set(),
        "view": set(),
    }
    for kind, name, table, sql in rows:
        shape = _sqlite_items(sql) if kind == "table" else _sqlite_normal(sql)
        schema[kind].add((name, table, shape))
    return schema


@pytest.mark.parametrize(("fresh", "upgraded"), PAIRS)
def test_an_upgraded_database_has_the_schema_of_a_new_one(request, fresh, upgraded):
    describe = pg_schema if fresh.startswith("pg") else sqlite_schema
    new, old = describe(request.getfixturevalue(fresh)), describe(request.getfixturevalue(upgraded))
    for part in new:
        assert new[part] == old[part], (
            f"{part}: only new {sorted(new[part] - old[part], key=str)}, "
            f"only upgraded {sorted(old[part] - new[part], key=str)}"
        )
    assert new["triggers" if "triggers" in new else "trigger"]  # the comparison saw some


def _auth_state(db) -> dict[str, set]:
    """Content types, permissions and the roles' grants, by name (ids differ)."""
    q = db.query
    perms = (
        "SELECT t.app_label || '.' || p.codename FROM auth_permission p"
        " JOIN django_content_type t ON t.id = p.content_type_id"
    )
    return {
        "types": set(q("SELECT app_label, model FROM django_content_type")),
        "permissions": set(q(perms)),
        "roles": set(
            q(
                "SELECT g.name, t.app_label || '.' || p.codename FROM auth_group_permissions gp"
                " JOIN auth_group g ON g.id = gp.group_id"
                " JOIN auth_permission p ON p.id = gp.permission_id"
                " JOIN django_content_type t ON t.id = p.content_type_id"
            )
        ),
    }


@pytest.mark.parametrize(("fresh", "upgraded"), PAIRS)
def test_content_types_permissions_and_roles_match_a_new_database(request, fresh, upgraded):
    new = _auth_state(request.getfixturevalue(fresh))
    old = _auth_state(request.getfixturevalue(upgraded))
    assert new == old
    assert ("runbooks", "actionrun") not in old["types"]
    assert ("commander", "actions.approve_actionrun") in old["roles"]


@pytest.mark.parametrize("upgraded", UPGRADED, indirect=True)
def test_the_rows_are_there_and_read_through_the_current_models(upgraded):
    alias = upgraded.alias
    incident = Incident.objects.using(alias).get()
    assert incident.title == "vLLM p99 latency above SLO"
    assert incident.commander.username == "carol"
    assert sorted(incident.alerts.values_list("alertname", flat=True)) == [
        "VLLMHighLatency",
        "VLLMQueueDepth",
    ]
    timeline = list(incident.events.values_list("kind", "message"))
    assert ("note", "Looking at the router config") in timeline
    assert len(timeline) == 4
    assert WebhookReceipt.objects.using(alias).get().incident_ids == [incident.pk]

    run = ActionRun.objects.using(alias).get()  # actions.ActionRun, table runbooks_actionrun
    assert (run.kind, run.status, run.incident_id) == (
        "update_gateway_limits",
        "succeeded",
        incident.pk,
    )
    assert (run.requested_by.username, run.decided_by.username) == ("rui", "carol")
    assert [e.status_to for e in run.events.all()] == ["awaiting_approval", "queued", "succeeded"]
    revision = ConfigRevision.objects.using(alias).get()
    assert revision.data == {"max_num_seqs": "256"}
    watch = GuardWatch.objects.using(alias).get()
    assert (watch.run_id, watch.revision_id, watch.verdict) == (run.pk, revision.pk, "passed")

    plan = DrillPlan.objects.using(alias).get()  # drills.DrillPlan, table runbooks_drillplan
    drill = DrillRun.objects.using(alias).get()
    assert (drill.plan_id, drill.started_by.username) == (plan.pk, "carol")
    assert [e.message for e in drill.events.all()] == ["Drill started"]

    postmortem = Postmortem.objects.using(alias).get()
    assert postmortem.incident_id == incident.pk
    assert [c.text for c in postmortem.comments.all()] == ["Add the queue graph."]
    item = ActionItem.objects.using(alias).get()
    assert (item.postmortem_id, item.owner.username) == (postmortem.pk, "rui")

    deployment = Deployment.objects.using(alias).get()
    assert deployment.last_verification.checks.get().item == "alerts_route"
    assert SignOff.objects.using(alias).get().by.username == "carol"

    target = Target.objects.using(alias).get()  # decrypted with the suite's keys
    assert (target.url, target.secret) == (HOOK_URL, SECRET)
    assert Delivery.objects.using(alias).filter(target=target, status="sent").exists()


@pytest.mark.parametrize("upgraded", UPGRADED, indirect=True)
def test_grants_followed_the_models_into_their_new_apps(upgraded):
    alias, before = upgraded.alias, upgraded.before

    def held(username: str, via: str) -> set[str]:
        user = User.objects.using(alias).get(username=username)
        perms = Permission.objects.using(alias).select_related("content_type")
        perms = perms.filter(group__user=user) if via == "roles" else perms.filter(user=user)
        return {f"{p.content_type.app_label}.{p.codename}" for p in perms}

    assert held("carol", "roles") >= MOVED  # a commander
    assert not MOVED & held("rui", "roles")  # a responder
    # Granted outside any role, which the role sync after migrate would not restore: kept
    # only because the permissions' content types moved, the same rows with the same ids.
    assert held("dora", "direct") == MOVED
    ids = {
        f"{p.content_type.app_label}.{p.codename}": p.pk
        for p in Permission.objects.using(alias).filter(
            codename__in=["approve_actionrun", "run_drill"]
        )
    }
    assert ids == {
        "actions.approve_actionrun": before["perm_ids"]["runbooks.approve_actionrun"],
        "drills.run_drill": before["perm_ids"]["runbooks.run_drill"],
    }
    # The guard's service account, re-synced after migrate, on the moved type too.
    assert held("console-guard", "direct") == {"actions.request_actionrun"}


def test_rolling_back_returns_the_grants_and_upgrading_again_takes_them(pg_fresh, tmp_path):
    """docs/operations.md, rolling back: before the previous release's code runs again,
    `migrate runbooks 0001_squashed_0008_append_only_truncate` gives its permissions back
    to runbooks; the next upgrade moves them again, past the types that post_migrate made
    for the new apps meanwhile."""
    db = PgDatabase("upgrade_rollback", tmp_path)
    try:
        db.restore()
        before = db.before["perm_ids"]
        manage(db.env, "migrate", "--noinput")
        manage(db.env, "migrate", "runbooks", "0001_squashed_0008_append_only_truncate")
        # The same rows, runbooks' again (the new code's post_migrate made new ones for
        # the new apps meanwhile, which the previous release does not read).
        after = _release_facts(db.query)["perm_ids"]
        assert {k: v for k, v in after.items() if k.startswith("runbooks.")} == before
        direct = (
            "SELECT t.app_label || '.' || p.codename FROM auth_user_user_permissions up"
            " JOIN auth_user u ON u.id = up.user_id"
            " JOIN auth_permission p ON p.id = up.permission_id"
            " JOIN django_content_type t ON t.id = p.content_type_id WHERE u.username = 'dora'"
        )
        assert set(db.query(direct)) == {("runbooks.approve_actionrun",), ("runbooks.run_drill",)}
        manage(db.env, "migrate", "--noinput")
        assert set(db.query(direct)) == {(p,) for p in MOVED}
        assert _auth_state(db) == _auth_state(pg_fresh)
    finally:
        db.drop()


def _refused(db, sql: str) -> str:
    if isinstance(db, PgDatabase):
        with pytest.raises(psycopg.errors.RestrictViolation) as refused:
            db.query(sql)
    else:
        with pytest.raises(sqlite3.IntegrityError) as refused:
            db.query(sql)
    return str(refused.value)


@pytest.mark.parametrize("name", UPGRADED)
def test_the_append_only_triggers_still_refuse(request, name):
    db = request.getfixturevalue(name)
    assert "append-only" in _refused(db, "UPDATE incidents_timelineevent SET message = 'rewritten'")
    assert "append-only" in _refused(db, "DELETE FROM incidents_timelineevent")
    # A moved model's table keeps its triggers.
    assert "append-only" in _refused(db, "UPDATE runbooks_actionrunevent SET message = 'x'")
    if isinstance(db, PgDatabase):
        assert "TRUNCATE refused" in _refused(db, "TRUNCATE runbooks_drillrunevent")
    assert db.query("SELECT count(*) FROM incidents_timelineevent") == [(4,)]


def test_a_database_older_than_the_previous_release_is_refused_untouched(tmp_path):
    """Its squashed migrations are half applied and the rest are gone: `migrate` must fail
    before it changes anything (docs/operations.md: upgrade to the previous release first)."""
    db = SqliteDatabase(tmp_path)
    db.restore()
    older = sqlite3.connect(db.path)
    try:
        with older:  # one transaction: as if incidents 0015 had not run yet
            older.execute(
                "DELETE FROM django_migrations"
                " WHERE app = 'incidents' AND name = '0015_append_only_truncate'"
            )
    finally:
        older.close()
    schema, recorded = sqlite_schema(db), db.query("SELECT * FROM django_migrations")
    proc = run_manage(db.env, "migrate", "--noinput")
    assert proc.returncode != 0
    assert "console.E010" in proc.stdout + proc.stderr  # says which release to upgrade to
    assert sqlite_schema(db) == schema
    assert db.query("SELECT * FROM django_migrations") == recorded
