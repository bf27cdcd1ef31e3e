"""Create the demo logins and, on a fresh database, 90 days of demo history.

`make run` calls this on every start. Idempotent: an existing admin keeps its password,
and the history is loaded only into a database with no incidents at all (a restart, or
a database someone has used, gets none). The history itself is built by the parts
registered with incidents/demo/ (postmortems/demo/: incidents, alerts, timelines, action
runs, postmortems, action items, drills), every row flagged demo.

`seed_demo --reset` removes the demo history and nothing else: demo rows of the
append-only tables leave through incidents/demo/purge.py (narrow, audited in
VAR_DIR/demo_resets.jsonl, whose presence also stops a later start from seeding again).
The logins stay.
"""

import json
import secrets
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from console import roles
from incidents.demo import DemoContext, demo_parts
from incidents.demo.purge import AUDIT_FILE
from incidents.demo.reset import incidents_demo_reset
from incidents.models import Incident


class Command(BaseCommand):
    help = (
        "Create the demo admin and approver (passwords printed) and, on an empty database, "
        "load 90 days of demo history; --reset removes the demo history."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", default="", help="default: random, kept in var/")
        parser.add_argument(
            "--reset", action="store_true", help="remove every demo row (and nothing else)"
        )

    def handle(self, *args, username, password, reset=False, **options):
        if reset:
            self.stdout.write(json.dumps({"removed": self._reset()}))
            return
        roles.roles_sync()
        password = self._admin(username, password)
        # A second person: risky actions and SEV1 incidents need someone other than the
        # requester to approve, so the demo needs two logins.
        approver = self._user("commander", roles.COMMANDER, "demo_commander_password")
        history: dict = {}
        config: dict = {}
        # Once reset (the audit file exists), a database is not seeded again on restart.
        reset_before = (settings.VAR_DIR / AUDIT_FILE).exists()
        if not reset_before:
            # Set-up (the pager's teams) also on a database in use, where it has none.
            config = self._configure(username)
        if not reset_before and not Incident.objects.exists():
            history = self._history(username)
        self.stdout.write(json.dumps({"username": username, "password": password,
                                      "approver": {"username": "commander",
                                                   "password": approver},
                                      "incidents_loaded": history.get("incidents", 0),
                                      "config": config, "history": history}))  # fmt: skip

    def _context(self, username: str) -> DemoContext:
        User = get_user_model()
        return DemoContext(
            now=timezone.now().replace(microsecond=0),
            admin=User.objects.get(username=username),
            commander=User.objects.get(username="commander"),
        )

    def _configure(self, username: str) -> dict:
        ctx = self._context(username)
        counts: dict = {}
        for part in demo_parts():
            if part.configure is not None:
                counts.update(part.configure(ctx))
        return counts

    def _history(self, username: str) -> dict:
        ctx = self._context(username)
        started = time.monotonic()
        counts: dict = {}
        for part in demo_parts():
            counts.update(part.seed(ctx))
        counts["seconds"] = round(time.monotonic() - started, 2)
        return counts

    @transaction.atomic
    def _reset(self) -> dict:
        counts: dict[str, int] = {}
        for part in reversed(demo_parts()):
            counts.update(part.reset())
        counts.update(incidents_demo_reset())
        return counts

    def _admin(self, username: str, password: str) -> str:
        return self._user(username, roles.ADMIN, "demo_admin_password", password, superuser=True)

    def _user(self, username, role, file, password="", *, superuser=False) -> str:
        stored = settings.VAR_DIR / file
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is not None:
            return stored.read_text().strip() if stored.exists() else "(unchanged)"
        password = password or secrets.token_urlsafe(9)
        create = User.objects.create_superuser if superuser else User.objects.create_user
        user = create(username=username, password=password, email="")
        user.groups.add(Group.objects.get(name=role))
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        stored.write_text(password)
        stored.chmod(0o600)
        return password
