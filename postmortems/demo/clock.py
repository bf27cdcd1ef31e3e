"""Services stamp `timezone.now()`. The demo replays history through them at the moment
each step happened (a postmortem drafted the morning after, reviewed two days later), so
every stamp they write, in their rows and on the incident's timeline, is the historical
one. Only `seed_demo` uses this, in its own process before the stack starts: it swaps
the module attribute every caller reads (`django.utils.timezone.now`) and puts it back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.utils import timezone


@contextmanager
def clock_at(moment: datetime) -> Iterator[None]:
    real = timezone.now
    timezone.now = lambda: moment
    try:
        yield
    finally:
        timezone.now = real
