"""Texts the console generated (the guard's verdict reason, approval reasons, a preview's
plan, warnings, dry run and error) reach a Chinese chat from their stored parts, in
Chinese; the record of what was done stays English (issue 28)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from actions.guard.models import GuardWatch
from actions.models import ActionRun, ActionRunStatus
from actions.preview import Preview
from chatops.actions.runs import _preview_words
from chatops.models import InteractionKind, InteractionStatus
from chatops.threads.state import incident_state
from console.texts import join, msg
from tests.english_words import english_words
from tests.factories import AlertFactory, IncidentFactory
from tests.unit.chatops.core_helpers import CATALOGUE, answers, run
from tests.unit.chatops.test_state import LABELS, triaged

pytest_plugins = ["tests.unit.chatops.core_helpers"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not CATALOGUE.exists(), reason="django.mo is not compiled yet"),
]
ZH = "zh-hans"
TARGET = "leaderworkerset/llm-serving/vllm-chat"
NAMES = ("scale_lws", "vllm-chat", "llm-serving", "bob", "SEV1", "replicas_delta")
WHY = join([msg("actions.approval.risky", kind="scale_lws"), msg("actions.approval.then")])


def values(message) -> str:
    return "\n".join(value for _, value in message.fields)


def no_english(text: str, *names: str) -> None:
    assert english_words(text, allowed=(*NAMES, *names)) == [], text


def test_the_guards_reason_and_a_pending_runs_reason_read_chinese(make_user, settings):
    settings.ACTIONS_APPROVAL_SEVERITIES = ["SEV1"]
    bob = make_user("bob")
    incident = IncidentFactory(severity="SEV2", group_labels=LABELS)
    reason = msg("guard.reason.passed", count=3)
    GuardWatch.objects.create(
        incident=incident, runbook="ttft-spike", subject=TARGET, changed_at=timezone.now(),
        ends_at=timezone.now() + timedelta(minutes=10), interval_seconds=30, verdict="passed",
        verdict_reason=reason.english, texts={"verdict_reason": reason.stored},
    )  # fmt: skip
    ActionRun.objects.create(
        incident=incident, kind="scale_lws", target=TARGET, params={}, idempotency_key="k1",
        status=ActionRunStatus.AWAITING_APPROVAL, requested_by=bob,
        requested_at=timezone.now(), requires_approval=True,
        approval_reason=WHY.english, texts={"approval_reason": WHY.stored},
    )  # fmt: skip

    english = values(incident_state(incident_id=incident.pk, language="en"))
    assert "No regression in 3 checks over the window." in english
    assert "scale_lws is a risky action." in english
    chinese = values(incident_state(incident_id=incident.pk, language=ZH))
    assert "No regression" not in chinese
    assert "risky" not in chinese
    assert reason.english not in chinese
    for line in chinese.splitlines()[-2:]:  # the runs waiting, the guard
        no_english(line, TARGET, "leaderworkerset", "serving")


def test_a_guard_reason_stored_only_as_text_is_shown_as_stored():
    incident = IncidentFactory()
    GuardWatch.objects.create(
        incident=incident, runbook="ttft-spike", subject=TARGET, changed_at=timezone.now(),
        ends_at=timezone.now(), interval_seconds=30, verdict="breached",
        verdict_reason="TTFT p99 rose to 3.1 s",
    )  # fmt: skip
    assert "TTFT p99 rose to 3.1 s" in values(incident_state(incident_id=incident.pk, language=ZH))


def test_the_recommended_actions_approval_reason_reads_chinese(settings):
    settings.ACTIONS_APPROVAL_SEVERITIES = ["SEV1"]
    incident = IncidentFactory(severity="SEV1", group_labels=LABELS)
    triaged(incident)
    not_ready = dict(incident_state(incident_id=incident.pk, language=ZH).fields)
    (said,) = [v for v in not_ready.values() if "scale_lws" in v]
    assert "缺少标签 lws" in said
    AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", **LABELS})
    ready = incident_state(incident_id=incident.pk, language=ZH)
    (said,) = [v for _, v in ready.fields if "scale_lws" in v]
    assert "本事件为 SEV1。" in said
    assert "The incident is" not in said
    english = incident_state(incident_id=incident.pk, language="en")
    assert "The incident is SEV1." in dict(english.fields)["Recommended action"]


def test_the_preview_reads_chinese_from_its_parts():
    summary = msg("actions.scale.summary", where="llm-serving/vllm-chat", have=2, want=4)
    warning = msg("actions.approval.severity", severity="SEV1")  # any registered sentence
    error = msg("actions.preview.no_answer", detail="connection refused")
    preview = Preview(
        kind="scale_lws", params={}, target=TARGET, current=None,
        plan={"summary": summary.english, "summary_msg": summary.stored, "diff": "",
              "warnings": [warning.english], "warnings_msg": [warning.stored]},
        dry_run="", error=error.english, requires_approval=True,
        approval_reason=WHY.english, busy_with=None, error_msg=error.stored,
        approval_reason_msg=WHY.stored,
    )  # fmt: skip
    with translation.override(ZH):
        lines, fields = _preview_words(preview, "")
    text = "\n".join([*lines, *(v for _, v in fields)])
    assert summary.english not in text
    assert error.english not in text
    no_english(text, TARGET, "llm-serving/vllm-chat", "Kubernetes", "connection", "refused")
    # Stored only as text (a run planned before parts): shown as stored.
    old = Preview(
        kind="scale_lws", params={}, target=TARGET, current=None,
        plan={"summary": "Scale it", "warnings": ["Careful"]}, dry_run="Applied (dry run)",
        error="", requires_approval=False, approval_reason="", busy_with=None,
    )  # fmt: skip
    with translation.override(ZH):
        lines, _ = _preview_words(old, "")
    assert any("Scale it" in line for line in lines)
    assert any("Careful" in line for line in lines)
    assert any("Applied (dry run)" in line for line in lines)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("chat_env")
def test_a_chinese_workspace_previews_and_requests_in_chinese(
    slack_server, slack_workspace, people, sent, settings
):
    settings.ACTIONS_APPROVAL_SEVERITIES = ["SEV1"]
    slack_workspace.language = ZH
    slack_workspace.save(update_fields=["language"])
    incident = IncidentFactory(severity="SEV1", runbook="ttft-spike")
    AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", **LABELS})
    value = {"incident": incident.pk, "kind": "scale_lws", "index": 0}
    shown = run(slack_workspace, slack_server, "request", value)
    assert shown.status == InteractionStatus.DONE, shown.outcome
    (updated,) = slack_server.calls_to("views.update")
    words = json.dumps(updated.body["view"], ensure_ascii=False)
    assert "本事件为 SEV1。" in words
    assert "The incident is" not in words

    confirm = json.loads(updated.body["view"]["private_metadata"])["value"]
    done = run(slack_workspace, slack_server, "request_confirm", confirm,
               kind=InteractionKind.DIALOG, reply=False, channel=confirm["channel"])  # fmt: skip
    assert done.status == InteractionStatus.DONE
    assert "The incident is SEV1." in done.outcome  # the record stays English
    told = answers(slack_server)[-1]
    assert "本事件为 SEV1。" in told
    assert "The incident is" not in told
