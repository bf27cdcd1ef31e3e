"""Timeline lines the console wrote read in the viewer's language; what people typed,
and anything not in a known shape, shows exactly as stored."""

import pytest
from django.utils import translation

from incidents.models import TimelineEvent
from incidents.models import TimelineEventType as K
from incidents.timeline_text import timeline_text
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db


def _opened(post_webhook):
    r = post_webhook(notification([alert(), alert(pod="vllm-chat-1")]))
    assert r.status_code == 200
    return r.json()["incidents"][0]


def _line(incident_id, kind):
    e = TimelineEvent.objects.filter(incident_id=incident_id, kind=kind).first()
    return e, timeline_text(e.kind, e.message, e.payload)


def test_english_lines_stay_as_stored(post_webhook):
    incident_id = _opened(post_webhook)
    for kind in (K.INCIDENT_OPENED, K.ALERT_FIRED):
        event, line = _line(incident_id, kind)
        assert line == event.message


@pytest.mark.skipif(
    not translation.trans_real.translation("zh-hans")._catalog,  # type: ignore[attr-defined]
    reason="the compiled catalogue is missing (make test compiles it)",
)
def test_console_lines_read_chinese_and_typed_text_does_not_change(post_webhook):
    incident_id = _opened(post_webhook)
    with translation.override("zh-hans"):
        event, line = _line(incident_id, K.INCIDENT_OPENED)
        assert line.startswith("事件已打开：")
        assert line.endswith(event.message.split(": ", 1)[1])  # the alert's own title
        _, line = _line(incident_id, K.ALERT_FIRED)
        assert line == "2 条告警触发：VLLMHighTTFT"
        assert (
            timeline_text(K.STATUS_CHANGED, "Incident acknowledged.", {"verb": "acknowledged"})
            == "事件已认领。"
        )
        # A person's reason, and a line whose count does not match its payload, as stored.
        typed = "Rolled back vllm-chat to v0.6.3"
        assert timeline_text(K.STATUS_CHANGED, typed, {"verb": "mitigated"}) == typed
        odd = "3 alerts firing: X"
        assert timeline_text(K.ALERT_FIRED, odd, {"count": 2, "alerts": []}) == odd
        assert timeline_text(K.NOTE, "Incident acknowledged.", {}) == "Incident acknowledged."
