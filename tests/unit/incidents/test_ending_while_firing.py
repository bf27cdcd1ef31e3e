"""Mitigating or resolving an incident whose alerts still fire asks for a confirmation and
a reason, which the timeline keeps: in the service, the page and the API. Alertmanager's
own "all resolved" still mitigates on its own."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents import services
from incidents.models import Incident
from incidents.services.lifecycle import AlertsFiring
from incidents.transitions import TransitionError
from tests.factories import AlertFactory, IncidentFactory
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def firing_incident(*pods: str, resolved: tuple[str, ...] = ()) -> Incident:
    # SEV3: resolving asks nothing about command (test_command.py covers SEV1/SEV2).
    incident = IncidentFactory(severity="SEV3")
    for pod in pods:
        AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", "pod": pod})
    for pod in resolved:
        AlertFactory(incident=incident, status="resolved", labels={"alertname": "X", "pod": pod})
    return incident


def status_events(incident: Incident) -> list:
    return list(incident.events.filter(kind="status_changed").order_by("id"))


# --- the service ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("service", "role", "verb"),
    [
        ("incident_resolve", roles.COMMANDER, "resolved"),
        ("incident_mitigate", roles.RESPONDER, "mitigated"),
    ],
)
def test_firing_alerts_refuse_the_move_until_confirmed_with_a_reason(
    make_user, service, role, verb
):
    actor = make_user("u", role)
    incident = firing_incident("vllm-chat-0", "vllm-chat-1", resolved=("vllm-chat-9",))
    call = getattr(services, service)
    for kwargs in (
        {},
        {"reason": "traffic drained"},
        {"confirm": True},
        {"confirm": True, "reason": " "},
    ):
        with pytest.raises(AlertsFiring) as info:
            call(incident_id=incident.pk, actor=actor, **kwargs)
        assert info.value.code == "alerts_firing"
        assert info.value.count == 2
        assert sorted(info.value.alerts) == [
            "VLLMHighTTFT (pod=vllm-chat-0)",
            "VLLMHighTTFT (pod=vllm-chat-1)",
        ]
        assert f"Incident #{incident.pk} has 2 alerts still firing: VLLMHighTTFT" in str(info.value)
        assert f"To mark it {verb} anyway" in str(info.value)
    assert Incident.objects.get(pk=incident.pk).status == "triggered"
    assert status_events(incident) == []

    call(incident_id=incident.pk, actor=actor, confirm=True, reason="traffic drained to vllm-long")
    incident.refresh_from_db()
    assert incident.status == verb
    (event,) = status_events(incident)
    assert event.message.startswith(
        f"Incident {verb}: traffic drained to vllm-long (confirmed with 2 alerts still firing: "
    )
    assert event.payload["to"] == verb
    assert event.payload["confirmed_firing"]["count"] == 2
    assert len(event.payload["confirmed_firing"]["alerts"]) == 2
    assert event.actor == actor


def test_a_reason_without_the_confirmation_is_asked_to_confirm(make_user):
    incident = firing_incident("vllm-chat-0")
    with pytest.raises(AlertsFiring, match="confirm and give a reason"):
        services.incident_resolve(
            incident_id=incident.pk, actor=make_user("c", roles.COMMANDER), reason="done"
        )
    with pytest.raises(AlertsFiring, match="give a reason with the confirmation"):
        services.incident_resolve(
            incident_id=incident.pk, actor=make_user("d", roles.COMMANDER), confirm=True
        )


def test_with_no_alert_firing_nothing_is_asked(make_user):
    incident = firing_incident(resolved=("vllm-chat-0",))
    services.incident_resolve(incident_id=incident.pk, actor=make_user("c", roles.COMMANDER))
    (event,) = status_events(incident)
    assert event.message == "Incident resolved."
    assert "confirmed_firing" not in event.payload


def test_many_firing_alerts_are_named_then_counted(make_user):
    incident = firing_incident(*(f"vllm-chat-{i}" for i in range(8)))
    with pytest.raises(AlertsFiring) as info:
        services.incident_mitigate(incident_id=incident.pk, actor=make_user("r"))
    assert len(info.value.alerts) == 5
    assert "8 alerts still firing: " in str(info.value)
    assert " and 3 more." in str(info.value)


def test_the_role_and_the_state_are_checked_before_the_alerts(make_user):
    incident = firing_incident("vllm-chat-0")
    with pytest.raises(PermissionDenied):
        services.incident_resolve(incident_id=incident.pk, actor=make_user("r", roles.RESPONDER))
    done = firing_incident("vllm-chat-1")
    done.status = "resolved"
    done.save()
    with pytest.raises(TransitionError, match="already resolved"):
        services.incident_resolve(incident_id=done.pk, actor=make_user("c", roles.COMMANDER))


def test_alertmanagers_own_resolved_notification_still_mitigates_alone(post_webhook):
    a = alert(pod="vllm-chat-0")
    post_webhook(notification([a]))
    incident = Incident.objects.get()
    resolved = {**a, "status": "resolved", "endsAt": a["startsAt"].replace("08:00", "08:05")}
    assert post_webhook(notification([resolved])).status_code == 200
    incident.refresh_from_db()
    assert incident.status == "mitigated"
    (event,) = status_events(incident)
    assert event.actor is None
    assert "confirmed_firing" not in event.payload


# --- the API ---------------------------------------------------------------------------
def api_as(make_user, name: str, role: str) -> APIClient:
    client = APIClient()
    user = make_user(name, role)
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


@pytest.mark.parametrize(
    ("action", "role"), [("resolve", roles.COMMANDER), ("mitigate", roles.RESPONDER)]
)
def test_api_answers_409_alerts_firing_then_takes_the_confirmation(make_user, action, role):
    incident = firing_incident("vllm-chat-0")
    client = api_as(make_user, "u", role)
    url = f"/api/v1/incidents/{incident.pk}/{action}/"
    refused = client.post(url, {"reason": "looks fine"}, format="json")
    assert refused.status_code == 409
    assert refused.json()["code"] == "alerts_firing"
    assert "VLLMHighTTFT (pod=vllm-chat-0)" in refused.json()["detail"]
    no_reason = client.post(url, {"confirm": True}, format="json")
    assert (no_reason.status_code, no_reason.json()["code"]) == (409, "alerts_firing")
    assert client.post(url, {"confirm": "maybe"}, format="json").status_code == 400
    r = client.post(url, {"confirm": True, "reason": "alert lags the fix"}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == incident.__class__.objects.get(pk=incident.pk).status
    (event,) = status_events(incident)
    assert ": alert lags the fix (confirmed with 1 alert still firing" in event.message


def test_the_schema_documents_confirm_and_the_409(make_user, client):
    client.force_login(make_user("vic", roles.VIEWER))
    schema = client.get("/api/schema/?format=json").json()
    for action in ("mitigate", "resolve"):
        op = schema["paths"][f"/api/v1/incidents/{{id}}/{action}/"]["post"]
        assert "alerts_firing" in op["responses"]["409"]["description"]
        ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert {"reason", "confirm"} <= set(body["properties"])


# --- the page --------------------------------------------------------------------------
def test_the_button_opens_a_confirm_form_whose_answer_resolves(client, make_user):
    incident = firing_incident("vllm-chat-0", "vllm-chat-1")
    client.force_login(make_user("cara", roles.COMMANDER))
    page = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert "2 alerts still firing: you will be asked to confirm" in page
    assert '<div id="ending-confirm"></div>' in page

    url = reverse("incidents:resolve", args=[incident.pk])
    asked = client.post(url, {"reason": "queue drained"}, **HTMX)
    assert asked.status_code == 409  # swapped by the page's htmx config
    assert asked.headers["HX-Retarget"] == "#ending-confirm"
    form = asked.content.decode()
    assert 'data-testid="ending-confirm"' in form
    assert '<input type="hidden" name="confirm" value="1">' in form
    assert 'name="reason" maxlength="2000" required value="queue drained"' in form
    assert "VLLMHighTTFT (pod=vllm-chat-0)" in form
    assert "Resolve anyway" in form
    assert Incident.objects.get(pk=incident.pk).status == "triggered"

    done = client.post(url, {"confirm": "1", "reason": "queue drained"}, **HTMX)
    assert done.status_code == 200
    body = done.content.decode()
    assert 'id="incident-header"' in body
    assert '<div id="ending-confirm" hx-swap-oob="innerHTML"></div>' in body
    incident.refresh_from_db()
    assert incident.status == "resolved"
    (event,) = status_events(incident)
    assert event.message.startswith(
        "Incident resolved: queue drained (confirmed with 2 alerts still firing"
    )


def test_without_htmx_the_confirmation_is_a_page_and_mitigate_works_the_same(client, make_user):
    incident = firing_incident("vllm-chat-0")
    client.force_login(make_user("rita", roles.RESPONDER))
    url = reverse("incidents:mitigate", args=[incident.pk])
    asked = client.post(url, {"reason": ""})
    assert asked.status_code == 409
    page = asked.content.decode()
    assert "<html" in page
    assert "Mitigate anyway" in page
    assert f'action="{url}"' in page
    again = client.post(url, {"confirm": "1", "reason": ""})  # confirmed without a reason
    assert again.status_code == 409
    assert "give a reason with the confirmation" in again.content.decode()
    assert client.post(url, {"confirm": "1", "reason": "scaled out"}).status_code == 302
    assert Incident.objects.get(pk=incident.pk).status == "mitigated"
