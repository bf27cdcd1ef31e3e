"""The zh-Hans walk's action findings (issue 28): a guard reading's unit in words (A1), the
run page's status changes by their labels (A2), a ConfigMap revision's reason in the
reader's language wherever it is shown, one from elsewhere marked as data (A3), and
parameter names marked as code (A6)."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.utils import translation

from actions import services
from actions.guard.api import guard_signal_api
from actions.guard.judge import judge
from actions.kinds import Context, kind_for
from actions.models import ActionRunStatus, ConfigRevision
from actions.revisions import revision_lookup
from console.texts import render
from simulator import objects
from simulator.store import CONFIGMAPS
from tests.english_words import english_words
from tests.factories import IncidentFactory
from tests.unit.actions.test_configmap_kinds import router_data
from tests.unit.actions.test_guard_verdict import spec
from tests.unit.actions.test_texts_zh import SCALE, people  # noqa: F401 (fixture)
from tests.unit.conftest import NS

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
STARTED = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
# The reasons the console writes (actions/access.py, capture.py, execution.py, preview.py).
REASONS = (
    "first look at worker start",
    "after run #48",
    "before run #47",
    "periodic capture",
    "seen at preview of rollback_router_config",
)


@pytest.fixture(autouse=True)
def _english_after():
    yield
    translation.activate("en")


def chinese(text: str, *names: str) -> str:
    assert text
    assert english_words(text, allowed=names) == [], text
    return text


# --- A1: a guard reading's unit -------------------------------------------------------------
def test_a_guard_signal_words_its_unit():
    hit = spec("prefix-cache-drop", "hit_rate")
    assert hit["unit"] == "ratio"
    _state, said = judge(hit, 0.05, 0.82)
    assert "0.05 ratio crossed" in said.english  # English as before
    text = chinese(render(said.stored, language=ZH), *hit["title"].split())  # a runbook's title
    assert "0.05 比例" in text
    with translation.override(ZH):
        assert guard_signal_api(hit)["unit_label"] == "比例"
    assert guard_signal_api(hit)["unit_label"] == "ratio"


# --- A2: the run page's status changes --------------------------------------------------------
def test_the_run_page_names_each_status_change_by_its_label(people):  # noqa: F811
    incident = IncidentFactory(severity="SEV1", namespace=NS)
    run, _ = services.action_run_request(
        incident_id=incident.pk, actor=people["rita"], kind="scale_lws", params=SCALE,
        idempotency_key="walk-0001",
    )  # fmt: skip
    assert run.status == ActionRunStatus.AWAITING_APPROVAL
    services.action_run_approve(run_id=run.pk, actor=people["cole"], note="")
    client = Client()
    client.force_login(people["rita"])
    page = client.get(f"/runbooks/actions/{run.pk}/", HTTP_ACCEPT_LANGUAGE=ZH).content.decode()
    audit = page[page.index('data-testid="audit"') :]
    badges = re.findall(r'<span class="badge small run-[a-z_]+">(.*?)</span>', audit, re.S)
    assert badges == ["待批准 → 已入队"]  # the request itself changes no status
    english = Client()
    english.force_login(people["cole"])
    page = english.get(f"/runbooks/actions/{run.pk}/", HTTP_ACCEPT_LANGUAGE="en").content
    assert "Awaiting approval → Queued" in page.decode()


# --- A3: a revision's reason -------------------------------------------------------------
def _revisions(reason_of_the_good_one: str) -> None:
    ConfigRevision.objects.create(
        namespace=NS, name=objects.ROUTER_CONFIGMAP, data=router_data(), resource_version="1",
        captured_at=STARTED - timedelta(hours=1), reason=reason_of_the_good_one,
    )  # fmt: skip
    ConfigRevision.objects.create(
        namespace=NS, name=objects.ROUTER_CONFIGMAP,
        data=router_data(routing_logic="roundrobin"), resource_version="2",
        captured_at=STARTED - timedelta(minutes=1), reason="after run #48",
    )  # fmt: skip


@pytest.mark.parametrize("reason", REASONS)
def test_the_rollback_summary_words_the_revision_reason(sim, api, reason):
    _revisions(reason)
    bad = router_data(routing_logic="roundrobin")
    sim.store.mutate(CONFIGMAPS, NS, objects.ROUTER_CONFIGMAP, lambda o: o.update(data=bad))
    rollback = kind_for("rollback_router_config")
    params = rollback.clean({})
    ctx = Context(incident_started_at=STARTED, revision_lookup=revision_lookup)
    plan = rollback.plan(rollback.read(api, params), params, ctx)
    assert reason in plan.summary  # stored English
    text = chinese(render(plan.summary_msg, language=ZH), "rollback_router_config")
    assert ": " not in text  # the label's own colon is Chinese too


def test_the_dialog_words_the_console_s_reasons_and_marks_others_as_data():
    incident = IncidentFactory(severity="SEV2", namespace=NS)
    rows = [
        ConfigRevision.objects.create(
            namespace=NS,
            name="vllm-router-config",
            data={"n": str(n)},
            resource_version=str(n),
            captured_at=STARTED + timedelta(minutes=n),
            reason=reason,
        )
        for n, reason in enumerate((*REASONS, "kubectl edit by ops"))
    ]
    context = {
        "incident": incident,
        "kind": "rollback_router_config",
        "params": {"namespace": NS, "configmap": "vllm-router-config", "revision": "previous"},
        "revisions": rows,
    }
    with translation.override(ZH):
        page = render_to_string("actions/_confirm.html", context)
    table = page[page.index("action-revisions") : page.index("</table>")]
    cells = re.findall(r"<tr><td class=\"mono\">\d+</td><td class=\"mono\">[^<]*</td><td>(.*?)"
                       r"</td></tr>", table)  # fmt: skip
    assert len(cells) == len(REASONS) + 1
    for cell in cells[:-1]:
        chinese(cell, "rollback_router_config")
    assert cells[-1] == '<span class="mono" translate="no">kubectl edit by ops</span>'
    # A6: the parameter's name in the sentence is code.
    assert "<code>revision</code>" in table
    assert rows[-1].reason_is_ours is False
    assert rows[0].reason_is_ours is True
