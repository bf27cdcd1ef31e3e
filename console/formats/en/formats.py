"""English date formats for the console's own names (see console/formats/zh_Hans).

Django falls back to its own locale formats for every name not defined here."""

# A moment in an incident: date and time to the second (timelines, alert start/end).
STAMP_FORMAT = "M j, H:i:s"
# The same to the minute (silences, schedules).
STAMP_MINUTE_FORMAT = "M j, H:i"
# Unambiguous, for tooltips and exports: the same in every language.
FULL_STAMP_FORMAT = "Y-m-d H:i:s T"
