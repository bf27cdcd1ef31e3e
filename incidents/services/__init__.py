"""Every write to incidents, alerts, the timeline and the receipt log goes through here
(ingest's bulk writes through incidents.ingest, whose entry point is re-exported)."""

from incidents.ingest.apply import IngestResult, alerts_ingest
from incidents.services.command import incident_commander_set
from incidents.services.declare import incident_declare
from incidents.services.drill import incident_drill_mark
from incidents.services.lifecycle import (
    incident_acknowledge,
    incident_mitigate,
    incident_note_add,
    incident_reopen,
    incident_resolve,
)
from incidents.services.receipts import (
    webhook_receipt_record,
    webhook_receipt_replay,
    webhook_receipt_replay_request,
    webhook_receipts_prune,
)
from incidents.services.timeline import (
    incident_event_add,
    incident_event_record,
    incident_events_record,
    incident_runbook_set,
)
from incidents.silences.services import incident_silence_create, incident_silence_expire

__all__ = [
    "IngestResult",
    "alerts_ingest",
    "incident_acknowledge",
    "incident_commander_set",
    "incident_declare",
    "incident_drill_mark",
    "incident_event_add",
    "incident_event_record",
    "incident_events_record",
    "incident_mitigate",
    "incident_note_add",
    "incident_reopen",
    "incident_resolve",
    "incident_runbook_set",
    "incident_silence_create",
    "incident_silence_expire",
    "webhook_receipt_record",
    "webhook_receipt_replay",
    "webhook_receipt_replay_request",
    "webhook_receipts_prune",
]
