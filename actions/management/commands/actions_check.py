"""`manage.py actions_check`: can the console's Kubernetes credentials run every action?"""

from django.core.management.base import BaseCommand, CommandError

from actions.kinds import ActionError
from actions.rbac import REQUIRED, missing_permissions


class Command(BaseCommand):
    help = (
        "Check that the Kubernetes credentials (KUBECONFIG or in-cluster ServiceAccount) "
        "have every permission the remediation actions use; exit 1 if not."
    )

    def handle(self, *args, **options):
        try:
            missing = missing_permissions()
        except ActionError as exc:
            raise CommandError(f"cannot check Kubernetes permissions: {exc.message}") from exc
        if missing:
            for line in missing:
                self.stderr.write(f"MISSING: {line}")
            raise CommandError(
                f"{len(missing)} of {len(REQUIRED)} permissions are missing; grant them with "
                "deploy/k8s/rbac.yaml"
            )
        self.stdout.write(self.style.SUCCESS(f"OK: all {len(REQUIRED)} permissions granted"))
