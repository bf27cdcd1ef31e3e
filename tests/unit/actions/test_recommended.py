"""API parity for one-click (issue #15, item 6): the triage API's recommended actions carry
the parameters the incident page's button posts and the approval the dialog shows, so a
client requests an action in one call exactly as the button does."""

import dataclasses
import html
import re
import uuid

import pytest
from django.core.cache import cache
from django.http import QueryDict
from django.test import Client
from rest_framework.test import APIClient

from actions.forms import coerce_params
from actions.models import ActionRun
from actions.recommended import recommended_actions
from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident
from runbooks.catalog import load_catalog
from runbooks.serializers import triage_data
from runbooks.triage import incident_alerts_firing_first, incident_triage
from tests.helpers import free_port
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
PARAM = re.compile(r'<input name="(param\.[^"]+)" value="([^"]*)"')
NCCL_HUNG = {
    'pod!="': 850.0,
    "num_requests_running": 12,
    "generation_tokens_total": 0,
    "DCGM_FI_DEV_GPU_UTIL": 0,
    "NVLINK_CRC": 37,
}


@pytest.fixture(autouse=True)
def _no_cluster_and_a_clean_cache(settings, monkeypatch):
    # The dialog previews against Kubernetes: without one it says so and still renders.
    settings.KUBECONFIG = ""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus()
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    yield fake
    fake.close()


def open_incident(post_webhook, slug: str, *, severity: str = "critical", **labels) -> Incident:
    runbook = load_catalog().get(slug)
    extra = {"node": "gpu-node-3", **labels}
    body = notification(
        [alert(runbook=slug, alertname=runbook.alerts[0], severity=severity, extra_labels=extra)],
        group_key=f"g-{slug}-{uuid.uuid4().hex[:6]}",
        alertname=runbook.alerts[0],
    )
    r = post_webhook(body)
    assert r.status_code == 200, r.content
    return Incident.objects.get(pk=r.json()["incidents"][0])


def button_posts(client: Client, incident_id: int, index: int) -> tuple[dict, bool]:
    """What the page's button for emergency action `index` posts (the dialog's fields, read
    back as the page's own request view reads them), and whether the dialog asks for
    approval."""
    r = client.get(f"/runbooks/incidents/{incident_id}/actions/confirm/?action={index}", **HTMX)
    assert r.status_code == 200, r.content
    page = r.content.decode()
    form = QueryDict(mutable=True)
    for name, value in PARAM.findall(page):
        form[name] = html.unescape(value)
    return coerce_params(form), 'data-testid="needs-approval"' in page


def every_branch_recommends_everything(result, slug: str):
    """The triage result as if the branch recommended every emergency action of the
    runbook, so each action of each runbook is compared, whatever Prometheus says."""
    kinds = tuple(dict.fromkeys(a.kind for a in load_catalog().get(slug).emergency_actions))
    return dataclasses.replace(result, recommended_actions=kinds)


@pytest.mark.parametrize("slug", [rb.slug for rb in load_catalog().all()])
def test_every_recommended_action_fills_what_the_button_posts(
    slug, settings, post_webhook, make_user
):
    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"  # the branch does not matter
    incident = open_incident(post_webhook, slug)
    alerts = incident_alerts_firing_first(incident)
    result = every_branch_recommends_everything(incident_triage(incident=incident), slug)
    listed = triage_data(
        result, recommended_actions(incident=incident, result=result, alerts=alerts)
    )["decision"]["recommended"]
    assert len(listed) == len(load_catalog().get(slug).emergency_actions)
    responder = Client()
    responder.force_login(make_user("rita", roles.RESPONDER))
    for item in listed:
        posted, dialog_needs_approval = button_posts(responder, incident.pk, item["index"])
        assert item["params"] == posted, (slug, item["kind"])
        assert item["needs_labels"] == []
        assert item["requires_approval"] is dialog_needs_approval, (slug, item["kind"])


def test_the_api_lists_the_branch_actions_ready_to_request(prom, post_webhook, make_user):
    prom.answers = NCCL_HUNG
    incident = open_incident(post_webhook, "nccl-hang", severity="warning")  # SEV3
    user = make_user("bot", roles.RESPONDER)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    r = api.get(f"/api/v1/incidents/{incident.pk}/triage/")
    assert r.status_code == 200, r.content
    decision = r.json()["decision"]
    assert decision["branch"] == "hang_nvlink"
    assert decision["recommended_actions"] == ["restart_lws_group", "cordon_node"]  # kept
    restart, cordon = decision["recommended"]
    assert restart == {
        "index": 0,
        "kind": "restart_lws_group",
        "title": restart["title"],
        "why": restart["why"],
        "params": {"namespace": "llm-serving", "lws": "vllm-chat", "pod": "vllm-chat-0"},
        "needs_labels": [],
        "requires_approval": True,  # restarting a group is a risky kind
        "approval_reason": restart["approval_reason"],
        "approval_reason_i18n": restart["approval_reason_i18n"],
    }
    assert restart["approval_reason_i18n"][0]["id"] == "actions.approval.risky"
    assert restart["approval_reason"].startswith("restart_lws_group is a risky action")
    assert cordon["params"]["node"] == "gpu-node-3"

    # One call, as the button: the run is the one the page would have asked for.
    body = {"kind": restart["kind"], "params": restart["params"], "idempotency_key": "bot-run-0001"}
    r = api.post(f"/api/v1/incidents/{incident.pk}/actions/", body, format="json")
    assert r.status_code == 201, r.content
    run = ActionRun.objects.get(pk=r.json()["id"])
    assert run.params == restart["params"]
    assert run.requires_approval is True


def test_a_label_no_alert_carries_is_named_and_approval_left_undecided(
    prom, post_webhook, make_user
):
    prom.answers = NCCL_HUNG
    incident = open_incident(post_webhook, "nccl-hang", node="")  # no node label
    viewer = APIClient()
    user = make_user("vic", roles.VIEWER)
    viewer.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    decision = viewer.get(f"/api/v1/incidents/{incident.pk}/triage/").json()["decision"]
    cordon = next(a for a in decision["recommended"] if a["kind"] == "cordon_node")
    assert cordon["params"]["node"] == "{node}"  # as the dialog shows it: type it in
    assert cordon["needs_labels"] == ["node"]
    assert cordon["requires_approval"] is None
    assert cordon["approval_reason"] == "Not decided: needs label node"


def test_a_branch_without_actions_recommends_nothing(prom, post_webhook, make_user):
    prom.answers = {}  # no data anywhere: the catch-all branch, which recommends nothing
    incident = open_incident(post_webhook, "ttft-spike")
    viewer = APIClient()
    user = make_user("vic", roles.VIEWER)
    viewer.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    decision = viewer.get(f"/api/v1/incidents/{incident.pk}/triage/").json()["decision"]
    assert decision["recommended_actions"] == []
    assert decision["recommended"] == []
