"""Runbooks: the catalogue (catalog/*.yaml), triage checks and decision trees."""
