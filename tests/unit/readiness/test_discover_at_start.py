"""Readiness discovers at start (issue 25, item 7d): beat's start queues one checklist
refresh instead of waiting 15 minutes for the schedule's first run."""

from celery import current_app, signals

from config.celery_routes import BEAT_SCHEDULE
from readiness.startup import REFRESH_TASK


def test_beat_start_queues_the_readiness_discovery(monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, *a, **kw: sent.append(name))
    signals.beat_init.send(sender=object())
    assert REFRESH_TASK in sent
    # The same task beat runs every 15 minutes, by the name its route knows.
    assert REFRESH_TASK in {entry["task"] for entry in BEAT_SCHEDULE.values()}


def test_a_broker_that_is_not_up_does_not_stop_beat(monkeypatch):
    def refuse(*_a, **_kw):
        raise ConnectionError("broker down")

    monkeypatch.setattr(current_app, "send_task", refuse)
    signals.beat_init.send(sender=object())  # logged, not raised
