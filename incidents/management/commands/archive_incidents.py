"""Archive resolved incidents' alerts and timeline now (what the nightly retention run
does with RETENTION_RESOLVED_DAYS), or list what the archive holds."""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from console.errors import DomainError, page_message
from incidents.archive.selectors import archivable, archive_batches
from incidents.archive.services import MIN_DAYS, incidents_archive
from incidents.models import ArchiveMethod


class Command(BaseCommand):
    help = (
        "Move the alerts and timeline of incidents resolved more than N days ago (and "
        "nothing protects: no postmortem, action item, action run, guard watch or drill) "
        "into the archive. Audited. Restore with restore_incidents."
    )

    def add_arguments(self, parser):
        parser.add_argument("--older-than-days", type=int, help=f"at least {MIN_DAYS}")
        parser.add_argument("--limit", type=int, default=None, help="at most this many incidents")
        parser.add_argument("--dry-run", action="store_true", help="count, archive nothing")
        parser.add_argument("--list", action="store_true", help="list the archive's batches")

    def handle(self, *args, **options):
        if options["list"]:
            for b in archive_batches()[:100]:
                self.stdout.write(
                    f"batch {b.pk}  {b.created_at:%Y-%m-%d %H:%M}  {b.method:<9}  resolved before "
                    f"{b.cutoff:%Y-%m-%d}  incidents {b.incidents}  alerts {b.alerts}  "
                    f"timeline {b.events}  restored {b.restored}"
                )
            return
        days = options["older_than_days"]
        if days is None:
            raise CommandError("Say --older-than-days N (or --list).")
        if options["dry_run"]:
            count = archivable(timezone.now() - timedelta(days=days)).count()
            self.stdout.write(f"{count} incidents would be archived.")
            return
        try:
            batch = incidents_archive(
                older_than_days=days,
                actor=None,
                method=ArchiveMethod.COMMAND,
                limit=options["limit"],
            )
        except DomainError as exc:
            raise CommandError(page_message(exc)) from exc
        self.stdout.write(
            f"Archive batch {batch.pk}: {batch.incidents} incidents, {batch.alerts} alerts, "
            f"{batch.events} timeline entries."
        )
