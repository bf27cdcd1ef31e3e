"""The pager's tables, one module per part (docs/pager.md): teams and what they own,
schedules, escalation, pages and their deliveries, heartbeats, maintenance windows."""

from pager.models.escalation import (
    Escalation,
    EscalationPolicy,
    EscalationState,
    EscalationStep,
    StepAction,
)
from pager.models.heartbeats import Heartbeat, HeartbeatKind, HeartbeatState
from pager.models.maintenance import MaintenanceSummary, MaintenanceWindow
from pager.models.paging import (
    ContactKind,
    ContactMethod,
    DeliveryState,
    Page,
    PageDelivery,
    PageStatus,
)
from pager.models.schedules import (
    Frequency,
    Override,
    OverrideSource,
    PagerProfile,
    Rotation,
    RotationMember,
    Schedule,
    ShiftSwap,
    SwapState,
)
from pager.models.teams import Ownership, Team

__all__ = [
    "ContactKind",
    "ContactMethod",
    "DeliveryState",
    "Escalation",
    "EscalationPolicy",
    "EscalationState",
    "EscalationStep",
    "Frequency",
    "Heartbeat",
    "HeartbeatKind",
    "HeartbeatState",
    "MaintenanceSummary",
    "MaintenanceWindow",
    "Override",
    "OverrideSource",
    "Ownership",
    "Page",
    "PageDelivery",
    "PageStatus",
    "PagerProfile",
    "Rotation",
    "RotationMember",
    "Schedule",
    "ShiftSwap",
    "StepAction",
    "SwapState",
    "Team",
]
