"""The zh-Hans walk's D1: a drill run's history names each entry's kind in the reader's
language (started, injected, scored, cleared ... were shown as their ids); the id stays
on the chip as data."""

import re

import pytest
from django.utils import translation

from drills import execution, services
from drills.models import EVENT_KIND_LABELS, DrillRunEvent
from drills.restore import STEPS
from tests.english_words import english_words
from tests.unit.drills.test_drill_runs import fire, plan_for
from tests.unit.drills.test_texts_zh import drills  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
CHIP = re.compile(r'<span class="chip" data-kind="([a-z_]+)">([^<]+)</span>')


@pytest.fixture(autouse=True)
def _english_after():
    yield
    translation.activate("en")


def test_every_kind_the_drills_record_has_a_chinese_label():
    kinds = {"started", "injected", "incident_linked", "stop_requested", "failed",
             "fault_not_active", "clear_note", "clear_failed", "cleared", "scored",
             "restore_step", *STEPS.values()}  # fmt: skip
    assert kinds <= set(EVENT_KIND_LABELS)
    with translation.override(ZH):
        for kind in kinds:
            label = DrillRunEvent(kind=kind).kind_label
            assert label != kind
            assert english_words(label) == [], (kind, label)
    assert DrillRunEvent(kind="something_new").kind_label == "something_new"


def test_the_run_page_shows_the_history_kinds_in_chinese(
    drills,  # noqa: F811
    commander,
    post_webhook,
    client,
):
    plan = plan_for(commander)
    run = services.drill_start(plan_id=plan.pk, actor=commander)
    execution.drill_run_inject(run_id=run.pk)
    fire(post_webhook)
    execution.drill_run_check(run_id=run.pk)
    services.drill_stop(run_id=run.pk, actor=commander, reason="pager went off")
    execution.drill_run_finish(run_id=run.pk)
    client.force_login(commander)
    page = client.get(f"/runbooks/drills/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE=ZH)
    history = page.content.decode().split('data-testid="drill-history"', 1)[1]
    chips = dict(CHIP.findall(history))
    assert {"started", "injected", "incident_linked", "scored"} <= set(chips)
    assert chips["started"] == "已开始"
    assert chips["scored"] == "已评分"
    for kind, label in chips.items():
        assert label != kind
        assert english_words(label) == [], (kind, label)
    page = client.get(f"/runbooks/drills/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="en")
    assert '<span class="chip" data-kind="injected">injected</span>' in page.content.decode()
