"""Issue 28: every text a drill writes (its history, its stop reason and error, the
scorecard's titles, evidence and reasons, its lines on the incident's timeline) is stored
as message ids and parameters and worded in the reader's language; the API answers in the
request's language with `<field>_i18n` beside each text.

Against the real fleet simulator over HTTP (tests/unit/drills/test_drill_runs.py)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils.functional import Promise
from django.utils.translation import override

from actions.models import ActionRun, ActionRunStatus
from console.texts import english, msg, render
from console.texts.catalogue import known_ids, template_for
from drills import execution, services
from drills import texts as t
from drills.adapters import SimulatorAdapter
from drills.models import DrillRun, DrillRunStatus
from drills.restore import injected_text, report_text
from drills.timeline_kinds import DRILL
from incidents.services import incident_acknowledge, incident_event_record
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED
from tests.english_words import english_words
from tests.unit.drills.test_drill_runs import fire, plan_for

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
NAMES = ["cara", "ttft-spike", "simulator", "llm-serving", "vllm-chat", "scale_lws", "capacity"]
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def drills(sim, settings):
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    settings.ACTIONS_K8S_TIMEOUT_SECONDS = 5
    settings.DRILLS_SIMULATOR_URL = sim.url
    return sim


def foreign(text: str, names: list[str]) -> list[str]:
    """English words in `text` beyond the names. A name runs into full-width punctuation
    ("ttft-spike：..."), so its parts count as names too."""
    parts_of_names = [p for name in names for p in re.split(r"[-_./]", name)]
    return english_words(text, allowed=names + parts_of_names)


def chinese(parts: Any, names: list[str]) -> str:
    """The parts worded in Chinese; fails on any English word beyond the names."""
    assert isinstance(parts, list), f"stored without parts: {parts!r}"
    assert parts
    text = render(parts, language=ZH)
    assert HAN.search(text), text
    assert not foreign(text, names), text
    return text


def names_of(*texts: str) -> list[str]:
    """Names from the data (an incident's title: alert names, pools) a text may quote."""
    return NAMES + [w for text in texts for w in re.findall(r"[\w.-]+", text)]


def finished_passed_run(commander, post_webhook) -> tuple[DrillRun, Any]:
    plan = plan_for(commander)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    incident = fire(post_webhook)
    execution.drill_run_check(run_id=run.pk)
    incident_acknowledge(incident_id=incident.pk, actor=commander)
    incident_event_record(
        incident_id=incident.pk, kind=DIAGNOSIS_CONFIRMED, actor=commander,
        message="Diagnosis confirmed", payload={"runbook": "ttft-spike", "branch": "capacity"},
    )  # fmt: skip
    ActionRun.objects.create(
        incident=incident, kind="scale_lws", target="leaderworkerset/llm-serving/vllm-chat",
        idempotency_key="drill-zh-1", status=ActionRunStatus.SUCCEEDED, requested_by=commander,
        requested_at=incident.triggered_at, finished_at=incident.triggered_at,
    )  # fmt: skip
    fire(post_webhook, status="resolved")
    run = execution.drill_run_check(run_id=run.pk)
    assert run.status == DrillRunStatus.FINISHED
    assert run.passed, run.scorecard
    incident.refresh_from_db()
    return run, incident


def test_history_scorecard_and_timeline_are_stored_as_parts_and_read_in_chinese(
    drills, commander, post_webhook
):
    run, incident = finished_passed_run(commander, post_webhook)
    names = names_of(incident.title)

    events = list(run.events.all())
    assert [e.kind for e in events][:3] == ["started", "injected", "incident_linked"]
    for event in events:
        parts = event.payload.get("msg")
        assert english(parts) == event.message  # the English beside the parts
        chinese(parts, names)
    assert "评分卡" in render(run.events.get(kind="scored").payload["msg"], language=ZH)

    card = run.scorecard
    assert english(card["ended_reason_msg"]) == card["ended_reason"]
    assert "已止损" in chinese(card["ended_reason_msg"], names)
    for criterion in card["criteria"]:
        assert english(criterion["evidence_msg"]) == criterion["evidence"]
        chinese(criterion["title_msg"], names)
        chinese(criterion["evidence_msg"], names)
        for link in criterion["links"]:
            chinese(link["label_msg"], names)

    lines = list(incident.events.filter(kind=DRILL))
    assert lines
    for line in lines:
        assert english(line.payload["msg"]) == line.message
        chinese(line.payload["msg"], names)


def test_a_stopped_run_reads_in_chinese_on_its_page_and_in_the_api(
    drills, commander, post_webhook, client
):
    plan = plan_for(commander)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    incident = fire(post_webhook)
    execution.drill_run_check(run_id=run.pk)
    services.drill_stop(run_id=run.pk, actor=commander, reason="pager went off")
    run = execution.drill_run_finish(run_id=run.pk)
    names = names_of(incident.title, "pager went off")

    assert run.stop_reason == "stopped by cara: pager went off"
    assert chinese(run.texts["stop_reason"], names) == "由 cara 停止：pager went off"
    assert run.scorecard["aborted_reason_msg"] == run.texts["stop_reason"]
    assert "已中止" in chinese(run.events.get(kind="scored").payload["msg"], names)

    client.force_login(commander)
    body = client.get(f"/api/v1/drills/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE=ZH).json()
    assert body["stop_reason"] == "由 cara 停止：pager went off"
    assert body["stop_reason_i18n"] == [
        {"id": "drills.stop.by_with_reason", "params": {"user": "cara", "reason": "pager went off"}}
    ]
    assert body["error"] == ""
    assert body["error_i18n"] is None
    for event in body["events"]:
        assert event["message_i18n"][0]["id"].startswith("drills.")
        assert not foreign(event["message"], names), event["message"]
    card = body["scorecard"]
    assert card["aborted_reason"] == body["stop_reason"]
    assert card["aborted_reason_i18n"] == body["stop_reason_i18n"]
    assert not any(key.endswith("_msg") for key in card)
    for criterion in card["criteria"]:
        assert criterion["evidence_i18n"][0]["id"].startswith("drills.evidence.")
        assert HAN.search(criterion["evidence"]), criterion
        assert not foreign(criterion["evidence"] + " " + criterion["title"], names)
    english_body = client.get(f"/api/v1/drills/runs/{run.pk}/").json()
    assert english_body["stop_reason"] == "stopped by cara: pager went off"
    assert english_body["scorecard"]["criteria"][0]["evidence_i18n"] is not None

    page = client.get(f"/runbooks/drills/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE=ZH)
    html = page.content.decode()
    assert "由 cara 停止：pager went off" in html
    for english_line in ("stopped by", "Scorecard:", "Cleared ", "no incident was opened"):
        assert english_line not in html


def test_a_drill_that_could_not_start_says_why_in_chinese(drills, commander, monkeypatch):
    plan = plan_for(commander)
    monkeypatch.setattr(
        SimulatorAdapter, "_call", lambda self, method, path: (500, {"error": "busy"})
    )
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    run = execution.drill_run_inject(run_id=run.pk)

    assert run.status == DrillRunStatus.FAILED
    assert run.error == "the simulator refused POST /sim/inject/ttft-spike (500): busy"
    assert chinese(run.texts["error"], ["busy"]).startswith("模拟器拒绝了 POST")
    chinese(run.events.get(kind="failed").payload["msg"], ["busy"])


def test_a_run_stored_before_texts_had_ids_is_shown_as_stored(finished_run, client, commander):
    run = finished_run(passed=False, ago=timedelta(hours=1))
    DrillRun.objects.filter(pk=run.pk).update(stop_reason="stopped by someone", outcome="aborted")
    client.force_login(commander)
    body = client.get(f"/api/v1/drills/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE=ZH).json()
    assert (body["stop_reason"], body["stop_reason_i18n"]) == ("stopped by someone", None)


def _sample(key: str) -> dict[str, Any]:
    """Parameters for any template: numbers, which no reader takes for a word."""
    template = template_for(key)
    if isinstance(template, Promise):
        return {"count": 2, "failed": 1}
    return dict.fromkeys(re.findall(r"%\((\w+)\)s", template), 7)


def test_every_drills_id_has_its_chinese():
    ids = [key for key in known_ids() if key.startswith("drills.")]
    assert len(ids) > 60
    for key in ids:
        text = render([[key, _sample(key)]], language=ZH)
        # "true": the drill label's value, quoted in the refusal of an unlabelled target.
        assert text, key
        assert not english_words(text, allowed=["true"]), (key, text)
        if english_words(english([[key, _sample(key)]])):  # words, not only values
            assert HAN.search(text), (key, text)


def test_changes_and_the_restore_report_read_in_chinese():
    load = {"object": "fleet", "field": "load_factor", "before": 1.0, "after": 2.0}
    restart = {"kind": "event", "object": "pod/vllm-chat-0", "field": "restart"}
    changes = [{"kind": "condition", **load}, restart]
    assert injected_text(changes).english == (
        "changed load_factor 1.0 -> 2.0; restart of pod/vllm-chat-0"
    )
    chinese(injected_text(changes).stored, ["restart"])
    chinese(injected_text([]).stored, [])
    scaled = {"object": "fleet", "field": "replicas", "before": 4, "after": 2, "now": 6}
    entries = [
        {"result": "restored", **load},
        {"result": "cleared", **load},
        {"result": "left", **scaled, "changed_by": ["rita"]},
        {"result": "left", **scaled},
        {"result": "not_undoable", **restart},
    ]
    for entry in entries:
        chinese(report_text(entry).stored, ["rita", "restart", "replicas"])
    reasons = [
        t.stop_max_duration(60),
        t.stop_real_sev1(incident_id=3, how="opened", title="GPU"),
        t.stop_real_sev1(incident_id=3, how="reopened", title="GPU"),
        t.stop_real_sev1(incident_id=3, how="fired again", title="GPU"),
        t.end_recovered(incident_id=3, status="resolved"),
        t.event_scored(outcome="failed", failed=2, total=7),
        t.event_scored(outcome="aborted", reason=t.stop_by(user="cara")),
    ]
    for reason in reasons:
        chinese(reason.stored, ["cara"])
    with override("en"):
        assert str(msg("drills.event.scored_failed", failed=1, count=1)).endswith("1 criterion)")


def test_a_default_plan_title_reads_in_the_readers_language(db):
    from drills.models import DrillPlan
    from drills.titles import default_title, plan_title
    from runbooks.catalog import load_catalog

    english = load_catalog().english.get("ttft-spike").title
    plan = DrillPlan(runbook="ttft-spike", title=default_title(english))
    with override("zh-hans"):
        shown = plan_title(plan)
        zh_title = load_catalog().get("ttft-spike").title
    assert shown.startswith(zh_title)
    assert "drill" not in shown
    assert plan_title(plan) == default_title(english)  # English readers: as stored
    typed = DrillPlan(runbook="ttft-spike", title="Friday game day")
    with override("zh-hans"):
        assert plan_title(typed) == "Friday game day"
