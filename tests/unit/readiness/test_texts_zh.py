"""The checklist's texts are stored as message ids and parameters and worded in the
reader's language: every verifier's summary and evidence line, the sign-off summaries and
the verification errors the console writes, on the page and in the API (with `_i18n`)."""

import re
from collections.abc import Iterable
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from actions.kinds.base import ActionError, TargetNotFound
from console import roles
from console.api_tokens.models import ApiToken
from console.texts import english, msg, render
from console.texts.catalogue import known_ids
from readiness import services
from readiness.models import (
    Deployment,
    ItemCheck,
    ItemState,
    Verification,
    VerificationStatus,
)
from readiness.verifiers import Finding, config, lws, signals, sources
from runbooks.catalog import CatalogError
from tests.helpers import free_port

try:
    from tests.english_words import english_words
except ImportError:  # the shared helper is not in the tree yet: the same rule, simply

    def english_words(text: str, allowed: Iterable[str] = ()) -> list[str]:
        ok = {a.lower() for a in allowed}
        words = re.findall(r"[A-Za-z][A-Za-z0-9_./'-]*", text)
        return [
            w
            for w in words
            if len(w) >= 3
            and w.lower() not in ok
            and not re.search(r"[_./0-9-]|[a-z][A-Z]", w)  # ids, paths, camelCase
            and not w.isupper()
        ]


ZH = "zh-hans"
# Names the Chinese keeps as written: products, Kubernetes' own terms and values (the
# glossary's list, and LWS's "leader"), the handler kinds a probe names.
KEPT = (
    "Kubernetes", "Prometheus", "LeaderWorkerSet", "ConfigMap", "vLLM", "Pod", "leader",
    "worker", "token", "data", "exec", "Never", "Always", "Default", "API", "Endpoint",
)  # fmt: skip

pytestmark = pytest.mark.django_db


def _names(parts) -> list[str]:
    """The scalar parameters of stored parts: names, paths and values, shown as given."""
    found = []
    for _key, params in parts or []:
        for value in (params or {}).values():
            if isinstance(value, list):
                found += _names(value)
            elif isinstance(value, str):
                found.append(value)
            elif isinstance(value, int | float):
                found.append(str(value))
    return found


def _without_names(text: str, parts) -> str:
    for name in sorted(_names(parts), key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", " ", text)
    return text


def _english_left(parts) -> list[str]:
    text = render(parts, language=ZH)
    assert text, parts
    return english_words(_without_names(text, parts), KEPT)


def _assert_chinese(parts) -> None:
    assert isinstance(parts, list), parts
    assert parts
    assert all(key.startswith("readiness.") for key, _ in parts), parts
    left = _english_left(parts)
    assert not left, (render(parts, language=ZH), left)
    if _words_in(parts):  # a sentence, not only a path and its value: worded in Chinese
        assert re.search(r"[\u4e00-\u9fff]", render(parts, language=ZH)), english(parts)


def _words_in(parts) -> bool:
    """Whether the English wording has words of its own (not only a path and a value)."""
    return bool(english_words(_without_names(english(parts), parts), KEPT))


def _findings() -> list[Finding]:
    """Every verifier on inputs that reach each of its answers."""
    http = {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 10}
    slow = {**http, "failureThreshold": 1}
    leader = {
        "terminationGracePeriodSeconds": 30,
        "topologySpreadConstraints": [{"topologyKey": lws.ZONE_KEY, "maxSkew": 1}],
        "containers": [
            {
                "name": "vllm",
                "readinessProbe": http,
                "startupProbe": {**http, "failureThreshold": 90},
                "lifecycle": {"preStop": {"sleep": {"seconds": 10}}},
                "env": [
                    {"name": lws.NCCL_ASYNC, "value": "1"},
                    {"name": "NCCL_TIMEOUT", "valueFrom": {"secretKeyRef": {}}},
                ],
            }
        ],
    }
    worker = {"name": "vllm", "env": [{"name": lws.NCCL_ASYNC, "value": "3"}]}
    good = {
        "spec": {
            "leaderWorkerTemplate": {
                "restartPolicy": lws.GROUP_RESTART,
                "leaderTemplate": {"spec": leader},
                "workerTemplate": {"spec": {"containers": [worker]}},
            }
        }
    }
    bad_leader = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "vllm",
                "readinessProbe": slow,
                "livenessProbe": slow,
                "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 40"]}}},
            }
        ],
    }
    bad = {"spec": {"leaderWorkerTemplate": {"leaderTemplate": {"spec": bad_leader}}}}
    no_handler = {"spec": {"leaderWorkerTemplate": {"leaderTemplate": {"spec": {
        "containers": [{"name": "vllm", "readinessProbe": {"periodSeconds": 600},
                        "lifecycle": {"preStop": {"exec": {"command": ["drain"]}}}}],
    }}}}}  # fmt: skip
    checks = (lws.drain, lws.readiness_probe, lws.nccl_watchdog, lws.oom_restart, lws.zone_spread)
    found = [check(obj) for obj in ({}, good, bad, no_handler) for check in checks]
    found.append(lws.oom_restart({"spec": {"leaderWorkerTemplate": {"leaderTemplate": {}}}}))
    short = {"containers": [{"name": "vllm", "readinessProbe": {"exec": {}, "periodSeconds": 1}}]}
    found.append(lws.readiness_probe({"spec": {"leaderWorkerTemplate": {"workerTemplate": {
        "spec": short}}}}))  # fmt: skip
    where = msg("readiness.where.configmap", namespace="llm-serving", name="cm")
    maps = [
        {},
        {"data": {config.ROUTER_KEY: "{", config.GATEWAY_KEY: "{"}},
        {"data": {config.ROUTER_KEY: "[]", config.GATEWAY_KEY: "[]"}},
        {"data": {config.ROUTER_KEY: '{"routing_logic": "roundrobin"}',
                  config.GATEWAY_KEY: '{"max_tokens_cap": 8192, "rate_limit_rps": 5}'}},
        {"data": {config.ROUTER_KEY: '{"routing_logic": "kv", "fallback_routing": "roundrobin"}',
                  config.GATEWAY_KEY: '{"rate_limit_rps": 5, "max_concurrency": 9, '
                                      '"max_tokens_per_minute": 100}'}},
        {"data": {config.ROUTER_KEY: '{"routing_logic": "kv"}'}},
    ]  # fmt: skip
    for cm in maps:
        found += [config.router_fallback(cm, where), config.gateway_limits(cm, where)]
        found.append(config.max_tokens_cap(cm, where))
    found.append(signals.dcgm({"DCGM_FI_DEV_GPU_UTIL": 1, "DCGM_FI_DEV_XID_ERRORS": 1}, "n", "l"))
    found.append(
        signals.dcgm({"DCGM_FI_DEV_GPU_UTIL": 8, "DCGM_FI_DEV_XID_ERRORS": None}, "n", "l")
    )
    catalog = SimpleNamespace(
        for_alert=lambda name: SimpleNamespace(slug="ttft-spike") if name == "A" else None
    )
    found += [
        signals.runbooks_written([], catalog),
        signals.runbooks_written([("A", "a.yml")], catalog),
        signals.runbooks_written([("A", "a.yml"), ("B", "b.yml")], catalog),
    ]
    now = timezone.now()
    plan = SimpleNamespace(title="Double the traffic")
    for run in (
        None,
        SimpleNamespace(pk=3, runbook="ttft-spike", plan=plan, ended_at=now - timedelta(days=1)),
        SimpleNamespace(pk=4, runbook="", plan=None, ended_at=now - timedelta(days=200)),
        SimpleNamespace(pk=5, runbook="x", plan=None, ended_at=None, started_at=None),
    ):
        found.append(signals.chaos_drill(run, now))
    return found


def _ids(parts) -> set[str]:
    found = set()
    for key, params in parts:
        found.add(key)
        for value in params.values():
            if isinstance(value, list):
                found |= _ids(value)
    return found


def _checked(findings: Iterable[Finding]) -> set[str]:
    """The ids the findings used, each of their texts checked in Chinese."""
    ids: set[str] = set()
    for f in findings:
        for line in [f.summary, *f.evidence]:
            _assert_chinese(line.stored)
            ids |= _ids(line.stored)
    return ids


class _DeadApi:
    def get_lws(self, namespace, name):
        raise TargetNotFound(f"leaderworkersets {name} not found")

    def get_configmap(self, namespace, name):
        raise TargetNotFound(f"configmaps {name} not found")


def _unreachable():
    raise ActionError("Kubernetes API at https://10.0.0.1 could not be reached")


def test_every_verifier_answer_is_parts_worded_in_chinese(settings, tmp_path, monkeypatch):
    ids = _checked(_findings())
    # Sources that cannot be read: each item says which, and why, in the reader's words.
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    (tmp_path / "broken.yml").mkdir()  # reading it fails (OSError)
    settings.READINESS_RULES_DIR = str(tmp_path)
    now = timezone.now()
    for factory in (_DeadApi, _unreachable):
        found = sources.findings(namespace="n", name="l", now=now, api_factory=factory)
        ids |= _checked(found.values())
    broken = tmp_path / "yaml"
    broken.mkdir()
    (broken / "bad.yml").write_text("groups: [\n")
    settings.READINESS_RULES_DIR = str(broken)
    assert sources._runbooks_finding().state == ItemState.UNKNOWN  # not a failed verification
    settings.READINESS_RULES_DIR = str(tmp_path / "none")

    def broken_catalogue():
        raise CatalogError("runbooks/x.yaml: no title")

    monkeypatch.setattr(sources, "load_catalog", broken_catalogue)
    ids |= _checked([sources._runbooks_finding()])
    verifier_ids = {
        key for key in known_ids()
        if key.startswith("readiness.")
        and not key.startswith(("readiness.item.", "readiness.signoff.", "readiness.verification."))
        and key != "readiness.not_verified"
    }  # fmt: skip
    assert verifier_ids - ids == set()


def test_a_verification_stores_parts_and_the_page_and_api_word_them(
    sim, prom, worker_api, make_user
):
    services.checklists_refresh(api_factory=worker_api)
    checks = list(ItemCheck.objects.filter(verification__deployment__lws="vllm-chat"))
    assert len(checks) == 11
    for check in checks:
        assert check.texts["summary"], check.item
        assert english(check.texts["summary"]) == check.summary
        assert [english(p) for p in check.texts["evidence"]] == check.evidence
        for parts in [check.texts["summary"], *check.texts["evidence"]]:
            _assert_chinese(parts)

    d = Deployment.objects.get(lws="vllm-chat")
    client = Client()
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(f"/readiness/{d.pk}/", HTTP_ACCEPT_LANGUAGE=ZH).content.decode()
    assert "网关没有限制每秒请求数、token 数、并发。" in page
    assert "token 数：无此键（rate_limit_tokens_per_minute / max_tokens_per_minute）" in page
    assert "The gateway sets no limit" not in page
    assert "尚未签字确认" in page  # the person-signed items

    api = APIClient()
    token = ApiToken.objects.create(user=make_user("ada", roles.VIEWER))[1]
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = api.get(f"/api/v1/readiness/deployments/{d.pk}/", HTTP_ACCEPT_LANGUAGE=ZH).json()
    items = {i["key"]: i for i in body["items"]}
    gateway = items["gateway_limits"]
    assert gateway["summary"] == "网关没有限制每秒请求数、token 数、并发。"
    assert gateway["summary_i18n"][0]["id"] == "readiness.gateway.no_limit"
    assert len(gateway["evidence_i18n"]) == len(gateway["evidence"]) == 3
    assert gateway["evidence_i18n"][0][0]["id"] == "readiness.gateway.evidence"
    assert gateway["title"] == "网关对 RPS、token 数和并发限流"
    assert gateway["title_i18n"] == [{"id": "readiness.item.gateway_limits.title", "params": {}}]
    for item in body["items"]:
        assert item["summary_i18n"], item["key"]
        assert not english_words(item["why"], KEPT), item["why"]
    assert items["canary"]["summary"].startswith("尚未签字确认")
    assert items["canary"]["evidence_i18n"] is None  # no sign-off, no note
    english_body = api.get(f"/api/v1/readiness/deployments/{d.pk}/").json()
    english_items = {i["key"]: i for i in english_body["items"]}
    stored = next(c for c in checks if c.item == "gateway_limits")
    assert english_items["gateway_limits"]["summary"] == stored.summary
    assert english_items["gateway_limits"]["evidence"] == stored.evidence


def test_a_check_stored_before_it_had_parts_is_shown_as_stored(make_user):
    now = timezone.now()
    d = Deployment.objects.create(
        namespace="llm-serving", lws="vllm-chat", first_seen_at=now, last_seen_at=now
    )
    v = Verification.objects.create(
        deployment=d, status=VerificationStatus.DONE, requested_at=now, finished_at=now
    )
    ItemCheck.objects.create(
        verification=v, item="dcgm", state="verified", summary="Old words.",
        evidence=["old line"], source="prometheus",
    )  # fmt: skip
    Deployment.objects.filter(pk=d.pk).update(last_verification=v)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=make_user('ada'))[1]}")
    body = api.get(f"/api/v1/readiness/deployments/{d.pk}/", HTTP_ACCEPT_LANGUAGE=ZH).json()
    dcgm = next(i for i in body["items"] if i["key"] == "dcgm")
    assert (dcgm["summary"], dcgm["evidence"]) == ("Old words.", ["old line"])
    assert (dcgm["summary_i18n"], dcgm["evidence_i18n"]) == (None, None)
    drain = next(i for i in body["items"] if i["key"] == "drain")  # no check: not verified
    assert drain["summary"] == "尚未验证。"


def test_sign_off_summaries_and_verification_errors_in_chinese(make_user, settings):
    now = timezone.now()
    d = Deployment.objects.create(
        namespace="llm-serving", lws="vllm-chat", first_seen_at=now, last_seen_at=now
    )
    cora = make_user("cora", roles.COMMANDER)
    services.signoff_record(
        deployment_id=d.pk, item="canary", actor=cora, note="5% canary",
        expires_on=timezone.localdate() + timedelta(days=30),
    )  # fmt: skip
    first, _ = services.verification_request(deployment_id=d.pk, trigger="schedule", enqueue=False)
    settings.READINESS_VERIFICATION_STALE_SECONDS = 60
    Verification.objects.filter(pk=first.pk).update(requested_at=now - timedelta(minutes=5))
    services.verification_request(deployment_id=d.pk, trigger="schedule", enqueue=False)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=cora)[1]}")

    body = api.get(f"/api/v1/readiness/deployments/{d.pk}/?lang=zh-hans").json()
    canary = next(i for i in body["items"] if i["key"] == "canary")
    assert canary["summary"].startswith("cora 于 ")
    assert "有效期至" in canary["summary"]
    assert canary["summary_i18n"][0]["id"] == "readiness.signoff.valid"
    assert canary["evidence"] == ["5% canary"]  # the note, as typed

    stale = api.get(f"/api/v1/readiness/verifications/{first.pk}/?lang=zh-hans").json()
    assert stale["error"] == "60 秒内没有 worker 完成它。"
    assert stale["error_i18n"] == [
        {"id": "readiness.verification.stale", "params": {"seconds": 60}}
    ]
    assert api.get(f"/api/v1/readiness/verifications/{first.pk}/").json()["error"] == (
        "No worker finished it within 60 s."
    )
    Verification.objects.filter(pk=first.pk).update(error="ValueError: typed by hand")
    raw = api.get(f"/api/v1/readiness/verifications/{first.pk}/?lang=zh-hans").json()
    assert (raw["error"], raw["error_i18n"]) == ("ValueError: typed by hand", None)
