"""Four-eyes follows what a run changes, not the incident it was filed on (issue 11,
finding 1): a responder on a quiet SEV4 incident cannot change an LWS, a ConfigMap or a
node that an open SEV1 incident is about without a commander's approval. No Kubernetes here
(KUBECONFIG unset); the scale-down rule, which needs the LWS's ready groups, is tested
against the simulator in test_scale_down_approval.py."""

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from actions import services
from actions.models import ActionRunStatus
from console import roles
from console.api_tokens.models import ApiToken
from tests.factories import AlertFactory, IncidentFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
S = ActionRunStatus
PROD = "llm-prod"
SCALE = {"namespace": PROD, "lws": "vllm-chat", "replicas_delta": 2}
GATEWAY = {"namespace": PROD, "rate_limit_rps": 60, "rate_limit_burst": 120}
ROUTER = {"namespace": PROD, "revision": "before_incident"}
CORDON = {"node": "gpu-node-3", "reason": "double-bit ECC errors"}


@pytest.fixture
def people(make_user):
    return {
        "rita": make_user("rita", roles.RESPONDER),
        "cara": make_user("cara", roles.COMMANDER),
        "cole": make_user("cole", roles.COMMANDER),
    }


def incident_about(severity="SEV1", status="triggered", **labels):
    """An incident whose alert carries `labels` (as the alert rules set them)."""
    incident = IncidentFactory(severity=severity, status=status, namespace=PROD)
    AlertFactory(
        incident=incident,
        labels={"alertname": "VLLMHighTTFT", "severity": "critical", **labels},
    )
    return incident


def request(incident, actor, kind="scale_lws", params=None, key="key-00000001"):
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=actor,
        kind=kind,
        params=dict(SCALE if params is None else params),
        idempotency_key=key,
    )
    return run


def test_a_sev4_incident_cannot_scale_the_lws_a_sev1_incident_is_about(people):
    sev1 = incident_about(namespace=PROD, lws="vllm-chat", pod="vllm-chat-0")
    quiet = IncidentFactory(severity="SEV4", namespace=PROD)
    run = request(quiet, people["rita"])
    assert run.status == S.AWAITING_APPROVAL
    assert run.requires_approval
    assert f"Incident #{sev1.pk} (SEV1) is about lws vllm-chat in {PROD}." in run.approval_reason
    # The timeline of the incident the run was filed on says why it waits.
    assert f"Incident #{sev1.pk} (SEV1)" in run.events.get().message
    with pytest.raises(PermissionDenied):
        services.action_run_approve(run_id=run.pk, actor=people["rita"])
    services.action_run_approve(run_id=run.pk, actor=people["cole"])
    run.refresh_from_db()
    assert run.status == S.QUEUED
    assert run.decided_by == people["cole"]


def test_a_commander_on_a_sev4_incident_cannot_approve_their_own_run_on_a_sev1_lws(people):
    incident_about(namespace=PROD, lws="vllm-chat")
    run = request(IncidentFactory(severity="SEV4"), people["cara"])
    assert run.status == S.AWAITING_APPROVAL
    with pytest.raises(PermissionDenied, match="someone else with the commander role"):
        services.action_run_approve(run_id=run.pk, actor=people["cara"])
    services.action_run_approve(run_id=run.pk, actor=people["cole"])
    run.refresh_from_db()
    assert run.status == S.QUEUED


@pytest.mark.parametrize(
    ("kind", "params", "labels", "about"),
    [
        # The gateway ConfigMap routes every pool of its namespace: an alert about any of
        # them is about the ConfigMap too.
        (
            "update_gateway_limits",
            GATEWAY,
            {"namespace": PROD, "lws": "vllm-long"},
            f"{PROD}, where configmap llm-gateway-config routes traffic",
        ),
        (
            "rollback_router_config",
            ROUTER,
            {"namespace": PROD, "lws": "vllm-chat"},
            f"{PROD}, where configmap vllm-router-config routes traffic",
        ),
        ("cordon_node", CORDON, {"namespace": PROD, "node": "gpu-node-3"}, "node gpu-node-3"),
    ],
)
def test_configmap_and_node_targets_of_a_sev1_incident_need_approval(
    people, kind, params, labels, about
):
    sev1 = incident_about(**labels)
    run = request(IncidentFactory(severity="SEV4"), people["rita"], kind=kind, params=params)
    assert run.status == S.AWAITING_APPROVAL
    assert f"Incident #{sev1.pk} (SEV1) is about {about}." in run.approval_reason
    with pytest.raises(PermissionDenied):
        services.action_run_approve(run_id=run.pk, actor=people["rita"])
    services.action_run_approve(run_id=run.pk, actor=people["cara"])
    run.refresh_from_db()
    assert run.status == S.QUEUED


@pytest.mark.parametrize(
    "labels",
    [
        {"namespace": PROD, "lws": "vllm-long"},  # another pool
        {"namespace": "llm-staging", "lws": "vllm-chat"},  # the same name elsewhere
        {"namespace": PROD},  # no pool named: not about this LWS
    ],
)
def test_a_sev1_incident_about_something_else_does_not_hold_up_the_run(people, labels):
    incident_about(**labels)
    run = request(IncidentFactory(severity="SEV4"), people["rita"])
    assert run.status == S.QUEUED
    assert run.approval_reason == ""


@pytest.mark.parametrize(
    ("severity", "status"), [("SEV1", "resolved"), ("SEV2", "triggered"), ("SEV1", "mitigated")]
)
def test_only_open_incidents_at_an_approval_severity_count(people, severity, status):
    incident_about(severity=severity, status=status, namespace=PROD, lws="vllm-chat")
    run = request(IncidentFactory(severity="SEV4"), people["rita"])
    # Mitigated is still open (the alert stopped; nobody has closed the incident).
    expected = S.AWAITING_APPROVAL if status == "mitigated" else S.QUEUED
    assert run.status == expected


def test_approval_is_decided_again_at_request_time(people):
    quiet = IncidentFactory(severity="SEV4")
    preview = services.action_run_preview(
        incident_id=quiet.pk, actor=people["rita"], kind="scale_lws", params=SCALE
    )
    assert not preview.requires_approval
    sev1 = incident_about(namespace=PROD, lws="vllm-chat")  # opens after the preview
    run = request(quiet, people["rita"])
    assert run.status == S.AWAITING_APPROVAL
    assert f"Incident #{sev1.pk}" in run.approval_reason


def test_the_incidents_own_severity_and_the_other_incident_are_both_named(people):
    own = incident_about(namespace=PROD, lws="vllm-chat")
    other = incident_about(namespace=PROD, lws="vllm-chat")
    run = request(own, people["rita"])
    assert "The incident is SEV1." in run.approval_reason
    assert f"Incident #{other.pk} (SEV1) is about lws vllm-chat" in run.approval_reason
    assert f"Incident #{own.pk} (SEV1) is about" not in run.approval_reason  # said once


def test_the_preview_page_and_api_say_which_incident_needs_approval(people):
    sev1 = incident_about(namespace=PROD, lws="vllm-chat")
    quiet = IncidentFactory(severity="SEV4")
    page = Client()
    page.force_login(people["rita"])
    form = {
        "kind": "scale_lws",
        "title": "Add groups",
        **{f"param.{k}": v for k, v in SCALE.items()},
    }
    html = page.post(
        f"/runbooks/incidents/{quiet.pk}/actions/preview/", form, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'data-testid="needs-approval"' in html
    assert f"Incident #{sev1.pk} (SEV1) is about lws vllm-chat in {PROD}" in html
    assert "Request approval" in html

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=people['rita'])[1]}")
    body = api.post(
        f"/api/v1/incidents/{quiet.pk}/actions/preview/",
        {"kind": "scale_lws", "params": SCALE},
        format="json",
    ).json()
    assert body["requires_approval"] is True
    assert f"Incident #{sev1.pk} (SEV1) is about lws vllm-chat in {PROD}" in body["approval_reason"]

    # The run keeps the reason: its card (and the run page around it) says it to everyone.
    run = request(quiet, people["rita"])
    card = page.get(f"/runbooks/actions/{run.pk}/card/", HTTP_HX_REQUEST="true").content.decode()
    assert f"Awaiting approval: Incident #{sev1.pk} (SEV1) is about lws vllm-chat" in card
    detail = api.get(f"/api/v1/actions/{run.pk}/").json()
    assert f"Incident #{sev1.pk} (SEV1)" in detail["approval_reason"]


def test_preview_and_request_queries_do_not_grow_with_incidents_or_alerts(people):
    quiet = IncidentFactory(severity="SEV4", status="acknowledged")

    def queries(call):
        with CaptureQueriesContext(connection) as ctx:
            call()
        return len(ctx.captured_queries)

    def preview():
        services.action_run_preview(
            incident_id=quiet.pk, actor=people["rita"], kind="scale_lws", params=SCALE
        )

    keys = iter(f"count-key-{i:03}" for i in range(10))

    def ask():
        run = request(quiet, people["rita"], key=next(keys))
        services.action_run_cancel(run_id=run.pk, actor=people["rita"])  # frees the target

    incident_about(namespace=PROD, lws="vllm-chat")
    preview(), ask()  # warm the permission cache
    one = queries(preview), queries(ask)
    for _ in range(4):
        incident = incident_about(namespace=PROD, lws="vllm-chat")
        for pod in range(3):
            AlertFactory(
                incident=incident, labels={"namespace": PROD, "lws": "vllm-chat", "pod": f"p{pod}"}
            )
    assert (queries(preview), queries(ask)) == one


def test_a_scale_down_whose_ready_groups_cannot_be_read_waits_for_approval(people):
    # No Kubernetes: nobody can tell how far below the ready groups this goes.
    run = request(
        IncidentFactory(severity="SEV4"), people["rita"], params={**SCALE, "replicas_delta": -1}
    )
    assert run.status == S.AWAITING_APPROVAL
    assert "ready groups" in run.approval_reason


def test_many_incidents_about_the_target_are_counted_not_listed(people):
    worst = [incident_about(namespace=PROD, node="gpu-node-3") for _ in range(4)]
    run = request(IncidentFactory(severity="SEV1"), people["rita"], "cordon_node", CORDON)
    reason = run.approval_reason
    assert reason.startswith("cordon_node is a risky action. The incident is SEV1. ")
    assert f"Incident #{worst[0].pk} (SEV1) is about node gpu-node-3." in reason
    assert "2 more open incidents are about it." in reason
    assert len(reason) <= 300
    assert reason.endswith("A commander other than the requester must approve.")
