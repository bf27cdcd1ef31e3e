"""Bring archived incidents' alerts and timeline back into the hot tables."""

from django.core.management.base import BaseCommand, CommandError

from console.errors import DomainError, page_message
from incidents.archive.services import incidents_restore
from incidents.models import ArchiveMethod


class Command(BaseCommand):
    help = "Restore archived incidents: a whole batch (--batch) or named incidents (--incident)."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=None)
        parser.add_argument("--incident", type=int, action="append", default=[])

    def handle(self, *args, **options):
        if (options["batch"] is None) == (not options["incident"]):
            raise CommandError("Say either --batch B or --incident N (repeatable).")
        try:
            result = incidents_restore(
                actor=None,
                method=ArchiveMethod.COMMAND,
                incident_ids=options["incident"],
                batch_id=options["batch"],
            )
        except DomainError as exc:
            raise CommandError(page_message(exc)) from exc
        kept = (
            f"; {result.alerts_kept} alerts were present again and kept"
            if result.alerts_kept
            else ""
        )
        self.stdout.write(
            f"Restored {result.incidents} incidents: {result.alerts} alerts, "
            f"{result.events} timeline entries{kept}."
        )
