"""Action pages and partials: the runs panel on the incident page, the confirmation dialog
(parameters filled from the alert's labels), approve/cancel buttons per role, the audit list
and a run's page; escaping; query counts."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from actions import services
from actions.models import ActionRun
from console import roles
from tests.factories import IncidentFactory
from tests.payloads import alert, notification

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
HTMX = {"HTTP_HX_REQUEST": "true"}
SCALE = {"namespace": "llm-serving", "lws": "vllm-chat", "replicas_delta": 2}


def login(make_user, name, role) -> Client:
    client = Client()
    user = make_user(name, role)
    client.force_login(user)
    client.user = user
    return client


def test_empty_panel_says_where_actions_start(make_user):
    incident = IncidentFactory(severity="SEV3")
    rita = login(make_user, "rita", roles.RESPONDER)
    html = rita.get(f"/runbooks/incidents/{incident.pk}/actions/", **HTMX).content.decode()
    assert 'data-testid="actions-empty"' in html
    assert "Fix step" in html
    vic = login(make_user, "vic", roles.VIEWER)
    html = vic.get(f"/runbooks/incidents/{incident.pk}/actions/", **HTMX).content.decode()
    assert "a responder starts them" in html


def test_confirm_dialog_fills_parameters_from_the_alert_labels(make_user, post_webhook):
    r = post_webhook(notification([alert(pod="vllm-chat-1")]))
    incident_id = r.json()["incidents"][0]
    rita = login(make_user, "rita", roles.RESPONDER)
    html = rita.get(
        f"/runbooks/incidents/{incident_id}/actions/confirm/?action=0", **HTMX
    ).content.decode()
    assert 'data-testid="action-dialog"' in html
    assert 'name="param.lws" value="vllm-chat"' in html
    assert 'name="param.replicas_delta" value="2"' in html
    assert "Kubernetes is not configured" in html  # no cluster here: said, not hidden
    key = re.search(r'name="idempotency_key" value="([0-9a-f]{32})"', html).group(1)
    form = {
        "kind": "scale_lws",
        "title": "Add two groups",
        "idempotency_key": key,
        "param.namespace": "llm-serving",
        "param.lws": "vllm-chat",
        "param.replicas_delta": "2",
    }
    url = f"/runbooks/incidents/{incident_id}/actions/request/"
    first = rita.post(url, form, **HTMX)
    second = rita.post(url, form, **HTMX)  # a double click
    assert first.status_code == second.status_code == 200
    assert first["HX-Retarget"] == "#runbook-actions"
    assert ActionRun.objects.count() == 1
    run = ActionRun.objects.get()
    assert run.params == SCALE
    assert run.requires_approval
    assert f'id="action-run-{run.pk}"' in first.content.decode()
    bad = rita.post(
        url, {**form, "idempotency_key": "x" * 32, "param.replicas_delta": "ten"}, **HTMX
    )
    text = bad.content.decode()
    assert 'data-testid="dialog-error"' in text
    assert "replicas_delta" in text
    assert 'value="ten"' in text  # what was typed stays in the form


def test_buttons_follow_roles_and_the_card_polls_only_while_running(make_user):
    incident = IncidentFactory(severity="SEV1")
    rita = login(make_user, "rita", roles.RESPONDER)
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=rita.user,
        kind="scale_lws",
        params=SCALE,
        idempotency_key="page-key-01",
    )
    cara = login(make_user, "cara", roles.COMMANDER)
    card = f"/runbooks/actions/{run.pk}/card/"
    as_cara = cara.get(card, **HTMX).content.decode()
    as_rita = rita.get(card, **HTMX).content.decode()
    assert "Approve</button>" in as_cara
    assert "Approve</button>" not in as_rita
    assert "someone else with the commander role" in as_rita
    assert "Cancel</button>" in as_rita
    assert "every 2s" not in as_cara  # awaiting a person: no fast poll wiping a typed note
    r = cara.post(f"/runbooks/actions/{run.pk}/approve/", {"note": "<b>go</b>"}, **HTMX)
    html = r.content.decode()
    assert r.status_code == 200
    assert 'data-status="queued"' in html
    assert "every 2s" in html
    assert "&lt;b&gt;go&lt;/b&gt;" in html
    assert "<b>go</b>" not in html
    services.action_run_cancel(run_id=run.pk, actor=cara.user)
    html = rita.get(card, **HTMX).content.decode()
    assert 'data-status="cancelled"' in html
    assert "every 2s" not in html
    vic = login(make_user, "vic", roles.VIEWER)
    assert vic.post(f"/runbooks/actions/{run.pk}/approve/", **HTMX).status_code == 403


def test_audit_list_filters_empty_states_and_run_page(make_user):
    rita = login(make_user, "rita", roles.RESPONDER)
    html = rita.get("/runbooks/actions/").content.decode()
    assert "No action has been run yet" in html
    incident = IncidentFactory(severity="SEV3", title="<script>alert(1)</script>")
    run, _created = services.action_run_request(
        incident_id=incident.pk,
        actor=rita.user,
        kind="scale_lws",
        params=SCALE,
        idempotency_key="page-key-02",
    )
    html = rita.get("/runbooks/actions/?status=queued").content.decode()
    assert f"#{run.pk}" in html
    assert "<script>alert(1)" not in html
    html = rita.get("/runbooks/actions/?kind=cordon_node").content.decode()
    assert "No run matches these filters" in html
    page = rita.get(f"/runbooks/actions/{run.pk}/").content.decode()
    assert 'data-testid="audit"' in page
    assert "Requested" in page
    assert rita.get("/runbooks/actions/99999/").status_code == 404
    assert Client().get("/runbooks/actions/").status_code == 302  # login first


def test_panel_and_list_queries_do_not_grow_with_runs(make_user):
    rita = login(make_user, "rita", roles.RESPONDER)
    incident = IncidentFactory(severity="SEV3")

    def count(url):
        with CaptureQueriesContext(connection) as ctx:
            assert rita.get(url, **HTMX).status_code == 200
        return len(ctx.captured_queries)

    def add(i):
        services.action_run_request(
            incident_id=incident.pk,
            actor=rita.user,
            kind="scale_lws",
            params={**SCALE, "lws": f"pool-{i}"},
            idempotency_key=f"count-key-{i:03}",
        )

    add(0)
    panel, listing = (
        count(f"/runbooks/incidents/{incident.pk}/actions/"),
        count("/runbooks/actions/"),
    )
    for i in range(1, 8):
        add(i)
    assert count(f"/runbooks/incidents/{incident.pk}/actions/") == panel
    assert count("/runbooks/actions/") == listing
