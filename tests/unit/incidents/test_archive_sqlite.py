"""The archive on SQLite (embedded mode, `make run`): the same moves with SQLite's JSON
functions, and the timeline's DELETE trigger lifted only inside the archive's transaction.
Its own process and database file: the suite's connections are PostgreSQL."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _run(args, db, **kw):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "archive-sqlite-test-key-not-secret-0123456789abcdef",
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )


def test_archive_and_restore_on_sqlite(tmp_path):
    db = tmp_path / "console.sqlite3"
    migrated = _run(["manage.py", "migrate", "-v0"], db)
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    ran = _run([str(Path(__file__).with_name("archive_sqlite_check.py"))], db)
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found == {
        "moved": [1, 3, 4],
        "left": [0, ["archived"]],
        "delete_refused_after": True,
        "restored": [1, 3, 4],
        "alerts_equal": True,
        "events_equal": True,
        "tail": ["archived", "restored"],
    }
