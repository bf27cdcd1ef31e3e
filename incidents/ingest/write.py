"""Stage 6, write: one interface for ingest's statements (the locking reads, the bulk
writes, the receipt, the repeat fast path), each one statement whatever the number of
rows, and the rows they carry.

Two implementations side by side: write_postgres.py (the hot path: statements written
out, rows travelling as one jsonb parameter bound on the server) and write_sqlite.py
(the ORM, for `make run` on SQLite). apply.writer() picks one per attempt by the
connection's vendor.
"""

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Protocol, TypeVar

from django.db import models

from incidents.models import Incident, WebhookReceipt

Row = dict[str, Any]
M = TypeVar("M", bound=models.Model)

# Columns of a stored alert that a delivery writes (its key, name, group and first
# receipt never change; see decide.Batch.upsert_alert), and their types.
ALERT_UPDATE_COLUMNS = {
    "status": "text",
    "severity": "text",
    "labels": "jsonb",
    "annotations": "jsonb",
    "ends_at": "timestamptz",
    "generator_url": "text",
    "incident_id": "bigint",
    "last_received_at": "timestamptz",
    "receive_count": "integer",
}
INCIDENT_UPDATE_COLUMNS = {
    "status": "text",
    "severity": "text",
    "acknowledged_at": "timestamptz",
    "mitigated_at": "timestamptz",
    "resolved_at": "timestamptz",
    "reopened_at": "timestamptz",
    "reopen_count": "integer",
    "last_alert_at": "timestamptz",
    "updated_at": "timestamptz",
    "alert_digest": "text",
    "last_notified_at": "timestamptz",
}
# What ingest reads of a stored alert, in AlertRow's field order.
ALERT_READ_COLUMNS = (
    "id", "fingerprint", "starts_at", "status", "severity", "labels", "annotations",
    "ends_at", "generator_url", "grouping_key", "incident_id", "last_received_at",
    "receive_count",
)  # fmt: skip


@dataclass(slots=True)
class AlertRow:
    """An incidents_alert row as ingest reads and writes it (id None: not stored yet).
    A stored row is read (ALERT_READ_COLUMNS, in this order) without alertname and
    first_received_at, which never change. Plain objects, not model instances: building
    50 of those cost more than writing them."""

    id: int | None
    fingerprint: str
    starts_at: datetime
    status: str
    severity: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ends_at: datetime | None
    generator_url: str
    grouping_key: str
    incident_id: int | None
    last_received_at: datetime
    receive_count: int
    alertname: str = ""
    first_received_at: datetime | None = None

    def inserted(self) -> Row:
        """The new row's columns (but id)."""
        return {name: getattr(self, name) for name in _NEW_ROW_COLUMNS}

    def updated(self) -> Row:
        """The stored row's id and the columns a delivery writes."""
        return {name: getattr(self, name) for name in ("id", *ALERT_UPDATE_COLUMNS)}


_NEW_ROW_COLUMNS = tuple(f.name for f in fields(AlertRow) if f.name != "id")


def json_value(value: Any) -> Any:
    """A jsonb column as alerts_for_update returned it (text on PostgreSQL)."""
    return json.loads(value) if isinstance(value, str) else value


class Writer(Protocol):
    """What write_postgres and write_sqlite each provide, in the order the full path
    runs them. Rows are locked in primary-key order."""

    def repeat_apply(
        self,
        *,
        groups: Sequence[Row],
        now: datetime,
        orphans_since: datetime,
        receipt: WebhookReceipt,
    ) -> int | None:
        """An unchanged repeat applied with its receipt in one statement: the receipt's
        id, or None (nothing written) when the body is not one."""
        ...

    def rows_for_update(
        self,
        *,
        keys: Sequence[tuple[str, datetime]],
        groups: Sequence[str],
        orphans_since: datetime,
        resolved_since: datetime,
    ) -> tuple[list[AlertRow], list[Incident]]:
        """Lock and read, in this order: the stored alerts with these (fingerprint,
        startsAt) keys and the orphans of `groups` received since `orphans_since`; then the
        incidents those alerts belong to, and those of `groups` that are open or were
        resolved since `resolved_since`. Labels and annotations of the alerts may be JSON
        text (json_value reads them): a delivery overwrites them on the rows it names, so
        only orphans need them."""
        ...

    def pipeline(self) -> AbstractContextManager[None]:
        """Statements written inside may be sent before the previous ones are answered
        (one round trip for all of them); an error surfaces by the end of the block at
        the latest, and the ids models_insert and receipt_insert assign are set by then.
        Only this module's statements go inside (no ORM query: it reads results at once)."""
        ...

    def models_insert(self, objs: Sequence[M]) -> Sequence[M]:
        """Insert unsaved instances of one model; each gets its primary key (inside
        pipeline(): by the end of the block). Like bulk_create: no save() or signals
        (callers announce timeline events)."""
        ...

    def alerts_insert(self, rows: Sequence[Row]) -> None:
        """New alert rows (every column but id). A concurrent delivery of the same new
        alert fails on the unique constraint, and the caller retries the delivery."""
        ...

    def alerts_update(self, rows: Sequence[Row]) -> None:
        """Stored alert rows (id plus ALERT_UPDATE_COLUMNS each), locked by the caller."""
        ...

    def firing_counts(self, incident_ids: Sequence[int]) -> dict[int, int]:
        """How many firing alerts each of these incidents holds (absent: none)."""
        ...

    def incidents_update(self, incidents: Sequence[Incident]) -> None:
        """INCIDENT_UPDATE_COLUMNS of incidents locked by the caller, as in memory."""
        ...

    def receipt_insert(self, receipt: WebhookReceipt) -> None:
        """Record one webhook body; sets the receipt's id (inside pipeline(): by the end
        of the block)."""
        ...
