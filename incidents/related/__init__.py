"""Related incidents: one failure that opens several incidents about one target.

When an incident opens, an open incident that opened within
INCIDENT_RELATED_WINDOW_SECONDS before it and shares every label of one of
INCIDENT_RELATED_LABEL_SETS (on its group labels or its alerts) links them: one leads,
the others are part of it (`Incident.related_to`). Drills link only with drills, demo
incidents only with demo incidents. Which leads (rules.py): a runbook that declares it
leads over the other's (`leads_over:` in the catalogue), else the higher severity, else
the one opened first.

- rules.py       pure: the label keys an incident is known by, which of two leads
- precedence.py  the registry through which runbooks says which runbook leads over which
- services.py    link (the console, on opening), merge and unlink (a responder); every
                 change lands on both timelines
- selectors.py   the panel's and the API's reads
- receivers.py   hears of openings (incidents.timeline_signal) and of drills marked
- views.py, api.py  the incident page's panel and its buttons, the API's merge/unlink
"""
