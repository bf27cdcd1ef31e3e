"""The audit log's row for every action a chat user ran, done or refused: the surface as
the method, the console user they acted as (None when unmapped), their chat name."""

from __future__ import annotations

from django.contrib.auth.models import User

from chatops.models import ChatInteraction, Surface
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.audit.services import audit_record

REASON_MAX = 500
METHODS: dict[str, str] = {
    Surface.SLACK: AuditMethod.SLACK,
    Surface.MATTERMOST: AuditMethod.MATTERMOST,
}


def chat_action_audit(
    *,
    interaction: ChatInteraction,
    surface: str,
    user: User | None,
    chat_name: str,
    outcome: str,
    run_id: int | None = None,
) -> AuditEvent:
    """`outcome`: what happened, in English (the audit log is read by admins)."""
    incident = f"#{interaction.incident_id}" if interaction.incident_id else "-"
    return audit_record(
        kind=AuditKind.CHAT_ACTION,
        method=METHODS.get(surface, AuditMethod.SLACK),
        user=user,
        username=chat_name or interaction.external_user,
        reason=f"{interaction.action} {incident}: {outcome}"[:REASON_MAX],
        new={
            "surface": surface,
            "workspace": interaction.workspace_id,
            "action": interaction.action,
            "incident": interaction.incident_id,
            "run": run_id,
            "status": interaction.status,
            "chat_user": interaction.external_user,
        },
    )
