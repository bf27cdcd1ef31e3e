"""The runbook, action, drill and checklist pages in Simplified Chinese when the browser
asks for it, with the English page unchanged otherwise. Skipped until the compiled
catalogue exists (the lead merges the slices' parts and compiles them)."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from actions import services
from console import roles
from drills.models import DrillPlan
from readiness.models import Deployment
from tests.factories import IncidentFactory

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
SCALE = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}


def _compiled() -> bool:
    return any(
        (Path(p) / "zh_Hans" / "LC_MESSAGES" / "django.mo").exists() for p in settings.LOCALE_PATHS
    )


pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not _compiled(), reason="locale/zh_Hans/LC_MESSAGES/django.mo not built"),
]


@pytest.fixture
def no_kubernetes(settings, monkeypatch):
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def login(make_user, name, role) -> Client:
    client = Client()
    client.user = make_user(name, role)
    client.force_login(client.user)
    return client


def test_catalogue_in_chinese(make_user):
    client = login(make_user, "vic", roles.VIEWER)
    zh = client.get("/runbooks/", **ZH).content.decode()
    assert "运行手册" in zh
    assert "默认严重级别" in zh  # a table header
    assert "Default severity" not in zh
    en = client.get("/runbooks/").content.decode()
    assert "Default severity" in en


def test_runbook_page_in_chinese(make_user):
    client = login(make_user, "vic", roles.VIEWER)
    zh = client.get("/runbooks/ttft-spike/", **ZH).content.decode()
    headings = ("1. 现象", "2. 排查", "决策树", "3. 根因", "4. 修复：应急操作", "故障演练")
    for words in headings:
        assert words in zh
    assert "告警中" in zh  # the branches' conditions in words


@pytest.mark.usefixtures("no_kubernetes")
def test_action_run_page_in_chinese(make_user):
    incident = IncidentFactory(severity="SEV1")
    rita = login(make_user, "rita", roles.RESPONDER)
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=rita.user,
        kind="scale_lws",
        params=SCALE,
        idempotency_key="i18n-key-01",
    )
    zh = rita.get(f"/runbooks/actions/{run.pk}/", **ZH).content.decode()
    for words in ("变更内容", "审计日志", "待批准", "发起", "取消"):
        assert words in zh
    assert "What changed" not in zh
    listed = rita.get("/runbooks/actions/", **ZH).content.decode()
    assert "筛选" in listed
    assert "发起人" in listed


def test_drills_page_in_chinese(make_user):
    cara = login(make_user, "cara", roles.COMMANDER)
    DrillPlan.objects.create(
        runbook="ttft-spike", title="TTFT spike on chat", namespace="llm-serving",
        lws="vllm-chat", fault="ttft-spike", created_by=cara.user, created_at=timezone.now(),
    )  # fmt: skip
    zh = cara.get("/runbooks/drills/", **ZH).content.decode()
    for words in ("故障演练", "演练计划", "最近执行", "计划演练", "保存计划", "通过标准"):
        assert words in zh
    assert "Chaos drills" not in zh


def test_readiness_list_in_chinese(make_user):
    now = timezone.now()
    Deployment.objects.create(
        namespace="llm-serving", lws="vllm-chat", first_seen_at=now - timedelta(days=1),
        last_seen_at=now,
    )  # fmt: skip
    client = login(make_user, "vic", roles.VIEWER)
    zh = client.get("/readiness/", **ZH).content.decode()
    for words in ("上线检查清单", "部署", "最近验证", "从未"):
        assert words in zh
    assert 'data-rag="red"' in zh  # the data attributes stay English
    detail = client.get(f"/readiness/{Deployment.objects.get().pk}/", **ZH).content.decode()
    assert "灰度带回滚阈值" in detail  # an item title, translated on the page
    assert "尚未验证。" in detail


@pytest.mark.usefixtures("no_kubernetes")
def test_a_refusal_is_in_chinese_on_the_page(make_user):
    incident = IncidentFactory(severity="SEV1")
    cara = login(make_user, "cara", roles.COMMANDER)
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=cara.user,
        kind="scale_lws",
        params=SCALE,
        idempotency_key="i18n-key-02",
    )
    answer = cara.post(
        f"/runbooks/actions/{run.pk}/approve/", {}, HTTP_HX_REQUEST="true", **ZH
    ).content.decode()
    assert "这次执行是你发起的" in answer  # policy.can_decide's reason, translated
