"""incidents' own share of `seed_demo --reset`, run after every registered part has
removed what hangs off the demo incidents: their timeline (append-only, purge.py),
their alerts, and the incidents themselves."""

from __future__ import annotations

from incidents.demo.purge import append_only_purge
from incidents.models import Alert, Incident, TimelineEvent


def incidents_demo_reset() -> dict[str, int]:
    demo = Incident.objects.filter(is_demo=True)
    counts = {
        "timeline events": append_only_purge(
            TimelineEvent.objects.filter(incident__is_demo=True), why="demo incidents' timeline"
        ),
        "alerts": Alert.objects.filter(incident__is_demo=True).delete()[0],
    }
    # The rest cascades or is set to NULL (auto-triage rows, deliveries' incident link,
    # related-incident links); what PROTECTs an incident was removed by the parts.
    counts["incidents"] = demo.count()
    demo.delete()
    return counts
