"""Until tests/bench/storm.py, tests/bench/fleet_storm.py, tests/payloads.py and
tests/unit/runbooks/test_slug_rule.py import incidents.ingest.parse (then delete this file)."""

from incidents.ingest.parse import ParsedAlert, labels_fingerprint

__all__ = ["ParsedAlert", "labels_fingerprint"]
