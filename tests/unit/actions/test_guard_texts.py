"""The guard's texts are stored as message ids and parameters (console/texts/): a
verdict's reason, each signal's why, the last error and the guard's timeline lines are
worded in the reader's language, in Chinese with no English beyond names (runbook ids,
units, kinds, users), on the card and in the API."""

import re
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.utils import translation

from actions.guard import judge, pods
from actions.guard import services as guard_services
from actions.guard.api import guard_api
from actions.guard.wording import threshold_msg
from console.texts import at, msg, render
from incidents.models import TimelineEvent
from tests.english_words import english_words
from tests.helpers import free_port
from tests.unit.actions.test_guard_watch import (  # noqa: F401 (fixtures)
    HIT,
    _clear_cache,
    _one_check_counts,
    later,
    people,
    prom,
    succeeded_run,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
ZH = "zh-hans"
# Names a Chinese reader sees as written: the runbook, units, a kind, a user, and the
# "xx" of HTTP "5xx" (english_words reads it as a word when no space sets it apart).
NAMES = ("prefix-cache-drop", "ratio", "restart_lws_group", "cara", "s", "xx")


def chinese(parts, *names: str) -> str:
    text = render(parts, language=ZH)
    assert text, parts
    assert english_words(text, allowed=(*NAMES, *names)) == [], text
    return text


def guard_events(incident_id: int) -> list[TimelineEvent]:
    return list(
        TimelineEvent.objects.filter(incident_id=incident_id, payload__has_key="guard").order_by(
            "occurred_at", "id"
        )
    )


def test_a_breach_its_signals_and_its_timeline_are_stored_as_parts(people, prom):  # noqa: F811 (the imported fixtures)
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)  # baseline 0.82
    prom.answers[HIT] = 0.05
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "breached"
    parts = watch.texts["verdict_reason"]
    assert render(parts, language="en") == watch.verdict_reason
    reason = chinese(parts)
    assert "越过了阈值" in reason
    assert "前缀缓存命中率" in reason
    for signal in watch.signals:
        assert signal["message_msg"], signal["id"]
        assert render(signal["message_msg"], language="en") == signal["message"]
        chinese(signal["message_msg"])
    events = guard_events(run.incident_id)
    assert len(events) >= 3  # watching, breached, undo requested
    undo = watch.undo_run
    # The undo waits for approval: its reason is nested as the run's own parts, or as
    # its words while the run has none (actions stores them in `texts`).
    reason_parts = (undo.texts or {}).get("approval_reason")
    as_written = () if reason_parts else re.findall(r"\w+", undo.approval_reason)
    for event in events:
        assert event.payload["msg"], event.message
        assert render(event.payload["msg"], language="en") == event.message
        chinese(event.payload["msg"], *as_written)
    (waits,) = [e for e in events if e.payload.get("undo_run") == undo.pk]
    assert waits.payload["msg"][0][0] == "guard.remedy.undo_waits"
    if reason_parts:
        assert waits.payload["msg"][0][1]["reason"] == reason_parts


def test_the_card_and_the_api_word_the_guard_in_the_readers_language(people, prom):  # noqa: F811 (the imported fixtures)
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers[HIT] = 0.05
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    client = Client(HTTP_ACCEPT_LANGUAGE=ZH)
    client.force_login(people["viewer"])
    html = client.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true").content
    assert "越过了阈值" in html.decode()
    assert "crossed the threshold" not in html.decode()
    with translation.override(ZH):
        api = guard_api(watch)
    assert api["verdict_reason_i18n"][0]["id"].startswith("guard.")
    assert "越过了阈值" in api["verdict_reason"]
    hit = api["signals"][2]
    assert hit["message_i18n"]
    assert hit["threshold_i18n"][0]["id"] == "guard.threshold.quality"
    assert api["last_error"] == ""
    assert api["last_error_i18n"] is None


def test_a_page_and_an_unknown_window_are_worded_in_chinese(people, prom, settings):  # noqa: F811 (the imported fixtures)
    run, watch = succeeded_run(
        people["responder"],
        kind="restart_lws_group",
        params={"namespace": "llm-serving", "lws": "vllm-chat", "pod": "vllm-chat-0"},
        runbook="prefix-cache-drop",
        commander=people["commander"],
    )
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers["time_to_first_token"] = 4.0
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.outcome == "paged"
    page = guard_events(run.incident_id)[-1]
    assert page.payload["paged"] is True
    assert "restart_lws_group cannot be undone: paging the commander cara" in page.message
    text = chinese(page.payload["msg"])
    assert "指挥官 cara" in text
    assert "无法撤销" in text


def test_prometheus_down_is_stored_with_its_own_words_as_a_parameter(people, settings):  # noqa: F811 (the imported fixtures)
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    run, watch = succeeded_run(people["responder"])
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    (key, params), *_ = watch.texts["last_error"]
    assert key == "guard.error.prometheus"
    assert "refused the connection" in params["detail"]  # Prometheus' words, as they came
    assert render(watch.texts["last_error"], language=ZH).startswith("无法读取 Prometheus：")
    later(watch, end=True)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "unknown"
    reason = render(watch.texts["verdict_reason"], language=ZH)
    assert "2 次检查中有 2 次无法判断指标" in reason
    verdict_line = guard_events(run.incident_id)[-1]
    assert "无法判断" in render(verdict_line.payload["msg"], language=ZH)


def test_the_restart_evidence_and_an_excusing_alert_are_parts():
    spec = pods.spec()
    changed = {"vllm-chat-4": pods._Group({"vllm-chat-4"}, {"vllm-chat-4-1"}, 4.0)}
    unchanged = {"vllm-chat-0": pods._Group({"vllm-chat-0"}, set(), 0.0)}
    reading = {
        "mode": judge.SPLIT,
        "changed": 1.0,
        "unchanged": 0.0,
        "value": None,
        "what": "the new groups 4-4",  # a kind's words, before kinds store parts
        "others": "the old groups 0-0",
        "detail": pods._detail(changed, unchanged, 60),
    }
    out = judge.step(spec, reading, confirm=1)
    assert out["counts"]
    assert "vllm-chat-4 x4" in out["message"]
    assert "changed pods not ready" in out["message"]
    text = render(out["message_msg"], language=ZH)
    assert "重启中的组" in text
    assert "未就绪的变更 Pod" in text
    assert english_words(text, allowed=("the", "new", "old", "groups")) == []
    ttft = {**spec, "type": "latency", "builtin": False, "title": "TTFT p99", "unit": "s"}
    ttft.update(max_ratio=1.5, min_value=0.5)
    since = datetime(2026, 12, 5, 8, 30, tzinfo=UTC)
    excuse = msg("guard.alert.excused", alert="VLLMRetryStorm", incident=7, time=at(since))
    out = judge.step(
        ttft,
        {"mode": judge.TREND, "value": 3.0, "baseline": 1.0, "excuse": excuse},
        confirm=1,
    )
    assert out["state"] == judge.EXCUSED
    assert "VLLMRetryStorm has fired in open incident #7 since" in out["message"]
    chinese(out["message_msg"], "VLLMRetryStorm")
    assert render(threshold_msg(ttft).stored, language=ZH).startswith("超过变更前数值的 1.5 倍")
