"""Retention's archive (incidents/archive/): what moves, what stays, the way back, the
audit, and the append-only timeline's one exception."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from console.audit.models import AuditEvent
from console.errors import DomainError
from incidents.archive.selectors import archivable
from incidents.archive.services import incidents_archive, incidents_restore
from incidents.models import (
    Alert,
    ArchiveBatch,
    Incident,
    IncidentArchive,
    TimelineEvent,
)
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory

pytestmark = pytest.mark.django_db

OLD = timezone.now() - timedelta(days=120)


def _old_incident(n_alerts=3, n_events=4, **kw):
    inc = IncidentFactory(status="resolved", resolved_at=OLD, triggered_at=OLD, **kw)
    for k in range(n_alerts):
        AlertFactory(incident=inc, status="resolved", labels={"pod": f"p{k}", "lws": "x"})
    for k in range(n_events):
        TimelineEventFactory(incident=inc, kind="note", message=f"note {k}", payload={"k": k})
    return inc


def _rows(inc):
    alerts = list(Alert.objects.filter(incident=inc).order_by("id").values())
    events = list(TimelineEvent.objects.filter(incident=inc).order_by("id").values())
    return alerts, events


def test_archive_moves_alerts_and_timeline_and_restore_brings_them_back_exactly():
    inc, recent, open_one = _old_incident(), _old_incident(), _old_incident()
    Incident.objects.filter(pk=recent.pk).update(resolved_at=timezone.now() - timedelta(days=3))
    Incident.objects.filter(pk=open_one.pk).update(status="mitigated")
    before = _rows(inc)

    batch = incidents_archive(older_than_days=90, actor=None, method="command")

    assert (batch.incidents, batch.alerts, batch.events) == (1, 3, 4)
    inc.refresh_from_db()
    assert inc.archived_at is not None
    assert not Alert.objects.filter(incident=inc).exists()
    # What stays on the timeline: the one line saying where the rest went.
    left = list(TimelineEvent.objects.filter(incident=inc).values_list("kind", "message"))
    assert left == [
        (
            "archived",
            "Archived (resolved more than 90 days ago): 3 alerts and 4 timeline "
            f"entries moved to archive batch {batch.pk}.",
        )
    ]
    assert IncidentArchive.objects.get(incident=inc).alerts == 3
    # The others are untouched.
    assert Alert.objects.filter(incident=recent).count() == 3
    assert Alert.objects.filter(incident=open_one).count() == 3

    result = incidents_restore(actor=None, method="command", batch_id=batch.pk)

    assert (result.incidents, result.alerts, result.events, result.alerts_kept) == (1, 3, 4, 0)
    alerts, events = _rows(inc)
    assert alerts == before[0]
    assert events[: len(before[1])] == before[1]  # same ids, columns and JSON
    assert [e["kind"] for e in events[len(before[1]) :]] == ["archived", "restored"]
    inc.refresh_from_db()
    assert inc.archived_at is None
    assert not IncidentArchive.objects.exists()
    assert ArchiveBatch.objects.get().restored == 1


def test_what_a_postmortem_or_a_firing_alert_refers_to_stays_hot(make_user):
    from postmortems.models import Postmortem

    kept, firing, gone = _old_incident(), _old_incident(), _old_incident()
    Postmortem.objects.create(incident=kept, title="pm", created_by=make_user("a"))
    AlertFactory(incident=firing, status="firing")
    ids = set(archivable(timezone.now() - timedelta(days=90)).values_list("pk", flat=True))
    assert ids == {gone.pk}


def test_demo_history_is_never_archived():
    _old_incident(is_demo=True)
    assert incidents_archive(older_than_days=90, actor=None, method="command").incidents == 0


def test_each_run_is_audited_at_its_start_and_end_and_each_restore():
    _old_incident()
    batch = incidents_archive(older_than_days=90, actor=None, method="command", chunk=1)
    incidents_restore(actor=None, method="command", batch_id=batch.pk)
    rows = list(AuditEvent.objects.order_by("id").values_list("kind", "method", "reason"))
    assert [(k, m) for k, m, _ in rows] == [
        ("archived", "command"),
        ("archived", "command"),
        ("restored", "command"),
    ]
    assert f"archive batch {batch.pk} done: 1 incidents, 3 alerts, 4 timeline entries" == rows[1][2]


def test_a_person_needs_the_archive_and_restore_permissions(make_user):
    _old_incident()
    responder = make_user("r")
    with pytest.raises(PermissionDenied):
        incidents_archive(older_than_days=90, actor=responder, method="page")
    admin = make_user("boss", role="admin")
    batch = incidents_archive(older_than_days=90, actor=admin, method="page")
    assert batch.incidents == 1
    assert batch.created_by == admin
    with pytest.raises(PermissionDenied):
        incidents_restore(actor=responder, method="page", batch_id=batch.pk)


def test_too_recent_a_rule_and_unknown_restores_are_refused_by_name():
    with pytest.raises(DomainError, match="at least 7 days"):
        incidents_archive(older_than_days=3, actor=None, method="command")
    with pytest.raises(DomainError, match="not archived: #999999"):
        incidents_restore(actor=None, method="command", incident_ids=[999999])
    with pytest.raises(DomainError, match="no archive batch 424242"):
        incidents_restore(actor=None, method="command", batch_id=424242)


def test_an_alert_ingested_again_since_is_kept_on_restore():
    inc = _old_incident(n_alerts=2)
    first = Alert.objects.filter(incident=inc).order_by("id").first()
    batch = incidents_archive(older_than_days=90, actor=None, method="command")
    again = AlertFactory(
        incident=None, fingerprint=first.fingerprint, starts_at=first.starts_at, grouping_key="g"
    )
    result = incidents_restore(actor=None, method="command", batch_id=batch.pk)
    assert (result.alerts, result.alerts_kept) == (1, 1)
    again.refresh_from_db()
    assert again.incident_id is None


def test_the_timeline_still_refuses_every_other_delete():
    inc = _old_incident()
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM incidents_timelineevent WHERE incident_id = %s", [inc.pk])
    assert TimelineEvent.objects.filter(incident=inc).count() == 4


def test_commands_archive_list_and_restore(capsys):
    inc = _old_incident()
    call_command("archive_incidents", "--older-than-days", "90", "--dry-run")
    assert "1 incidents would be archived." in capsys.readouterr().out
    call_command("archive_incidents", "--older-than-days", "90")
    assert "1 incidents, 3 alerts, 4 timeline entries" in capsys.readouterr().out
    call_command("archive_incidents", "--list")
    assert "incidents 1" in capsys.readouterr().out
    call_command("restore_incidents", "--incident", str(inc.pk))
    assert "Restored 1 incidents: 3 alerts, 4 timeline entries." in capsys.readouterr().out


@pytest.mark.parametrize(("days", "errors"), [(0, 0), (90, 0), (3, 1), (-1, 1)])
def test_the_retention_setting_is_checked_at_start(settings, days, errors):
    from incidents.archive.checks import retention_days_check

    settings.RETENTION_RESOLVED_DAYS = days
    found = retention_days_check()
    assert len(found) == errors
    if errors:
        assert found[0].id == "incidents.E020"


def test_an_archived_incident_gets_no_postmortem_until_it_is_restored(make_user):
    from postmortems.services.drafting import postmortem_draft

    inc = _old_incident()
    batch = incidents_archive(older_than_days=90, actor=None, method="command")
    author = make_user("pm", role="commander")
    with pytest.raises(DomainError, match="restore it from the archive first"):
        postmortem_draft(incident_id=inc.pk, actor=author)
    incidents_restore(actor=None, method="command", batch_id=batch.pk)
    assert postmortem_draft(incident_id=inc.pk, actor=author).incident_id == inc.pk
