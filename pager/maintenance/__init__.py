"""Maintenance windows: incidents still open inside one, nobody is paged; each
occurrence ends with a summary.

- recurrence.py: occurrences from the first one and an RRULE, wall-clock in a zone;
- selectors.py: occurrences, windows_active, window_for_incident (the escalation asks);
- services.py: window_create, window_cancel, summaries_write (beat);
- channel.py: the summary posted to the team's channel.
"""
