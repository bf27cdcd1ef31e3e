"""Celery tasks (thin: each calls one service)."""
