"""seed_demo: 90 days of demo history on a fresh database, idempotent, read by reports
and similar incidents, ignored by the drills' SEV1 stop, and removed by --reset without
weakening the append-only tables for real rows (issue 25, item 8)."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from actions.models import ActionRun, ActionRunEvent
from console.append_only import ARCHIVING_SQL, AppendOnlyError
from drills.models import DrillPlan, DrillRun, DrillRunEvent
from drills.selectors import drill_last_passed, real_sev1_open
from incidents.models import Alert, Incident, IncidentStatus, Severity, TimelineEvent
from postmortems.models import ActionItem, ItemStatus, Postmortem, PostmortemEdit
from postmortems.reports.filters import ReportFilters
from postmortems.reports.selectors import report
from postmortems.similar.selectors import incident_similar
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

RUNBOOKS = {
    "ttft-spike", "nccl-hang", "prefix-cache-drop", "retry-storm", "garbage-output",
    "ecc-errors", "cuda-graph-capture", "long-context-kv",
}  # fmt: skip


@pytest.fixture(autouse=True)
def _isolated(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"  # drafting's charts fail fast
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3


def seed(*args: str) -> dict:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return json.loads(out.getvalue())


def test_a_fresh_database_gets_ninety_days_of_resolved_demo_history():
    started = timezone.now()
    answer = seed()
    history = answer["history"]
    assert history["seconds"] < 20, history  # it runs on every fresh `make run`
    incidents = Incident.objects.all()
    assert incidents.count() >= 40
    assert answer["incidents_loaded"] == incidents.count()
    assert not incidents.filter(is_demo=False).exists()
    # Nothing live: no open demo incident, so no approvals forced, no drill blocked.
    assert not incidents.exclude(status=IncidentStatus.RESOLVED).exists()
    assert set(incidents.values_list("runbook", flat=True)) == RUNBOOKS
    oldest = incidents.order_by("triggered_at").first().triggered_at
    assert timedelta(days=80) < started - oldest < timedelta(days=91)
    # Each has a timeline from opened to resolved, a commander and a fix that ran.
    inc = incidents.filter(is_drill=False).first()
    kinds = list(inc.events.values_list("kind", flat=True))
    for kind in ("incident_opened", "alert_fired", "commander_changed", "action",
                 "alert_resolved", "status_changed"):  # fmt: skip
        assert kind in kinds
    assert not incidents.filter(commander=None).exists()
    assert not incidents.filter(acknowledged_at=None).exists()
    ttas = {(i.acknowledged_at - i.triggered_at).total_seconds() for i in incidents}
    assert min(ttas) < 120
    assert max(ttas) > 900
    assert ActionRun.objects.filter(status="succeeded").count() == incidents.count()
    assert Alert.objects.filter(incident__is_demo=True, labels__namespace="llm-serving").exists()
    # Postmortems through the services: published ones, with their review trail.
    published = Postmortem.objects.filter(status="published")
    assert published.count() >= 10
    pm = published.first()
    assert pm.published_at < started - timedelta(days=1)  # stamped when it happened
    assert PostmortemEdit.objects.filter(postmortem=pm, field="status").exists()
    items = ActionItem.objects.all()
    today = timezone.localdate()
    assert items.filter(status=ItemStatus.DONE).exists()
    assert items.filter(status=ItemStatus.OPEN, due_date__lt=today).exists()  # overdue
    # Drills with scorecards, passed and failed.
    runs = DrillRun.objects.all()
    assert runs.count() >= 5
    assert all(r.is_demo and r.scorecard for r in runs)
    assert {r.passed for r in runs} == {True, False}
    assert DrillPlan.objects.filter(is_demo=True).exists()


def test_seeding_again_loads_nothing():
    seed()
    count = Incident.objects.count()
    events = TimelineEvent.objects.count()
    again = seed()
    assert again["incidents_loaded"] == 0
    assert again["history"] == {}
    assert Incident.objects.count() == count
    assert TimelineEvent.objects.count() == events


def test_a_database_in_use_gets_no_history():
    IncidentFactory()
    assert seed()["incidents_loaded"] == 0
    assert not Incident.objects.filter(is_demo=True).exists()


def test_reports_and_mttx_include_the_demo_history_and_say_so():
    seed()
    page = report(filters=ReportFilters.from_params({}))
    assert page.incidents["total"] > 0
    assert page.incidents["demo"] == page.incidents["total"]  # all demo here
    assert any(m.mtta is not None for m in page.months), page.months
    assert page.items.overdue > 0
    assert page.items.done > 0


def test_a_new_incident_finds_similar_demo_incidents():
    seed()
    new = IncidentFactory(runbook="ttft-spike", namespace="llm-serving")
    similar = incident_similar(incident=new)
    assert similar.items, "the similar-incidents panel is empty"
    assert all(s.incident.is_demo for s in similar.items)
    assert any(s.fixes for s in similar.items)
    assert any(s.postmortem for s in similar.items)


def test_an_open_demo_sev1_does_not_block_or_stop_drills():
    IncidentFactory(severity=Severity.SEV1, status=IncidentStatus.TRIGGERED, is_demo=True)
    assert real_sev1_open() is None
    real = IncidentFactory(severity=Severity.SEV1, status=IncidentStatus.TRIGGERED)
    assert real_sev1_open() == real


def test_demo_drills_are_no_readiness_evidence():
    seed()
    assert DrillRun.objects.filter(passed=True, lws="vllm-chat").exists()
    assert drill_last_passed(namespace="llm-serving", lws="vllm-chat") is None


def test_reset_removes_every_demo_row_and_keeps_real_ones_append_only(
    settings, django_capture_on_commit_callbacks
):
    seed()
    assert Incident.objects.filter(is_demo=True).count() >= 40
    real = IncidentFactory(runbook="ttft-spike")
    TimelineEvent.objects.create(
        incident=real, kind="note", occurred_at=timezone.now(), message="real"
    )

    with django_capture_on_commit_callbacks(execute=True):  # the audit line, on commit
        removed = seed("--reset")["removed"]
    assert removed["incidents"] >= 40
    assert removed["timeline events"] > 0
    assert not Incident.objects.filter(is_demo=True).exists()
    for model in (TimelineEvent, ActionRunEvent, DrillRunEvent, PostmortemEdit):
        assert model.objects.exists() is (model is TimelineEvent), model
    assert not DrillRun.objects.exists()
    assert not DrillPlan.objects.exists()
    assert not ActionItem.objects.exists()
    assert not Postmortem.objects.exists()
    # The real incident and its timeline are untouched...
    assert list(TimelineEvent.objects.values_list("incident_id", flat=True)) == [real.pk]
    # ...and still append-only, through the ORM and in the database.
    event = TimelineEvent.objects.get()
    with pytest.raises(AppendOnlyError):
        event.delete()
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM incidents_timelineevent WHERE id = %s", [event.pk])
    # The archive's one way through came back with the triggers (incidents 0006).
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(ARCHIVING_SQL)
        cursor.execute("DELETE FROM incidents_timelineevent WHERE id = %s", [event.pk])
        assert cursor.rowcount == 1
        transaction.set_rollback(True)
    audit = (settings.VAR_DIR / "demo_resets.jsonl").read_text().splitlines()
    assert {json.loads(line)["table"] for line in audit} >= {"incidents_timelineevent"}
    # A restart after the reset does not bring the history back.
    assert seed()["incidents_loaded"] == 0
