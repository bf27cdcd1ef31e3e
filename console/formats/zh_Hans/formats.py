"""Simplified Chinese date formats for the console's own names (see console/formats/en)."""

STAMP_FORMAT = "n月j日 H:i:s"
STAMP_MINUTE_FORMAT = "n月j日 H:i"
FULL_STAMP_FORMAT = "Y-m-d H:i:s T"
