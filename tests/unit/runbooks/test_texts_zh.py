"""Issue 28, triage: a recommended action's approval reason is kept as parts and worded in
the reader's language; the Prometheus client's errors ("Prometheus at X did not answer in
5 s") are worded where they are shown (the triage panel, the signals, the auto-triage
line), Prometheus' own text staying a parameter."""

import re
from datetime import UTC, datetime

import pytest
from django.utils import translation

from console import roles
from console.texts import render
from runbooks import prometheus
from runbooks.auto_triage.evaluation import _entry
from runbooks.prometheus_texts import prometheus_said, prometheus_text, prometheus_text_api
from runbooks.recommendations import recommended_actions
from runbooks.triage import TriageResult, incident_alerts_firing_first, incident_triage
from tests.english_words import english_words
from tests.helpers import free_port
from tests.payloads import alert
from tests.unit.actions.test_recommended import NCCL_HUNG, open_incident
from tests.unit.actions.test_recommended import prom as prom
from tests.unit.runbooks.test_pages import HTMX, _clear_cache, ingest  # noqa: F401

pytestmark = pytest.mark.django_db
ZH = "zh-hans"
URL = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _english_after():
    yield
    translation.activate("en")


def chinese(text: str, *names: str) -> str:
    assert text
    assert english_words(text, allowed=names) == [], text
    return text


# --- 3. the recommended action's approval reason -----------------------------------------


def test_a_recommended_actions_approval_reason_is_parts_worded_for_the_reader(
    prom,
    post_webhook,
):
    prom.answers = NCCL_HUNG
    incident = open_incident(post_webhook, "nccl-hang", severity="critical")  # SEV1
    alerts = incident_alerts_firing_first(incident)
    result = incident_triage(incident=incident, alerts=alerts)
    restart, _cordon = recommended_actions(incident=incident, result=result, alerts=alerts)
    assert restart.requires_approval is True
    assert restart.approval_reason.startswith("restart_lws_group is a risky action.")
    assert render(restart.approval_reason_msg, language="en") == restart.approval_reason
    with translation.override(ZH):
        shown = restart.approval_reason_shown
        data = restart.as_api()
    chinese(shown, "restart_lws_group", "vllm-chat", "llm-serving")
    assert data["approval_reason"] == shown
    assert data["approval_reason_i18n"][0]["id"].startswith("actions.approval.")
    assert "approval_reason_msg" not in data
    assert data["needs_labels"] == []
    assert restart.as_api()["approval_reason"] == restart.approval_reason  # English


def test_an_undecided_approval_names_the_missing_label_in_chinese(prom, post_webhook):
    prom.answers = NCCL_HUNG
    incident = open_incident(post_webhook, "nccl-hang", node="")
    alerts = incident_alerts_firing_first(incident)
    result = incident_triage(incident=incident, alerts=alerts)
    cordon = next(
        a
        for a in recommended_actions(incident=incident, result=result, alerts=alerts)
        if a.kind == "cordon_node"
    )
    assert cordon.approval_reason == "Not decided: needs label node"
    with translation.override(ZH):
        assert "node" in chinese(cordon.approval_reason_shown, "node")


# --- 5. the Prometheus client's errors ----------------------------------------------------

SHAPES = [
    (f"Prometheus at {URL} did not answer in 0.5 s", "runbooks.prometheus.timeout"),
    (f"Prometheus at {URL} refused the connection", "runbooks.prometheus.refused"),
    (f"Prometheus at {URL} could not be reached: Max retries exceeded", "unreachable"),
    (f"Prometheus at {URL} could not be queried: Invalid URL", "runbooks.prometheus.failed"),
    (f"Prometheus at {URL} answered 200 with a body that is not Prometheus JSON", "not_json"),
    (f"Prometheus at {URL} answered 400: parse error: unexpected }}", "answered"),
    (f"Prometheus at {URL} answered 503: no error message", "runbooks.prometheus.answered"),
    ("3 series; took the largest", "runbooks.prometheus.series"),
    ("unexpected result type 'string'", "runbooks.prometheus.result_type"),
]
# Prometheus' and the connection's own words (and a result type's name) stay as they came.
RAW = ("Max", "retries", "exceeded", "Invalid", "parse", "error", "unexpected", "string")


@pytest.mark.parametrize(("text", "key"), SHAPES)
def test_each_error_the_client_writes_is_worded_in_chinese(text, key):
    said = prometheus_said(text)
    assert said is not None
    assert said.stored[0][0].endswith(key)
    assert said.english == text
    with translation.override(ZH):
        worded = prometheus_text(text)
        api_text, ids = prometheus_text_api(text)
    chinese(worded, *RAW)
    assert api_text == worded
    assert ids[0]["id"] == said.stored[0][0]
    assert prometheus_text(text) == text  # English as written


def test_raw_text_stays_a_parameter_and_other_text_is_shown_as_is():
    said = prometheus_said(f"Prometheus at {URL} answered 400: parse error: bad: x")
    assert said.stored[0][1] == {"url": URL, "status": "400", "error": "parse error: bad: x"}
    assert prometheus_said("needs a label pod") is None
    with translation.override(ZH):
        assert prometheus_text("something else") == "something else"
        assert prometheus_text_api("") == ("", None)


def test_the_client_raises_its_errors_in_a_shape_it_words_again(settings):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    with pytest.raises(prometheus.PrometheusUnavailable) as caught:
        prometheus.query("up")
    said = prometheus_said(caught.value.message)
    assert said.stored[0][0] == "runbooks.prometheus.refused"
    assert render(said.stored, language=ZH).endswith("上的 Prometheus 拒绝了连接")


def test_the_triage_panel_words_prometheus_down_in_chinese(
    client, make_user, post_webhook, settings
):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    incident = ingest(post_webhook, [alert()])
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get(
        f"/runbooks/incidents/{incident.pk}/triage/", HTTP_ACCEPT_LANGUAGE=ZH, **HTMX
    ).content.decode()
    banner = re.search(r'data-testid="prometheus-banner"><strong>(.*?)</strong>', page).group(1)
    assert banner == f"{settings.PROMETHEUS_URL} 上的 Prometheus 拒绝了连接"
    assert "refused the connection" not in page
    signals = client.get(
        f"/runbooks/incidents/{incident.pk}/signals/", HTTP_ACCEPT_LANGUAGE=ZH, **HTMX
    ).content.decode()
    assert "拒绝了连接" in signals
    assert "refused the connection" not in signals


def test_the_auto_triage_line_nests_the_error_as_parts(settings):
    error = f"Prometheus at {URL} did not answer in 5 s"
    result = TriageResult(
        incident_id=1, runbook_slug="ttft-spike", runbook_title="TTFT", checks=(),
        branch_id="", diagnosis="", recommended_actions=(), because=(), prometheus_url=URL,
        prometheus_error=error, evaluated_at=datetime(2026, 12, 5, tzinfo=UTC),
    )  # fmt: skip
    message, payload = _entry(result, [])
    assert payload["prometheus_error"] == error  # what decides news stays English
    assert error in message.english
    nested = message.stored[0][1]["error"]
    assert nested[0][0] == "runbooks.prometheus.timeout"
    text = chinese(render(message.stored, language=ZH), "ttft-spike")
    assert f"{URL} 上的 Prometheus 在 5 秒内没有响应" in text
