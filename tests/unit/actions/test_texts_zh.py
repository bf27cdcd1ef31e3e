"""A run's texts are stored as message ids and parameters (console/texts/) and read in the
reader's language: requested on a SEV1 incident (approval), approved, executed by the
worker against the simulator, and one that fails a guardrail in the worker. In Chinese
nothing is English beyond names, codes and the words the glossary keeps."""

import pytest
from django.test import Client
from django.utils import translation
from rest_framework.test import APIClient

from actions import execution, services
from actions.models import ActionRun, ActionRunStatus
from actions.timeline_kinds import ACTION
from console import roles
from console.api_tokens.models import ApiToken
from console.texts import render
from incidents.models import TimelineEvent
from tests.english_words import english_words
from tests.factories import IncidentFactory
from tests.unit.conftest import NS

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
NAMES = ("vllm-chat", NS, "rita", "cole")
SCALE = {"namespace": NS, "lws": "vllm-chat", "replicas_delta": 2}


def chinese(parts) -> str:
    """The parts worded in Chinese; fails when a word is left in English."""
    assert parts, "stored without parts"
    text = render(parts, language=ZH, fallback="<no render>")
    assert text != "<no render>"
    assert english_words(text, NAMES) == [], text
    return text


@pytest.fixture(autouse=True)
def _english_after():
    """A request in Chinese leaves Chinese active in this thread: later tests expect
    English."""
    yield
    translation.activate("en")


@pytest.fixture
def people(make_user):
    return {"rita": make_user("rita", roles.RESPONDER), "cole": make_user("cole", roles.COMMANDER)}


def request(incident, actor, key="zh-key-0001"):
    run, _created = services.action_run_request(
        incident_id=incident.pk, actor=actor, kind="scale_lws", params=SCALE, idempotency_key=key
    )
    return run


@pytest.fixture
def succeeded(api, people):
    incident = IncidentFactory(severity="SEV1", namespace=NS)
    run = request(incident, people["rita"])
    assert run.status == ActionRunStatus.AWAITING_APPROVAL
    services.action_run_approve(run_id=run.pk, actor=people["cole"], note="")
    execution.action_run_execute(run_id=run.pk, worker="test:1")
    run.refresh_from_db()
    assert run.status == ActionRunStatus.SUCCEEDED, run.error
    return run


def test_a_run_s_texts_are_stored_as_parts_and_read_in_chinese(succeeded):
    run = succeeded
    assert set(run.texts) >= {"approval_reason", "verification"}
    assert "SEV1" in chinese(run.texts["approval_reason"])
    assert "spec.replicas" in chinese(run.texts["verification"])
    assert chinese(run.plan["summary_msg"]).startswith("把 ")
    assert [chinese(w) for w in run.plan["warnings_msg"]]
    assert run.plan["summary"] == f"Scale {NS}/vllm-chat from 4 to 6 groups"  # English kept
    assert "dry run" in chinese(run.preview["dry_run_msg"])
    events = list(run.events.all())
    assert len(events) >= 4  # requested, approved, started, applying, succeeded
    for event in events:
        chinese(event.payload["msg"])
    # The run's own lines (the guard's, started on success, are the guard's tests').
    lines = [
        line
        for line in TimelineEvent.objects.filter(incident_id=run.incident_id, kind=ACTION)
        if not line.message.startswith("Guard")
    ]
    assert len(lines) >= 4
    for line in lines:
        assert line.message.startswith(f"Action #{run.pk} scale_lws")  # stored in English
        assert chinese(line.payload["msg"]).startswith(f"操作 #{run.pk} scale_lws")


def test_a_failure_in_the_worker_is_stored_as_parts(api, people, settings):
    run = request(IncidentFactory(severity="SEV3", namespace=NS), people["rita"], "zh-key-0002")
    assert run.status == ActionRunStatus.QUEUED
    settings.ACTIONS_SCALE_MAX_REPLICAS = 5  # the worker's guardrail refuses 4 -> 6
    execution.action_run_execute(run_id=run.pk, worker="test:1")
    run.refresh_from_db()
    assert run.status == ActionRunStatus.FAILED
    assert "allowed range is" in run.error
    assert "ACTIONS_SCALE_MAX_REPLICAS" in chinese(run.texts["error"])
    failed = run.events.get(status_to=ActionRunStatus.FAILED)
    assert failed.message.startswith("Failed: ")
    assert chinese(failed.payload["msg"]).startswith("失败：")


def test_the_api_answers_in_the_request_language_with_the_ids(succeeded, people):
    client = APIClient()
    token = ApiToken.objects.create(user=people["rita"])[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}", HTTP_ACCEPT_LANGUAGE=ZH)
    body = client.get(f"/api/v1/actions/{succeeded.pk}/").json()
    for field in ("approval_reason", "verification"):
        assert english_words(body[field], NAMES) == [], body[field]
        assert body[f"{field}_i18n"][0]["id"].startswith("actions.")
    assert body["error"] == ""
    assert body["error_i18n"] is None
    assert english_words(body["plan"]["summary"], NAMES) == []
    assert body["plan"]["summary_i18n"] == [
        {
            "id": "actions.scale.summary",
            "params": {"where": f"{NS}/vllm-chat", "have": 4, "want": 6},
        }
    ]
    assert len(body["plan"]["warnings_i18n"]) == len(body["plan"]["warnings"])
    assert "summary_msg" not in body["plan"]
    assert body["preview"]["dry_run_i18n"][0]["id"] == "actions.scale.dry_run"
    for event in body["events"]:
        assert english_words(event["message"], NAMES) == [], event["message"]
        assert event["message_i18n"]
    english = APIClient()
    english.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert english.get(f"/api/v1/actions/{succeeded.pk}/").json()["verification"] == (
        succeeded.verification
    )


def test_the_preview_endpoint_and_the_pages_speak_chinese(api, people):
    incident = IncidentFactory(severity="SEV1", namespace=NS)
    client = APIClient()
    token = ApiToken.objects.create(user=people["rita"])[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}", HTTP_ACCEPT_LANGUAGE=ZH)
    body = client.post(
        f"/api/v1/incidents/{incident.pk}/actions/preview/",
        {"kind": "scale_lws", "params": SCALE},
        format="json",
    ).json()
    for field in ("dry_run", "approval_reason"):
        assert english_words(body[field], NAMES) == [], body[field]
        assert body[f"{field}_i18n"]
    assert english_words(body["plan"]["summary"], NAMES) == []

    run = request(incident, people["rita"])
    page = Client(HTTP_ACCEPT_LANGUAGE=ZH)
    page.force_login(people["cole"])
    card = page.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true").content.decode()
    assert render(run.texts["approval_reason"], language=ZH) in card
    summary = render(run.preview["plan"]["summary_msg"], language=ZH)
    assert summary in card
    audit = page.get(f"/runbooks/actions/{run.pk}/").content.decode()
    assert render(run.events.get().payload["msg"], language=ZH) in audit


def test_old_rows_without_parts_are_shown_as_stored(people, no_kubernetes):
    run = request(IncidentFactory(severity="SEV3"), people["rita"], "zh-key-0003")
    ActionRun.objects.filter(pk=run.pk).update(texts=None, verification="as stored")
    run.refresh_from_db()
    client = APIClient()
    token = ApiToken.objects.create(user=people["rita"])[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}", HTTP_ACCEPT_LANGUAGE=ZH)
    body = client.get(f"/api/v1/actions/{run.pk}/").json()
    assert (body["verification"], body["verification_i18n"]) == ("as stored", None)
