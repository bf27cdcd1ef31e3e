"""Drafting a postmortem from a realistic incident: alerts over two pods (one resolved), a
note, acknowledge / mitigate / resolve, an action run executed against the simulated
cluster. The draft's timeline, impact durations and suggestions are checked exactly."""

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import PermissionDenied

from actions import execution
from actions import services as action_services
from console import roles
from console.errors import DomainError
from incidents import services as incident_services
from incidents.models import Incident
from postmortems import services
from postmortems.models import DraftState, Postmortem
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def people(make_user):
    return make_user("rita", roles.RESPONDER), make_user("cara", roles.COMMANDER)


def ingest(post_webhook, alerts) -> Incident:
    r = post_webhook(notification(alerts, group_key="pm-test"))
    assert r.status_code == 200, r.content
    return Incident.objects.get(pk=r.json()["incidents"][0])


@pytest.fixture
def incident(post_webhook, people, sim, settings):
    """ttft-spike on two pods; the second resolves first; a scale run; fixed times."""
    rita, cara = people
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    fire = [
        alert(pod="vllm-chat-0", starts_at=T0, extra_labels={"node": "gpu-node-1"}),
        alert(pod="vllm-chat-1", starts_at=T0 + timedelta(seconds=20)),
    ]
    inc = ingest(post_webhook, fire)
    incident_services.incident_acknowledge(incident_id=inc.pk, actor=rita)
    incident_services.incident_note_add(incident_id=inc.pk, actor=rita, text="KV cache at 98%")
    run, _created = action_services.action_run_request(
        incident_id=inc.pk, actor=rita, kind="scale_lws",
        params={"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2},
        idempotency_key="draft-test-key",
    )  # fmt: skip
    action_services.action_run_approve(run_id=run.pk, actor=cara)  # SEV1: a second person
    execution.action_run_execute(run_id=run.pk, worker="test:1")
    resolved = [
        alert(pod="vllm-chat-1", status="resolved", starts_at=T0 + timedelta(seconds=20),
              ends_at=T0 + timedelta(minutes=8)),
    ]  # fmt: skip
    ingest(post_webhook, [fire[0], *resolved])
    # vllm-chat-0 still fires: each move is confirmed, with a reason.
    incident_services.incident_mitigate(
        incident_id=inc.pk, actor=rita, reason="scaled", confirm=True
    )
    incident_services.incident_resolve(
        confirm_no_commander=True, incident_id=inc.pk, actor=cara, reason="over", confirm=True
    )
    # Fixed transition times, so the durations are exact.
    Incident.objects.filter(pk=inc.pk).update(
        started_at=T0,
        triggered_at=T0 + timedelta(seconds=75),
        acknowledged_at=T0 + timedelta(minutes=3),
        mitigated_at=T0 + timedelta(minutes=10),
        resolved_at=T0 + timedelta(minutes=30),
    )
    inc.refresh_from_db()
    return inc


def test_draft_has_the_timeline_durations_and_suggestions(incident, people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"  # nothing listens: recorded, not fatal
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    pm = services.postmortem_draft(incident_id=incident.pk, actor=people[0])
    assert pm.draft_state == DraftState.READY
    d = pm.impact_data["durations"]
    assert d == {"detect": 75, "acknowledge": 105, "mitigate": 600, "resolve": 1800}
    assert pm.impact_data["alerts"] == {"total": 2, "by_name": {"VLLMHighTTFT": 2}}
    assert pm.impact_data["affected"]["pod"] == ["vllm-chat-0", "vllm-chat-1"]
    assert pm.impact_data["affected"]["node"] == ["gpu-node-1"]
    assert "mitigated after 10m 00s" in pm.summary
    assert "- Alerts: 2 (2 VLLMHighTTFT)" in pm.impact
    assert pm.runbook == "ttft-spike"
    assert pm.category
    assert "confirm or replace it" in pm.root_cause
    assert [s["source"] for s in pm.suggestions][:2] == [
        "runbook:ttft-spike:0",
        "runbook:ttft-spike:1",
    ]

    entries = list(pm.entries.order_by("occurred_at", "id"))
    texts = [e.text for e in entries]
    kinds = [e.kind for e in entries]
    # Alerts at their own times, grouped by name and minute; the incident's own events;
    # one line per action run (not its step-by-step events).
    assert entries[0].occurred_at == T0
    assert texts[0] == "2 x VLLMHighTTFT started firing on vllm-chat-0, vllm-chat-1"
    assert "VLLMHighTTFT resolved on vllm-chat-1" in texts
    assert "incident_opened" in kinds
    assert any(t == "rita: KV cache at 98%" for t in texts)
    (action,) = [e for e in entries if e.source == "action"]
    assert "scale_lws" in action.text
    assert "succeeded" in action.text
    assert "approved by cara" in action.text
    assert "from 4 to 6 groups" in action.text
    assert kinds.count("status_changed") >= 3  # acknowledged, mitigated, resolved
    assert all(e.original_text == e.text and e.included for e in entries)
    # No Prometheus: each golden-signal snapshot records why it is empty.
    snaps = list(pm.snapshots.all())
    assert snaps
    assert all(s.error and not s.series for s in snaps)


def test_drafting_rules(incident, people, post_webhook, make_user):
    viewer = make_user("vic", roles.VIEWER)
    with pytest.raises(PermissionDenied):
        services.postmortem_draft(incident_id=incident.pk, actor=viewer)
    first = services.postmortem_draft(incident_id=incident.pk, actor=people[0])
    again = services.postmortem_draft(incident_id=incident.pk, actor=people[1])
    assert again.pk == first.pk
    assert Postmortem.objects.count() == 1
    open_incident = ingest_open(post_webhook)
    with pytest.raises(DomainError, match="once it is mitigated or resolved"):
        services.postmortem_draft(incident_id=open_incident.pk, actor=people[0])


def ingest_open(post_webhook) -> Incident:
    r = post_webhook(notification([alert(pod="vllm-chat-7")], group_key="still-open"))
    return Incident.objects.get(pk=r.json()["incidents"][0])


def test_big_incidents_are_drafted_on_the_worker(
    incident, people, settings, django_capture_on_commit_callbacks, monkeypatch
):
    from postmortems import tasks

    settings.POSTMORTEM_ASYNC_THRESHOLD = 3
    queued: list[int] = []
    monkeypatch.setattr(tasks.postmortem_draft_task, "delay", queued.append)
    # Other after-commit work (the timeline's announcement) runs too; the build is queued once.
    with django_capture_on_commit_callbacks(execute=True):
        pm = services.postmortem_draft(incident_id=incident.pk, actor=people[0])
    assert pm.draft_state == DraftState.PENDING
    assert queued == [pm.pk]
    # What the task runs (here in-process); a redelivery leaves a ready draft alone.
    built = services.postmortem_draft_build(postmortem_id=pm.pk)
    assert built.draft_state == DraftState.READY
    count = built.entries.count()
    services.postmortem_draft_build(postmortem_id=pm.pk)
    assert built.entries.count() == count


def test_a_failed_draft_is_drafted_again(incident, people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    pm = services.postmortem_draft(incident_id=incident.pk, actor=people[0])
    lines = pm.entries.count()
    # As if the worker had died half way: the draft is marked failed with the reason.
    Postmortem.objects.filter(pk=pm.pk).update(draft_state=DraftState.FAILED, draft_error="boom")
    again = services.postmortem_draft(incident_id=incident.pk, actor=people[1])
    assert again.pk == pm.pk
    assert again.draft_state == DraftState.READY
    assert again.entries.count() == lines  # replaced, not doubled
    assert again.snapshots.count() == pm.snapshots.count()


def test_refresh_follows_the_incident_keeping_what_authors_wrote(incident, people, settings):
    """Drafted while mitigated; resolved (and a note added) afterwards: publishing (or the
    refresh button) brings the facts up to date and leaves reworded lines alone. New facts
    after the approval send it back to review: what is published is what was approved."""
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    Incident.objects.filter(pk=incident.pk).update(status="mitigated", resolved_at=None)
    pm = services.postmortem_draft(incident_id=incident.pk, actor=people[0])
    assert pm.impact_data["durations"]["resolve"] is None
    first = pm.entries.order_by("occurred_at", "id").first()
    services.timeline_entry_update(entry_id=first.pk, actor=people[0], text="Alerts fired.")
    lines = pm.entries.count()
    incident_services.incident_note_add(
        incident_id=incident.pk, actor=people[1], text="Root cause found"
    )
    Incident.objects.filter(pk=incident.pk).update(
        status="resolved", resolved_at=T0 + timedelta(minutes=45)
    )
    services.postmortem_request_review(postmortem_id=pm.pk, actor=people[0], reviewers=["cara"])
    services.postmortem_review(postmortem_id=pm.pk, actor=people[1], approve=True)
    with pytest.raises(DomainError, match="changed since it was approved"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people[1])
    services.postmortem_review(postmortem_id=pm.pk, actor=people[1], approve=True)
    services.postmortem_publish(postmortem_id=pm.pk, actor=people[1])
    pm.refresh_from_db()
    assert pm.status == "published"
    assert pm.impact_data["durations"]["resolve"] == 45 * 60
    assert pm.entries.count() == lines + 1
    assert pm.entries.filter(text="cara: Root cause found").exists()
    first.refresh_from_db()
    assert first.text == "Alerts fired."  # the author's wording stays
    with pytest.raises(DomainError, match="published"):
        services.postmortem_refresh(postmortem_id=pm.pk, actor=people[0])


def test_refresh_button_by_role(incident, people, make_user, client, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    pm = services.postmortem_draft(incident_id=incident.pk, actor=people[0])
    client.force_login(make_user("vic", roles.VIEWER))
    assert 'data-testid="refresh"' not in client.get(f"/postmortems/{pm.pk}/").content.decode()
    assert client.post(f"/postmortems/{pm.pk}/refresh/").status_code == 403
    client.force_login(people[0])
    assert 'data-testid="refresh"' in client.get(f"/postmortems/{pm.pk}/").content.decode()
    response = client.post(f"/postmortems/{pm.pk}/refresh/")
    assert response.status_code == 302
    assert pm.edits.filter(field="refresh").exists()
