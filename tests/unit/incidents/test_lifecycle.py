"""Incident lifecycle services: the state machine, permissions, notes, command."""

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console.errors import DomainError
from incidents import services
from incidents.models import Incident, IncidentStatus, TimelineEvent
from incidents.transitions import ALLOWED, TransitionError, apply_transition
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


def kinds(incident):
    return list(incident.events.values_list("kind", flat=True))


def test_acknowledge_mitigate_resolve_set_each_timestamp_once(make_user):
    responder, commander = make_user("r"), make_user("c", role="commander")
    inc = IncidentFactory()
    services.incident_acknowledge(incident_id=inc.pk, actor=responder)
    services.incident_mitigate(incident_id=inc.pk, actor=responder, reason="scaled vllm-chat")
    services.incident_resolve(confirm_no_commander=True, incident_id=inc.pk, actor=commander)
    inc.refresh_from_db()
    assert inc.status == "resolved"
    assert inc.triggered_at <= inc.acknowledged_at <= inc.mitigated_at <= inc.resolved_at
    events = list(inc.events.order_by("id"))
    events = [e for e in events if e.kind == "status_changed"]  # acknowledging took command
    assert [e.payload["to"] for e in events] == ["acknowledged", "mitigated", "resolved"]
    assert [e.actor for e in events] == [responder, responder, commander]
    assert events[1].message == "Incident mitigated: scaled vllm-chat"


def test_resolve_without_ack_counts_as_acknowledged(make_user):
    commander = make_user("c", role="commander")
    inc = IncidentFactory()
    services.incident_resolve(confirm_no_commander=True, incident_id=inc.pk, actor=commander)
    inc.refresh_from_db()
    assert inc.acknowledged_at == inc.resolved_at == inc.mitigated_at


@pytest.mark.parametrize(
    ("start", "service"),
    [
        ("acknowledged", "incident_acknowledge"),
        ("mitigated", "incident_acknowledge"),
        ("resolved", "incident_acknowledge"),
        ("mitigated", "incident_mitigate"),
        ("resolved", "incident_resolve"),
    ],
)
def test_invalid_moves_are_refused_with_a_message(make_user, start, service):
    admin = make_user("a", role="admin")
    inc = IncidentFactory(status=start)
    with pytest.raises(TransitionError) as info:
        getattr(services, service)(incident_id=inc.pk, actor=admin)
    assert f"#{inc.pk}" in str(info.value)
    assert not inc.events.exists()


def test_every_allowed_move_is_reachable_and_nothing_else():
    statuses = list(IncidentStatus.values)
    for a in statuses:
        for b in statuses:
            inc = Incident(pk=1, status=a, title="t", severity="SEV1", grouping_key="g")
            if (a, b) in ALLOWED:
                apply_transition(inc, b, at=timezone.now())
                assert inc.status == b
            else:
                with pytest.raises(TransitionError):
                    apply_transition(inc, b, at=timezone.now())


@pytest.mark.parametrize(
    ("role", "service", "allowed"),
    [
        ("viewer", "incident_acknowledge", False),
        ("responder", "incident_acknowledge", True),
        ("responder", "incident_mitigate", True),
        ("responder", "incident_resolve", False),
        ("commander", "incident_resolve", True),
        ("admin", "incident_resolve", True),
    ],
)
def test_roles_gate_each_transition(make_user, role, service, allowed):
    user = make_user("u", role=role)
    inc = IncidentFactory(severity="SEV3")  # no commander asked for (test_command.py)
    call = getattr(services, service)
    if allowed:
        call(incident_id=inc.pk, actor=user)
    else:
        with pytest.raises(PermissionDenied):
            call(incident_id=inc.pk, actor=user)
        assert Incident.objects.get(pk=inc.pk).status == "triggered"


def test_user_without_role_can_do_nothing(make_user):
    nobody = make_user("n", role=None)
    inc = IncidentFactory()
    with pytest.raises(PermissionDenied):
        services.incident_note_add(incident_id=inc.pk, actor=nobody, text="hi")


def test_reopen_needs_a_reason_and_a_free_group(make_user):
    commander = make_user("c", role="commander")
    inc = IncidentFactory(status="resolved")
    with pytest.raises(DomainError):
        services.incident_reopen(incident_id=inc.pk, actor=commander, reason="  ")
    other = IncidentFactory(grouping_key=inc.grouping_key)
    with pytest.raises(DomainError) as info:
        services.incident_reopen(incident_id=inc.pk, actor=commander, reason="came back")
    assert f"#{other.pk}" in str(info.value)
    other.status = "resolved"
    other.save()
    services.incident_reopen(incident_id=inc.pk, actor=commander, reason="came back")
    inc.refresh_from_db()
    assert inc.status == "triggered"
    assert inc.reopen_count == 1


def test_notes_are_stored_verbatim_and_validated(make_user):
    responder = make_user("r")
    inc = IncidentFactory()
    text = "  <b>KV cache</b> at 98%\nscaling  "
    event = services.incident_note_add(incident_id=inc.pk, actor=responder, text=text)
    assert event.message == text.strip()
    assert event.kind == "note"
    for bad in ("", "   ", "x" * 10_001):
        with pytest.raises(DomainError):
            services.incident_note_add(incident_id=inc.pk, actor=responder, text=bad)
    assert kinds(inc) == ["note"]


def test_unknown_incident_is_a_clear_error(make_user):
    with pytest.raises(DomainError) as info:
        services.incident_acknowledge(incident_id=999_999, actor=make_user("r"))
    assert "999999" in str(info.value)


def test_taking_and_assigning_command(make_user):
    r1, r2 = make_user("r1"), make_user("r2")
    commander = make_user("c", role="commander")
    viewer = make_user("v", role="viewer")
    inc = IncidentFactory()
    with pytest.raises(PermissionDenied):
        services.incident_commander_set(incident_id=inc.pk, actor=viewer, commander_id=viewer.pk)
    services.incident_commander_set(incident_id=inc.pk, actor=r1, commander_id=r1.pk)
    assert Incident.objects.get(pk=inc.pk).commander == r1
    # A responder cannot take over from someone else, nor hand it out.
    with pytest.raises(PermissionDenied):
        services.incident_commander_set(incident_id=inc.pk, actor=r2, commander_id=r2.pk)
    services.incident_commander_set(incident_id=inc.pk, actor=commander, commander_id=r2.pk)
    assert Incident.objects.get(pk=inc.pk).commander == r2
    with pytest.raises(DomainError):  # a viewer cannot command
        services.incident_commander_set(incident_id=inc.pk, actor=commander, commander_id=viewer.pk)
    services.incident_commander_set(incident_id=inc.pk, actor=commander, commander_id=None)
    events = list(inc.events.filter(kind="commander_changed").order_by("id"))
    assert [(e.payload["from"], e.payload["to"]) for e in events] == [
        (None, "r1"),
        ("r1", "r2"),
        ("r2", None),
    ]


def test_timeline_is_append_only(make_user):
    event = services.incident_note_add(
        incident_id=IncidentFactory().pk, actor=make_user("r"), text="hello"
    )
    event.message = "rewritten"
    with pytest.raises(RuntimeError):
        event.save()
    with pytest.raises(RuntimeError):
        event.delete()
    assert TimelineEvent.objects.get(pk=event.pk).message == "hello"
