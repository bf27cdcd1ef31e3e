"""Alertmanager notifications -> alerts -> incidents: one pipeline, a module per stage,
in the order a webhook body goes through them.

1. receive.py   the HTTP view (POST /api/v1/alerts/alertmanager): token, body size and
                framing, what the receipt keeps, the answer and its status code
2. parse.py     the body's bytes -> ReceiptMeta and ParsedPayload (every field checked)
3. group.py     one entry per alert episode; each alert's group, each group's digest
4. apply.py     alerts_ingest: heartbeat alerts (Watchdog) taken out first and announced
                (incidents/heartbeat_alerts.py); an unchanged repeat in one statement, else
                one transaction (lock, decide, write), retried when a concurrent delivery won
5. decide.py    pure decisions: open, reopen, merge alerts, escalate, mitigate, re-trigger
6. write.py     the statements' interface and rows, implemented side by side by
                write_postgres.py (the hot path) and write_sqlite.py (the ORM, `make run`)

Status moves go through incidents.transitions, the state machine the buttons use too.

The one entry point besides the view: `apply.alerts_ingest(payload=, meta=)`, given a
`parse.ParsedPayload` and a `parse.ReceiptMeta` (re-exported by incidents.services; a
replayed receipt goes through it too). Nothing is imported here, so parse.py stays
importable without Django (the benches build their bodies with labels_fingerprint).
"""
