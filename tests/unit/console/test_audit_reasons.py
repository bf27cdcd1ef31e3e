"""The audit log's reasons are stored in English (admins search them) from registered
templates, and /audit/ words them in the reader's language by matching the stored English
back (console/audit/reasons.py): the console's own and the pager's (walk item F1)."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from console import roles
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.audit.reasons import _SHAPES, audit_reason, reason_match, reason_shown
from pager.maintenance.services import window_create
from pager.models import ContactKind
from pager.paging.services.contacts import contact_method_create
from tests.english_words import english_words

pytestmark = pytest.mark.django_db

_PARAM = re.compile(r"%\((\w+)\)s")
# Values a template's parameters get: words the reader's language maps (kinds, roles)
# get a value it knows; the rest a name that is not an English word.
KNOWN = {"method_kind": "email", "override_source": "take", "role_before": "commander"}


def sample(template: str) -> dict[str, str]:
    names = dict.fromkeys(_PARAM.findall(template))
    return {name: KNOWN.get(name, f"v{n}x") for n, name in enumerate(names)}


def test_every_template_is_read_back_as_itself():
    assert any(key.startswith("pager.audit.") for key in _SHAPES)  # the pager registered
    for key, shape in _SHAPES.items():
        params = sample(shape.template)
        assert reason_match(audit_reason(key, **params)) == (key, params), key


def test_every_reason_reads_in_chinese():
    for key, shape in _SHAPES.items():
        params = sample(shape.template)
        with translation.override("zh-hans"):
            shown = reason_shown(audit_reason(key, **params))
        assert shown != audit_reason(key, **params), key
        assert not english_words(shown, params.values()), (key, shown)


def test_a_reason_written_by_a_person_is_shown_as_written():
    with translation.override("zh-hans"):
        assert reason_shown("CUDA upgrade, see ticket 42") == "CUDA upgrade, see ticket 42"
        assert reason_shown("") == ""


def test_the_audit_page_shows_the_pagers_rows_in_chinese(client, make_user):
    admin = make_user("ada", roles.ADMIN)
    now = timezone.now()
    window_create(
        name="gpu-drain", team_id=None, matchers={"namespace": "gpu-*"},
        starts_at=now + timedelta(hours=1), ends_at=now + timedelta(hours=2),
        recurrence="", time_zone="UTC", reason="", actor=admin,
    )  # fmt: skip
    contact_method_create(
        actor=admin, user_id=admin.pk, kind=ContactKind.EMAIL, address="ada@example.com"
    )
    AuditEvent.objects.create(
        kind=AuditKind.ROLE_CHANGED, method=AuditMethod.GROUPS, username="ada",
        old=["responder"], new=["commander"],
    )  # fmt: skip
    assert AuditEvent.objects.filter(reason="Maintenance window gpu-drain created").exists()
    client.force_login(admin)
    page = client.get("/audit/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "维护窗口 gpu-drain 已创建" in page
    assert "为 ada 添加了邮件联系方式" in page
    assert "响应人 → <strong>指挥官</strong>" in page
    assert "命令行" in page  # F4: "shell" was left in the Chinese of the page's intro
    assert "shell" not in page
    cells = re.findall(r'<td class="w-title small">(.*?)</td>', page, re.S)
    text = " ".join(re.sub(r"<[^>]+>", " ", cell) for cell in cells)
    assert not english_words(text, ["gpu-drain", "ada"]), text
