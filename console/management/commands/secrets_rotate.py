"""`manage.py secrets_rotate`: re-encrypt every stored secret with the first key of
FIELD_ENCRYPTION_KEYS (and the current SECRET_KEY), after a new key was put first."""

from django.core.management.base import BaseCommand

from console.encryption import secrets_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt every encrypted value with the first FIELD_ENCRYPTION_KEYS key. Put the "
        "new key first, keep the old one after it, run this, then drop the old key."
    )

    def handle(self, *args, **options) -> None:
        rewritten = secrets_rotate()
        for label, count in rewritten.items():
            self.stdout.write(f"{label}: {count} values re-encrypted.")
        self.stdout.write(
            self.style.SUCCESS(
                f"{sum(rewritten.values())} values re-encrypted with the first key. Once "
                "every process runs with these settings, the keys after it can be dropped "
                "from FIELD_ENCRYPTION_KEYS; stored secrets no longer need SECRET_KEY_FALLBACKS."
            )
        )
