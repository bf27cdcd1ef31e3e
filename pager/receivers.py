"""What the pager hears from lower apps (connected in PagerConfig.ready())."""

from incidents.timeline_signal import timeline_appended
from pager.escalation.receivers import timeline_appended_receive
from pager.heartbeats import receivers as heartbeats


def connect() -> None:
    # incidents sends this after each commit that appended timeline events; it knows
    # nothing of the pager. The receiver only queues tasks (pager/escalation/receivers.py).
    timeline_appended.connect(timeline_appended_receive, dispatch_uid="pager.escalation.timeline")
    # Alertmanager's Watchdog (and any HEARTBEAT_ALERTNAMES) as heartbeats, per replica.
    heartbeats.connect()
