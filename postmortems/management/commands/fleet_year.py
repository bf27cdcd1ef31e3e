"""`manage.py fleet_year --incidents 1000000`: write a believable year of a large fleet
into an empty PostgreSQL console database, for the benches (postmortems/fleet_year/)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from postmortems.fleet_year import YearRefused, generate_year


def _end(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Write a year of incidents, alerts, timelines, postmortems with action items and a "
        "week of webhook receipts into an empty PostgreSQL database, in bulk (COPY)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--incidents", type=int, required=True)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--days", type=int, default=365)
        parser.add_argument(
            "--end", type=_end, default=None, help="ISO date or time the year ends (default: now)"
        )
        parser.add_argument("--alerts-per", type=float, default=30.0)
        parser.add_argument("--events-per", type=float, default=60.0)
        parser.add_argument("--postmortems", type=int, default=None, help="default: incidents / 50")
        parser.add_argument("--database", default="default")
        parser.add_argument(
            "--no-vacuum",
            action="store_true",
            help="skip VACUUM after a big run (ANALYZE only)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            summary = generate_year(
                incidents=options["incidents"],
                seed=options["seed"],
                days=options["days"],
                end=options["end"],
                alerts_per=options["alerts_per"],
                events_per=options["events_per"],
                postmortems=options["postmortems"],
                using=options["database"],
                progress=self._say,
                vacuum=not options["no_vacuum"],
            )
        except YearRefused as exc:
            raise CommandError(f"fleet_year refused: {exc}") from exc
        for line in summary.lines():
            self.stdout.write(line)

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()
