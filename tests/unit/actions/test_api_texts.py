"""Issue 28, the texts between actions and the guard: the guard's verdict reason, last
error and each signal's why and threshold come from the API in the request's language
with their ids (`_i18n`); a kind's GuardSplit phrases ("the new groups 4-5") are stored as
parts; a ConfigMap revision's reason ("before run #12") is worded when shown."""

import re

import pytest
from django.test import Client
from django.utils import timezone, translation
from rest_framework.test import APIClient

from actions.guard import services as guard_services
from actions.kinds import GuardSplit, Plan, Snapshot, kind_for
from actions.models import ActionRun, ConfigRevision
from actions.models import ActionRunStatus as S
from actions.revisions import revision_lookup, revision_reason, revision_reason_text
from console.api_tokens.models import ApiToken
from console.texts import render
from tests.english_words import english_words
from tests.factories import IncidentFactory
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
# Names a Chinese reader sees as written (runbook ids, units, users, the "xx" of "5xx").
NAMES = ("prefix-cache-drop", "ratio", "cara", "rita", "s", "xx")
NS = {"namespace": "llm-serving", "lws": "vllm-chat"}


@pytest.fixture(autouse=True)
def _english_after():
    """A request in Chinese leaves Chinese active in this thread: later tests expect
    English."""
    yield
    translation.activate("en")


def chinese(text: str, *names: str) -> str:
    assert text
    assert english_words(text, allowed=(*NAMES, *names)) == [], text
    return text


def api_client(user, language: str | None = None) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    if language:
        client.defaults["HTTP_ACCEPT_LANGUAGE"] = language
    return client


def breached(people):  # noqa: F811 (the imported fixture)
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    return run, watch


# --- 1. the guard in the API ------------------------------------------------------------


def test_the_guard_in_the_api_is_worded_in_the_requests_language(people, prom):  # noqa: F811
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)  # baseline
    prom.answers[HIT] = 0.05
    later(watch)
    watch = guard_services.guard_watch_evaluate(watch_id=watch.pk)
    assert watch.verdict == "breached"

    guard = api_client(people["viewer"], ZH).get(f"/api/v1/actions/{run.pk}/").json()["guard"]
    assert guard["verdict_reason_i18n"][0]["id"].startswith("guard.")
    assert "越过了阈值" in chinese(guard["verdict_reason"])
    assert guard["last_error"] == ""
    assert guard["last_error_i18n"] is None
    assert guard["signals"]
    for signal in guard["signals"]:
        chinese(signal["message"])
        assert signal["message_i18n"][0]["id"].startswith("guard."), signal["id"]
        chinese(signal["threshold"])
        assert signal["threshold_i18n"][0]["id"].startswith("guard.threshold."), signal["id"]

    english = api_client(people["viewer"]).get(f"/api/v1/actions/{run.pk}/").json()["guard"]
    assert english["verdict_reason"] == watch.verdict_reason
    assert english["verdict_reason_i18n"] == guard["verdict_reason_i18n"]
    messages = [s["message"] for s in english["signals"]]
    assert messages == [s["message"] for s in watch.signals]


def test_a_guard_stored_before_it_had_parts_is_shown_as_stored(people, prom):  # noqa: F811
    run, watch = succeeded_run(people["responder"])
    watch.verdict_reason = "Old English reason."
    watch.last_error = "Prometheus was down."
    watch.texts = None
    watch.signals = [{k: v for k, v in s.items() if k != "message_msg"} for s in watch.signals]
    watch.save()
    guard = api_client(people["viewer"], ZH).get(f"/api/v1/actions/{run.pk}/").json()["guard"]
    assert guard["verdict_reason"] == "Old English reason."
    assert guard["verdict_reason_i18n"] is None
    assert guard["last_error"] == "Prometheus was down."
    assert guard["last_error_i18n"] is None
    assert all(s["message_i18n"] is None for s in guard["signals"])


def test_the_openapi_schema_names_the_guards_i18n_fields(client, people):  # noqa: F811
    client.force_login(people["viewer"])
    schema = client.get("/api/schema/?format=json").json()
    shapes = schema["components"]["schemas"]
    assert {"verdict_reason_i18n", "last_error_i18n"} <= set(shapes["GuardWatch"]["properties"])
    assert {"message_i18n", "threshold_i18n"} <= set(shapes["GuardSignal"]["properties"])


# --- 2. GuardSplit's phrases ---------------------------------------------------------------


def split(kind, params, before_state, desired, identity=None) -> GuardSplit:
    before = Snapshot("1", before_state, identity or {})
    return kind_for(kind).guard_split(params, before, Plan(desired, "", ""))


SPLITS = {
    "scale_lws": ({**NS, "replicas": 6}, {"replicas": 4}, {"replicas": 6}, None),
    "restart_lws_group": (
        {**NS, "group": 2},
        {"group": 2},
        {"group": 2, "leader_pod": "vllm-chat-2", "previous_uid": "u"},
        None,
    ),
    "cordon_node": (
        {"node": "gpu-4", "cordon": True, "reason": "ecc", "restart_groups": True,
         "namespace": "llm-serving"},
        {"unschedulable": False, "taint": None, "lws_pods_on_node": ["vllm-chat-3"]},
        {"unschedulable": True, "taint": {}, "lws_pods_on_node": []},
        {"leaders": [{"lws": "vllm-chat", "group": 3, "pod": "vllm-chat-3", "uid": "u"}]},
    ),
    "set_enforce_eager": ({**NS, "enabled": True}, {"enabled": False}, {"enabled": True}, None),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(SPLITS))
def test_each_kinds_split_says_what_it_judges_as_parts(kind):
    found = split(kind, *SPLITS[kind])
    for key in ("what", "others"):
        parts = getattr(found, f"{key}_msg")
        assert parts, (kind, key)
        assert parts[0][0].startswith("actions.split."), (kind, key)
        assert render(parts, language="en") == getattr(found, key)  # English kept
        chinese(render(parts, language=ZH), "vllm-chat", "--enforce-eager")
    assert GuardSplit.from_dict(found.as_dict()) == found
    assert GuardSplit.from_dict({"what": "w", "others": "o"}).what_msg is None  # stored before


def test_the_scale_ups_split_reads_in_chinese_on_the_card(people, prom):  # noqa: F811
    incident = IncidentFactory(severity="SEV3", runbook="prefix-cache-drop")
    now = timezone.now()
    run = ActionRun.objects.create(
        incident=incident, kind="scale_lws", target="lws/llm-serving/vllm-chat",
        params={**NS, "replicas": 6}, idempotency_key="zh-split-0001", status=S.SUCCEEDED,
        requested_by=people["responder"], requested_at=now, started_at=now, finished_at=now,
        before={"resource_version": "5", "state": {"replicas": 4}},
        plan={"desired": {"replicas": 6}, "diff": "", "summary": "scale", "warnings": []},
        runbook="prefix-cache-drop",
    )  # fmt: skip
    watch = guard_services.guard_watch_start(run=run)
    assert watch.split["what"] == "the new groups 4-5"
    assert watch.split["what_msg"][0][0] == "actions.split.new_groups"
    client = Client(HTTP_ACCEPT_LANGUAGE=ZH)
    client.force_login(people["viewer"])
    page = client.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true")
    evidence = re.search(r'data-testid="guard-evidence">(.*?)</p>', page.content.decode(), re.S)
    assert "新组 4-5" in evidence.group(1)
    assert "原有组 0-3" in evidence.group(1)
    assert "the new groups" not in evidence.group(1)


# --- 4. a revision's reason ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("before run #12", "执行 #12 之前"),
        ("after run #12", "执行 #12 之后"),
        ("periodic capture", "定期采集"),
        ("first look at worker start", "worker 启动时的首次读取"),
        ("seen at preview of rollback_router_config", "预览 rollback_router_config 时读取"),
    ],
)
def test_each_reason_the_console_writes_is_worded_in_chinese(reason, words):
    said = revision_reason(reason)
    assert said is not None
    assert said.english == reason
    with translation.override(ZH):
        assert revision_reason_text(reason) == words
    assert revision_reason_text(reason) == reason
    assert revision_reason("typed by hand") is None
    assert revision_reason_text("typed by hand") == "typed by hand"


def _revision(reason: str, data: dict) -> ConfigRevision:
    return ConfigRevision.objects.create(
        namespace="llm-serving", name="vllm-router-config", data=data,
        resource_version="1", captured_at=timezone.now(), reason=reason,
    )  # fmt: skip


def test_the_rollback_dialog_and_the_plan_word_a_revisions_reason(people):  # noqa: F811
    old = _revision("before run #7", {"routing_logic": "prefixaware"})
    _revision("periodic capture", {"routing_logic": "roundrobin"})
    incident = IncidentFactory(severity="SEV3", runbook="prefix-cache-drop")
    client = Client(HTTP_ACCEPT_LANGUAGE=ZH)
    client.force_login(people["responder"])
    body = {"kind": "rollback_router_config", "title": "x", "param.namespace": "llm-serving",
            "param.configmap": "vllm-router-config", "param.revision": "previous"}  # fmt: skip
    page = client.post(
        f"/runbooks/incidents/{incident.pk}/actions/preview/", body, HTTP_HX_REQUEST="true"
    ).content.decode()
    revisions = re.search(r'class="small action-revisions">(.*?)</details>', page, re.S)
    assert "执行 #7 之前" in revisions.group(1)
    assert "定期采集" in revisions.group(1)
    assert "periodic capture" not in revisions.group(1)

    label = revision_lookup("llm-serving", "vllm-router-config", "previous", None).label
    assert label.english == f"r{old.pk}: before run #7"
    assert render(label.stored, language=ZH) == f"r{old.pk}：执行 #7 之前"
