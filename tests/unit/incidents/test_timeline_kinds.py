"""Timeline kinds come from a registry each app fills from its AppConfig.ready(): a new
kind needs no incidents migration, an unknown one is refused, labels show everywhere."""

import pytest
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management import call_command
from django.urls import reverse

from console import roles
from console.errors import DomainError
from incidents import timeline_kinds
from incidents.models import TimelineEvent
from incidents.services import incident_event_record
from incidents.timeline_kinds import timeline_kind_label, timeline_kinds_register
from tests.factories import IncidentFactory, TimelineEventFactory

pytestmark = pytest.mark.django_db

# Stored values and labels, written out: neither may change without a data migration.
STORED = {
    "incident_opened": ("incidents", "Incident opened"),
    "alert_fired": ("incidents", "Alert fired"),
    "alert_resolved": ("incidents", "Alert resolved"),
    "status_changed": ("incidents", "Status changed"),
    "severity_changed": ("incidents", "Severity changed"),
    "commander_changed": ("incidents", "Commander changed"),
    "note": ("incidents", "Note"),
    "webhook_replayed": ("incidents", "Webhook replayed"),
    "runbook_changed": ("incidents", "Runbook changed"),
    "silence_created": ("incidents", "Silence created"),
    "silence_expired": ("incidents", "Silence expired"),
    "archived": ("incidents", "Archived"),
    "restored": ("incidents", "Restored from the archive"),
    "incident_linked": ("incidents", "Related incident linked"),
    "incident_merged": ("incidents", "Related incident merged"),
    "incident_unlinked": ("incidents", "Related incident unlinked"),
    "diagnosis_confirmed": ("runbooks", "Diagnosis confirmed"),
    "runbook_step": ("runbooks", "Runbook step done"),
    "action": ("actions", "Action"),
    "drill": ("drills", "Drill"),
    "auto_triage": ("runbooks", "Auto-triage"),
    "postmortem": ("postmortems", "Postmortem"),
    "action_item": ("postmortems", "Action item"),
    "page": ("pager", "Page"),
    "escalation": ("pager", "Escalation"),
    "maintenance": ("pager", "Maintenance"),
}


@pytest.fixture
def registry(monkeypatch):
    """The registry as the apps left it, restored after the test."""
    monkeypatch.setattr(timeline_kinds, "_KINDS", dict(timeline_kinds._KINDS))


def test_each_app_registers_its_kinds_with_the_stored_values():
    registered = {k.value: (k.app, k.label) for k in timeline_kinds._KINDS.values()}
    assert registered == STORED


def test_a_kind_registered_at_runtime_is_appended_and_shown(registry, client, make_user):
    timeline_kinds_register(app="chaos", kinds={"chaos_injected": "Chaos injected"})
    incident = IncidentFactory()
    event = incident_event_record(
        incident_id=incident.pk, kind="chaos_injected", message="pod killed", payload={}
    )
    assert TimelineEvent.objects.get(pk=event.pk).get_kind_display() == "Chaos injected"
    client.force_login(make_user("vic", roles.VIEWER))
    body = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert '<span class="ev-kind">Chaos injected</span>' in body


def test_a_new_kind_needs_no_incidents_migration(registry, capsys):
    timeline_kinds_register(app="chaos", kinds={"chaos_injected": "Chaos injected"})
    call_command("makemigrations", "incidents", "--check", "--dry-run")  # exits 1 on changes
    assert "No changes detected" in capsys.readouterr().out


def test_an_unknown_kind_is_refused():
    incident = IncidentFactory()
    with pytest.raises(DomainError, match="'chaos_injected' is not a timeline event kind"):
        incident_event_record(
            incident_id=incident.pk, kind="chaos_injected", message="pod killed", payload={}
        )
    assert not TimelineEvent.objects.filter(incident=incident).exists()
    event = TimelineEvent(incident=incident, kind="chaos_injected", occurred_at=incident.created_at)
    with pytest.raises(ValidationError, match="not a registered timeline kind"):
        event.full_clean()


def test_one_kind_has_one_owner(registry):
    timeline_kinds_register(app="actions", kinds={"action": "Action"})  # again: a no-op
    with pytest.raises(ImproperlyConfigured, match="already registered by actions"):
        timeline_kinds_register(app="chaos", kinds={"action": "Chaos action"})
    with pytest.raises(ImproperlyConfigured, match="lowercase letters"):
        timeline_kinds_register(app="chaos", kinds={"Chaos Kind": "Chaos"})
    assert timeline_kind_label("action") == "Action"


def test_a_stored_kind_nobody_registers_any_more_still_shows(registry):
    event = TimelineEventFactory.build(kind="retired_kind")
    assert event.get_kind_display() == "Retired kind"


def test_the_admin_filters_by_registered_labels(registry, client, django_user_model):
    timeline_kinds_register(app="chaos", kinds={"chaos_injected": "Chaos injected"})
    TimelineEventFactory(kind="runbook_step", message="step one")
    TimelineEventFactory(kind="note", message="a note")
    admin = django_user_model.objects.create_superuser("root", password="pw-root")
    client.force_login(admin)
    url = reverse("admin:incidents_timelineevent_changelist")
    page = client.get(url).content.decode()
    for label in ("Chaos injected", "Runbook step done", "Postmortem", "Incident opened"):
        assert label in page
    filtered = client.get(url, {"kind": "runbook_step"}).content.decode()
    assert "step one" in filtered
    assert "a note" not in filtered
