"""The escalation engine (docs/pager.md, "Escalation"): services.py starts, advances and
ticks escalations; acks.py acknowledges, expires and stops them; steps.py runs one step
and makes its pages; timeline.py words every line it writes; receivers.py turns the
incident timeline into tasks (pager/tasks/escalation.py)."""
