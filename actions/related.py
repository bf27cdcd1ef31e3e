"""What a lead incident already has under way, for its related incidents' "Part of #N"
panel (incidents.related.lead_work): its active runs and the last few that succeeded,
so a responder on a related incident approves or follows the lead's fix instead of
requesting the same change again (one active run per target refuses it anyway)."""

from django.urls import reverse

from actions.models import ACTIVE_STATUSES, ActionRun, ActionRunStatus
from incidents.related.lead_work import LeadWork

SHOWN = 5


def lead_action_runs(lead_id: int) -> list[LeadWork]:
    runs = (
        ActionRun.objects.filter(
            incident_id=lead_id, status__in=[*ACTIVE_STATUSES, ActionRunStatus.SUCCEEDED]
        )
        .only("id", "kind", "target", "status")
        .order_by("-id")[:SHOWN]
    )
    page = reverse("incidents:detail", args=[lead_id])
    return [
        LeadWork(
            title=f"{run.kind} {run.target}",
            status=str(run.get_status_display()),
            url=f"{page}#runbook-actions",
        )
        for run in runs
    ]
