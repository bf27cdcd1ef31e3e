"""What `seed_demo --reset` removes before incidents removes the demo incidents
themselves (incidents/demo/reset.py): what hangs off them in the apps above incidents,
in the order their foreign keys allow. Append-only rows (review comments, postmortem
edits, drill and action-run events) leave through incidents.demo.purge, which deletes
demo rows only and audits it; every other row here is an ordinary delete."""

from __future__ import annotations

from django.db.models import Q

from actions.guard.models import GuardWatch
from actions.models import ActionRun, ActionRunEvent
from drills.models import DrillPlan, DrillRun, DrillRunEvent
from incidents.demo.purge import append_only_purge
from postmortems.models import ActionItem, Notification, Postmortem, PostmortemEdit, ReviewComment


def history_reset() -> dict[str, int]:
    counts: dict[str, int] = {}
    pms = list(Postmortem.objects.filter(incident__is_demo=True).values_list("pk", flat=True))
    items = list(ActionItem.objects.filter(incident__is_demo=True).values_list("pk", flat=True))
    # In-app notices about them (review requests, overdue reminders): keyed, not linked.
    notices = Q(pk__in=[])
    for pk in pms:
        notices |= Q(dedupe_key__startswith=f"review:{pk}:")
    for pk in items:
        notices |= Q(dedupe_key__startswith=f"overdue:{pk}:")
    counts["notifications"] = (
        Notification.objects.filter(notices).delete()[0] if pms or items else 0
    )
    counts["action items"] = ActionItem.objects.filter(pk__in=items).delete()[0]
    demo_pm = Q(postmortem__incident__is_demo=True)
    counts["review comments"] = append_only_purge(
        ReviewComment.objects.filter(demo_pm), why="demo postmortems' review comments"
    )
    counts["postmortem edits"] = append_only_purge(
        PostmortemEdit.objects.filter(demo_pm), why="demo postmortems' edit history"
    )
    Postmortem.objects.filter(pk__in=pms).delete()  # their lines, charts, reviewers cascade
    counts["postmortems"] = len(pms)
    counts["guard watches"] = GuardWatch.objects.filter(incident__is_demo=True).delete()[0]
    counts["drill run events"] = append_only_purge(
        DrillRunEvent.objects.filter(run__is_demo=True), why="demo drill runs' history"
    )
    counts["drill runs"] = DrillRun.objects.filter(is_demo=True).delete()[0]
    # A demo plan someone has since run for real stays (its real runs need it).
    counts["drill plans"] = (
        DrillPlan.objects.filter(is_demo=True).exclude(runs__isnull=False).delete()[0]
    )
    demo_runs = ActionRun.objects.filter(incident__is_demo=True)
    counts["action run events"] = append_only_purge(
        ActionRunEvent.objects.filter(run__in=demo_runs), why="demo action runs' audit"
    )
    # Undos first: a run PROTECTs the runs that undo it.
    counts["action runs"] = demo_runs.exclude(undo_of=None).delete()[0]
    counts["action runs"] += demo_runs.delete()[0]
    return counts
