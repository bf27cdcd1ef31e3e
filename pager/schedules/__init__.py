"""On-call schedules: who is on call when (docs/pager.md, "Schedules").

In the order the data flows: rotation.py (one rotation's shifts, wall-clock handoffs by
rrule), ical_import.py (an imported calendar's events), layers.py (layers, calendar and
overrides combined into the final shifts), selectors.py (the reads), services.py (the
changes: overrides, takes, swaps, the calendar, feed keys), ical_export.py and feeds.py
(the calendar feeds). shifts.py holds what they pass around.
"""
