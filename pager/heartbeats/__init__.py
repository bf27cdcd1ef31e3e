"""Heartbeats (dead-man's switches): HTTP check-ins, one per Alertmanager replica for
its Watchdog, and the console's own workers and beat; a missing one pages through ingest.

- services.py: making them, check-ins (`heartbeat_beat`, `watchdog_seen`);
- check.py: `heartbeats_check` (beat), each heartbeat decided under its own row lock;
- alerts.py: the synthetic HeartbeatMissing notification fed to ingest;
- console.py: the console's own heartbeats, fed from console.liveness;
- selectors.py, views.py + api_urls.py (the check-in endpoint), receivers.py.
"""
