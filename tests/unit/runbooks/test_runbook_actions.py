"""A responder acts on the incident's runbook: changes it, confirms the diagnosis, checks
off steps; each lands on the incident's timeline (services and the htmx/plain views)."""

import json
import pathlib
import re

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.utils import translation

from console import roles
from console.errors import DomainError
from incidents.models import TimelineEvent, TimelineEventType
from runbooks import services
from runbooks.catalog import load_catalog
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED, RUNBOOK_STEP
from tests.payloads import alert
from tests.unit.runbooks.test_pages import HTMX, ingest, prom  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db
K = TimelineEventType


def events(incident, kind):
    return list(TimelineEvent.objects.filter(incident=incident, kind=kind))


@pytest.fixture
def responder(make_user):
    return make_user("rita", roles.RESPONDER)


@pytest.fixture
def viewer_user(make_user):
    return make_user("vera", roles.VIEWER)


# --- services ---------------------------------------------------------------------------
def test_change_runbook_writes_it_and_a_timeline_event(post_webhook, responder):
    incident = ingest(post_webhook, [alert()])
    services.runbook_change(incident_id=incident.pk, actor=responder, slug="nccl-hang")
    incident.refresh_from_db()
    assert incident.runbook == "nccl-hang"
    (event,) = events(incident, K.RUNBOOK_CHANGED)
    assert {k: v for k, v in event.payload.items() if k != "msg"} == {
        "from": "ttft-spike",
        "to": "nccl-hang",
    }
    assert event.actor == responder


def test_change_runbook_refuses_unknown_unchanged_and_viewers(post_webhook, responder, viewer_user):
    incident = ingest(post_webhook, [alert()])
    with pytest.raises(DomainError, match=r"no runbook named 'nope'; the catalogue has: .*ttft"):
        services.runbook_change(incident_id=incident.pk, actor=responder, slug="nope")
    services.runbook_change(incident_id=incident.pk, actor=responder, slug="nccl-hang")
    with pytest.raises(DomainError, match="already"):
        services.runbook_change(incident_id=incident.pk, actor=responder, slug="nccl-hang")
    with pytest.raises(PermissionDenied):
        services.runbook_change(incident_id=incident.pk, actor=viewer_user, slug="ecc-errors")
    assert len(events(incident, K.RUNBOOK_CHANGED)) == 1


def test_confirm_diagnosis_records_branch_and_check_values(post_webhook, responder, prom):  # noqa: F811
    incident = ingest(post_webhook, [alert()])
    event = services.diagnosis_confirm(incident_id=incident.pk, actor=responder)
    assert event.kind == DIAGNOSIS_CONFIRMED
    assert event.message.startswith("Diagnosis confirmed: capacity — ")
    assert event.payload["runbook"] == "ttft-spike"
    assert event.payload["branch"] == "capacity"
    checks = {c["id"]: c for c in event.payload["checks"]}
    assert checks["waiting_queue"] == {"id": "waiting_queue", "value": 25.0, "state": "firing"}
    assert checks["kv_usage"]["value"] == pytest.approx(0.97)


def test_a_diagnosis_confirmed_in_chinese_is_stored_in_english(post_webhook, responder, prom):  # noqa: F811
    """The timeline reads in one language whoever wrote it (README, Languages)."""
    incident = ingest(post_webhook, [alert()])
    english = load_catalog().edition("en").get("ttft-spike").branch("capacity").diagnosis
    with translation.override("zh-hans"):
        event = services.diagnosis_confirm(incident_id=incident.pk, actor=responder)
    assert event.message == f"Diagnosis confirmed: capacity — {english.split('. ')[0]}."


def test_confirm_diagnosis_without_runbook_is_refused(post_webhook, responder, prom):  # noqa: F811
    incident = ingest(
        post_webhook, [alert(runbook="", alertname="SomethingElse")], alertname="SomethingElse"
    )
    with pytest.raises(DomainError, match="No runbook"):
        services.diagnosis_confirm(incident_id=incident.pk, actor=responder)
    assert not events(incident, DIAGNOSIS_CONFIRMED)


def test_step_check_off_once_and_only_known_steps(post_webhook, responder, viewer_user):
    incident = ingest(post_webhook, [alert()])
    event = services.runbook_step_check(incident_id=incident.pk, actor=responder, step="triage")
    assert event.message == "Runbook step done: Triage"
    assert {k: v for k, v in event.payload.items() if k != "msg"} == {
        "runbook": "ttft-spike",
        "step": "triage",
    }
    with pytest.raises(DomainError, match="already checked off"):
        services.runbook_step_check(incident_id=incident.pk, actor=responder, step="triage")
    with pytest.raises(DomainError, match="not a runbook step"):
        services.runbook_step_check(incident_id=incident.pk, actor=responder, step="lunch")
    with pytest.raises(PermissionDenied):
        services.runbook_step_check(incident_id=incident.pk, actor=viewer_user, step="fix")
    # Another runbook starts its own checklist.
    services.runbook_change(incident_id=incident.pk, actor=responder, slug="nccl-hang")
    services.runbook_step_check(incident_id=incident.pk, actor=responder, step="triage")
    assert len(events(incident, RUNBOOK_STEP)) == 2


# --- views ------------------------------------------------------------------------------
def test_responder_posts_each_action_plain_and_htmx(client, post_webhook, responder, prom):  # noqa: F811
    incident = ingest(post_webhook, [alert()])
    client.force_login(responder)
    base = f"/runbooks/incidents/{incident.pk}"
    response = client.post(f"{base}/steps/symptom/")
    assert response.status_code == 302
    assert response["Location"] == f"/incidents/{incident.pk}/"
    assert events(incident, RUNBOOK_STEP)

    response = client.post(f"{base}/diagnosis/", **HTMX)
    assert response.status_code == 200
    assert "incident-changed" in json.loads(response["HX-Trigger"])
    assert events(incident, DIAGNOSIS_CONFIRMED)
    body = response.content.decode()
    assert 'data-testid="step-done"' in body  # symptom carries its ✓ now
    assert body.count('data-testid="step-check"') == 4
    assert 'data-testid="confirm-diagnosis"' in body

    response = client.post(f"{base}/runbook/", {"slug": "nccl-hang"}, **HTMX)
    assert response.status_code == 200
    assert "incident-changed" in json.loads(response["HX-Trigger"])
    assert "nccl-hang" in response.content.decode()
    incident.refresh_from_db()
    assert incident.runbook == "nccl-hang"


def test_refusals_are_409_for_htmx_and_a_message_otherwise(client, post_webhook, responder):
    incident = ingest(post_webhook, [alert()])
    client.force_login(responder)
    url = f"/runbooks/incidents/{incident.pk}/runbook/"
    response = client.post(url, {"slug": "no-such"}, **HTMX)
    assert response.status_code == 409
    assert b"no runbook named" in response.content
    response = client.post(url, {"slug": "no-such"}, follow=True)
    assert b"no runbook named" in response.content
    assert client.post(f"/runbooks/incidents/{incident.pk}/steps/lunch/").status_code == 302


def test_viewer_is_forbidden_and_sees_no_buttons(client, post_webhook, viewer_user, prom):  # noqa: F811
    incident = ingest(post_webhook, [alert()])
    client.force_login(viewer_user)
    base = f"/runbooks/incidents/{incident.pk}"
    assert client.post(f"{base}/runbook/", {"slug": "nccl-hang"}).status_code == 403
    assert client.post(f"{base}/diagnosis/").status_code == 403
    assert client.post(f"{base}/steps/fix/").status_code == 403
    assert not TimelineEvent.objects.filter(
        kind__in=[K.RUNBOOK_CHANGED, DIAGNOSIS_CONFIRMED, RUNBOOK_STEP]
    ).exists()
    body = client.get(f"{base}/triage/", **HTMX).content.decode()
    assert "step-check" not in body
    assert "confirm-diagnosis" not in body
    assert "runbook-picker" not in body


def test_csrf_is_enforced(post_webhook, responder):
    incident = ingest(post_webhook, [alert()])
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(responder)
    response = csrf_client.post(f"/runbooks/incidents/{incident.pk}/steps/fix/")
    assert response.status_code == 403
    assert not events(incident, RUNBOOK_STEP)


def test_get_is_not_allowed(client, post_webhook, responder):
    incident = ingest(post_webhook, [alert()])
    client.force_login(responder)
    assert client.get(f"/runbooks/incidents/{incident.pk}/diagnosis/").status_code == 405


def test_no_runbook_partial_offers_the_picker(client, post_webhook, responder, prom):  # noqa: F811
    incident = ingest(
        post_webhook, [alert(runbook="", alertname="SomethingElse")], alertname="SomethingElse"
    )
    client.force_login(responder)
    body = client.get(f"/runbooks/incidents/{incident.pk}/triage/", **HTMX).content.decode()
    assert 'data-testid="runbook-picker"' in body
    assert body.count("<option value=") == 9  # "Choose…" + the eight runbooks


def test_incident_timeline_shows_the_new_events(client, post_webhook, responder, prom):  # noqa: F811
    incident = ingest(post_webhook, [alert()])
    services.runbook_step_check(incident_id=incident.pk, actor=responder, step="fix")
    services.diagnosis_confirm(incident_id=incident.pk, actor=responder)
    services.runbook_change(incident_id=incident.pk, actor=responder, slug="ecc-errors")
    client.force_login(responder)
    body = re.sub(r"\s+", " ", client.get(f"/incidents/{incident.pk}/").content.decode())
    for words in ("Runbook step done: Fix", "Diagnosis confirmed: capacity",
                  "Runbook changed", "to ecc-errors"):  # fmt: skip
        assert words in body


def test_incidents_never_imports_runbooks():
    root = pathlib.Path(__file__).resolve().parents[3] / "incidents"
    offenders = [
        str(p)
        for p in root.rglob("*.py")
        if re.search(r"^\s*(from|import)\s+(runbooks|postmortems)\b", p.read_text(), re.M)
    ]
    assert offenders == []
