"""A database older than the release before the squash (issue 24) cannot be migrated by
this code: the migrations it still needs were replaced and deleted. Django would drop the
half-applied squashed migration from the plan and fail later with "lazy reference ... app
'incidents' isn't installed"; this check says what to do instead, before `migrate` runs
(`migrate` runs the database checks first)."""

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.db import connections
from django.db.migrations.loader import MigrationLoader

PREVIOUS_RELEASE = "cd7389c"


@register(Tags.database)
def squashed_history_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for alias in kwargs.get("databases") or []:
        loader = MigrationLoader(connections[alias])  # reads django_migrations
        applied = set(loader.applied_migrations)
        for (app, name), migration in sorted(loader.replacements.items()):
            done = [m for m in migration.replaces if m in applied]
            if done and len(done) < len(migration.replaces):
                errors.append(
                    Error(
                        f"Database {alias!r} has {len(done)} of the {len(migration.replaces)} "
                        f"migrations that {app}.{name} replaces: it is older than release "
                        f"{PREVIOUS_RELEASE}.",
                        hint=f"Upgrade it to release {PREVIOUS_RELEASE} first, then to this one "
                        "(docs/operations.md, Upgrading).",
                        id="console.E010",
                    )
                )
    return errors
