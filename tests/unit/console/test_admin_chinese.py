"""The Django admin reads in Chinese for a zh-hans viewer: column headers, filters and form
labels come from the fields' verbose names, so no English field name is left on the page.

(Postmortems have no admin registration, so there is no postmortem page to check here.)
"""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from actions.models import ActionRun, ActionRunEvent
from notifications.models import Delivery, Event, Target, TargetKind
from tests.factories import IncidentFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not (Path(settings.BASE_DIR) / "locale/zh_Hans/LC_MESSAGES/django.mo").exists(),
        reason="the zh_Hans catalogue is not compiled (make test compiles it)",
    ),
]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


@pytest.fixture
def superuser(make_user):
    return make_user("root", None, is_staff=True, is_superuser=True)


@pytest.fixture
def root(client, superuser):
    client.force_login(superuser)
    return client


@pytest.fixture
def rows(superuser):
    """One row of each model checked, so each change form has something to open."""
    incident = IncidentFactory()
    now = timezone.now()
    run = ActionRun.objects.create(
        incident=incident,
        kind="scale_lws",
        target="leaderworkerset/llm-serving/vllm-chat",
        params={"replicas": 3},
        idempotency_key="admin-zh",
        requested_by=superuser,
        requested_at=now,
    )
    ActionRunEvent.objects.create(run=run, occurred_at=now, status_to="queued", message="queued")
    target = Target.objects.create(name="oncall", kind=TargetKind.EMAIL, recipients="a@x.test")
    delivery = Delivery.objects.create(
        target=target, event=Event.TEST, event_key="test:1", summary="s", created_at=now
    )
    return {"incident": incident, "actionrun": run, "target": target, "delivery": delivery}


# (app/model, Chinese that must show, English field labels that must not)
PAGES = [
    (
        "incidents/incident",
        ["严重级别", "状态", "命名空间", "触发时间", "解决时间"],
        ["Severity", "Namespace", "Triggered at", "Resolved at"],
    ),
    (
        "actions/actionrun",
        ["操作对象", "发起人", "发起时间"],
        ["Target", "Requested by", "Requested at"],
    ),
    (
        "notifications/target",
        ["名称", "类型", "语言", "投递地址", "更新时间"],
        ["Name", "Kind", "Language", "Destination", "Updated at"],
    ),
    (
        "notifications/delivery",
        ["通知类型", "尝试次数", "创建时间"],
        ["Event", "Attempts", "Created at"],
    ),
]
FORMS = {
    "incidents/incident": (
        ["分组键", "重新打开次数", "认领时间"],
        ["Grouping key", "Reopen count"],
    ),
    "actions/actionrun": (
        ["幂等键", "需要双人复核", "原状态", "新状态"],
        ["Idempotency key", "Requires approval", "Status from", "Status to"],
    ),
    "notifications/target": (["收件人", "启用"], ["Recipients", "Enabled"]),
    "notifications/delivery": (["去重键", "最近一次错误"], ["Event key", "Last error"]),
}


def _labels_missing(html: str, english: list[str]) -> list[str]:
    """The English labels still on the page: whole header or label texts (">Name:<", with
    any white space), not words inside a longer text or a CSS class."""
    return [e for e in english if re.search(rf">\s*{re.escape(e)}:?\s*<", html)]


@pytest.mark.parametrize(("model", "chinese", "english"), PAGES, ids=[p[0] for p in PAGES])
def test_changelist_headers_are_chinese(root, rows, model, chinese, english):
    html = root.get(f"/admin/{model}/", **ZH).content.decode()
    assert [c for c in chinese if c not in html] == []
    assert _labels_missing(html, english) == []


@pytest.mark.parametrize("model", list(FORMS))
def test_change_form_labels_are_chinese(root, rows, model):
    chinese, english = FORMS[model]
    obj = rows[model.split("/")[1]]
    response = root.get(f"/admin/{model}/{obj.pk}/change/", **ZH)
    assert response.status_code == 200
    html = response.content.decode()
    assert [c for c in chinese if c not in html] == []
    assert _labels_missing(html, english) == []
