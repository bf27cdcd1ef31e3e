"""The zh-Hans walk's runbook findings (issue 28): a reading's unit in words (A1: ratio,
count, bool, revisions next to a number), the long-term items' categories (C1), the runbook
page's `Slug` label (C2), the triage's own notes in the API (C4) and parameter names shown
as code. In Chinese nothing here reads English beyond ids and names."""

import html
import re

import pytest
from django.template import Context, Template
from django.utils import translation

from console import roles
from runbooks.auto_triage.evaluation import _entry
from runbooks.catalog import load_catalog
from runbooks.recommendations import recommended_actions
from runbooks.timeline_text import _auto_triage
from runbooks.triage import incident_alerts_firing_first, incident_triage
from runbooks.units import reading, unit_msg, unit_word, with_unit
from tests.english_words import english_words
from tests.unit.actions.test_recommended import open_incident
from tests.unit.actions.test_recommended import prom as prom
from tests.unit.runbooks.test_pages import HTMX, _clear_cache  # noqa: F401
from tests.unit.runbooks.test_triage import api

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
# cuda-graph-capture's checks, one of each unit: count, bool, pods, revisions.
CRASHLOOP = {
    "template_revision_hash": 2,
    "max by (namespace, pod)": 1,
    "waiting_reason": 1,
    "restarts_total": 145,
}
UNIT_IDS = ("ratio", "count", "bool", "revisions", "pods", "tokens", "GPUs", "code")


@pytest.fixture(autouse=True)
def _english_after():
    yield
    translation.activate("en")


def chinese(text: str, *names: str) -> str:
    assert text
    assert english_words(text, allowed=names) == [], text
    return text


def test_every_unit_of_the_catalogue_is_worded_or_a_symbol():
    used = {c.unit for rb in load_catalog().all() for c in rb.triage}
    used |= {s.unit for rb in load_catalog().all() for s in rb.golden_signals}
    with translation.override(ZH):
        for unit in used - {"bool"}:  # a yes/no reading has no unit word
            chinese(unit_word(unit))  # a symbol (s, %, req/s) counts as a code
    assert unit_word("ratio") == "ratio"  # English pages are as before


def test_a_reading_and_its_unit_in_chinese():
    with translation.override(ZH):
        assert with_unit(0.0007355, "ratio") == "0.0007355 比例"
        assert with_unit(145, "count") == "145 次"
        assert with_unit(2, "revisions") == "2 个版本"
        assert with_unit(1, "bool") == "是"
        assert with_unit(0.0, "bool") == "否"
        assert with_unit(12.5, "s") == "12.5 s"
        assert unit_word("% of groups") == "% 的组"
        assert unit_word("of groups") == "组占比"
        assert unit_word("bool") == ""
    assert reading(None, "count") == ""
    assert with_unit(1, "bool") == "yes"
    assert unit_msg("s") == "s"
    assert unit_msg("ratio").stored == [["runbooks.unit.ratio", {}]]


def test_the_template_filters():
    page = Template("{% load units %}{{ v|reading:u }} {{ u|unit_word }}")
    with translation.override(ZH):
        assert page.render(Context({"v": 0.25, "u": "ratio"})) == "0.25 比例"
        assert page.render(Context({"v": 1.0, "u": "bool"})).strip() == "是"


def test_the_triage_panel_words_each_reading(prom, post_webhook, client, make_user):
    prom.answers = CRASHLOOP
    incident = open_incident(post_webhook, "cuda-graph-capture", severity="warning")
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get(
        f"/runbooks/incidents/{incident.pk}/triage/", HTTP_ACCEPT_LANGUAGE=ZH, **HTMX
    ).content.decode()
    rows = dict(re.findall(r'<tr data-check="([a-z_]+)">(.*?)</tr>', page, re.S))
    cells = {cid: re.findall(r'<td class="[^"]*mono nowrap">(.*?)</td>', row, re.S)
             for cid, row in rows.items()}  # fmt: skip
    plain = {
        cid: [html.unescape(re.sub(r"<[^>]+>", "", c)).split() for c in both]
        for cid, both in cells.items()
    }
    assert plain["restarts"] == [["145", "次"], [">", "2", "次"]]
    assert plain["crashloop_backoff"] == [["是"], ["==", "是"]]
    assert plain["pool_crashlooping"] == [["1", "个", "Pod"], [">", "1", "个", "Pod"]]
    assert plain["rollout_in_progress"] == [["2", "个版本"], [">", "1", "个版本"]]


def test_the_auto_triage_line_words_its_evidence(prom, post_webhook):
    prom.answers = CRASHLOOP
    incident = open_incident(post_webhook, "cuda-graph-capture", severity="warning")
    alerts = incident_alerts_firing_first(incident)
    result = incident_triage(incident=incident, alerts=alerts)
    actions = recommended_actions(incident=incident, result=result, alerts=alerts)
    message, payload = _entry(result, actions)
    assert "(145 count)" in message  # stored English, as before
    with translation.override(ZH):
        line = _auto_triage(message, payload)
    because = next(x for x in line.splitlines() if x.startswith("依据"))
    assert "restarts 告警中 (145 次)" in because
    assert "crashloop_backoff 告警中 (是)" in because
    chinese(because, "restarts", "crashloop_backoff", "pool_crashlooping", "rollout_in_progress")


def test_the_runbook_page_in_chinese(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get("/runbooks/cuda-graph-capture/", HTTP_ACCEPT_LANGUAGE=ZH).content.decode()
    assert "<dt>标识</dt>" in page
    assert "<dt>Slug</dt>" not in page
    for unit in ("count", "bool", "revisions", "pods"):
        assert f'<span class="muted">{unit}</span>' not in page
    assert '<span class="muted">次</span>' in page
    assert "== 是" in page
    assert "<code>{namespace}</code>" in page
    # The long-term items' categories by postmortems' labels, the id kept as data.
    chips = re.findall(r'<span class="chip" data-category="([a-z]+)">([^<]+)</span>', page)
    assert chips
    assert all(word != category for category, word in chips)
    with translation.override(ZH):
        for _category, word in chips:
            chinese(word)


def test_the_long_term_category_in_english_too(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get("/runbooks/ttft-spike/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<span class="chip" data-category="automation">Automation</span>' in page
    assert "<dt>Slug</dt>" in page


def test_the_triage_api_words_its_notes_and_units(prom, post_webhook, make_user):
    prom.answers = {"restarts_total": 145}  # the others answer no data
    incident = open_incident(post_webhook, "cuda-graph-capture", severity="warning")
    client = api(make_user, roles.VIEWER)
    body = client.get(f"/api/v1/incidents/{incident.pk}/triage/?lang={ZH}").json()
    checks = {c["id"]: c for c in body["checks"]}
    no_data = checks["crashloop_backoff"]
    assert no_data["state"] == "no_data"
    assert no_data["message"] == "查询没有返回数据"
    assert no_data["message_i18n"] == [{"id": "runbooks.triage.no_data", "params": {}}]
    assert checks["restarts"]["unit"] == "count"  # the catalogue's id
    assert checks["restarts"]["unit_label"] == "次"
    english = client.get(f"/api/v1/incidents/{incident.pk}/triage/").json()
    assert english["checks"][1]["message"] == "the query returned no data"
    assert english["checks"][0]["unit_label"] == "count"


def test_a_missing_label_and_no_runbook_in_the_api(prom, post_webhook, make_user):
    incident = open_incident(post_webhook, "cuda-graph-capture", severity="warning", pod="")
    client = api(make_user, roles.VIEWER)
    body = client.get(f"/api/v1/incidents/{incident.pk}/triage/?lang={ZH}").json()
    needs = next(c for c in body["checks"] if c["state"] == "needs_label")
    assert needs["message"] == "缺少标签 pod"
    assert needs["message_i18n"][0]["id"] == "runbooks.triage.needs_label"
    incident.alerts.update(labels={"alertname": "SomethingElse"})
    type(incident).objects.filter(pk=incident.pk).update(runbook="")
    body = client.get(f"/api/v1/incidents/{incident.pk}/triage/?lang={ZH}").json()
    assert body["runbook"] == ""
    assert body["message_i18n"] == [{"id": "runbooks.triage.no_runbook", "params": {}}]
    chinese(body["message"])
