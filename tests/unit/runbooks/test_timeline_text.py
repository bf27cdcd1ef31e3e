"""Auto-triage and confirmed-diagnosis lines: stored in English, read in the viewer's
language from the catalogue in that language (runbooks/timeline_text.py)."""

import pytest
from django.utils import translation

from console import roles
from incidents.timeline_text import timeline_text
from runbooks import services
from runbooks.auto_triage.evaluation import auto_triage_run
from runbooks.catalog import load_catalog
from runbooks.timeline_text import first_sentence
from tests.payloads import alert
from tests.unit.runbooks.test_pages import ingest, prom  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db
CATALOGUE = translation.trans_real.translation("zh-hans")._catalog  # type: ignore[attr-defined]


def test_first_sentence_stops_at_an_english_or_a_chinese_full_stop():
    assert first_sentence("Scale out. Then wait.") == "Scale out."
    assert first_sentence("先扩容。再观察。") == "先扩容。"
    assert first_sentence("no stop at all") == "no stop at all"


@pytest.mark.skipif(
    not CATALOGUE, reason="the compiled catalogue is missing (make test compiles it)"
)
def test_auto_triage_reads_chinese_from_the_chinese_catalogue(post_webhook, make_user, prom):  # noqa: F811
    responder = make_user("rita", roles.RESPONDER)
    incident = ingest(post_webhook, [alert()])
    event = auto_triage_run(incident_id=incident.pk)
    assert event is not None
    assert event.message.startswith("Auto-triage (ttft-spike): capacity — ")
    assert timeline_text(event.kind, event.message, event.payload) == event.message
    with translation.override("zh-hans"):
        zh = load_catalog().get("ttft-spike")
        line = timeline_text(event.kind, event.message, event.payload)
        assert line.startswith("自动排查（ttft-spike）：capacity — ")
        assert first_sentence(zh.branch("capacity").diagnosis) in line
        assert "依据：waiting_queue 告警中" in line
        assert zh.emergency_actions[0].title in line
        confirmed = services.diagnosis_confirm(incident_id=incident.pk, actor=responder)
        assert confirmed.message.startswith("Diagnosis confirmed: capacity — ")  # stored English
        line = timeline_text(confirmed.kind, confirmed.message, confirmed.payload)
        assert line.startswith("诊断已确认：capacity — ")
    # A line that is not the console's own shape is shown as stored.
    assert timeline_text(event.kind, "typed by hand", event.payload) == "typed by hand"
