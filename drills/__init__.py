"""Chaos drills: rehearse a runbook's failure on a labelled target, with a stop condition
and pass criteria decided in advance, and keep a scorecard per run."""
