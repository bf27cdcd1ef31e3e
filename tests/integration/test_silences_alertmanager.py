"""Silences from the console against the real Alertmanager (the `alertmanager` fixture):
its alerts become an incident through the webhook, a commander silences one alert and
the whole group through the API and the page, Alertmanager suppresses them, the list
shows who and until when, one is expired early, and every step is on the timeline.
Alertmanager unreachable: a clear answer and nothing half-done."""

from datetime import UTC, datetime, timedelta

import pytest
import requests
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident, TimelineEvent
from incidents.silences import services as silence_services
from tests.factories import AlertFactory, IncidentFactory
from tests.helpers import free_port, wait_for
from tests.payloads import stalled_engine_alert

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    pytest.mark.django_db(transaction=True),
]
PODS = ("vllm-chat-3-0", "vllm-chat-3-1")


@pytest.fixture
def incident(alertmanager, settings):
    """An incident opened by Alertmanager's own notification, two alerts firing; the
    console's silences go to the same Alertmanager."""
    settings.ALERTMANAGER_URL = alertmanager
    starts = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    r = requests.post(
        alertmanager + "/api/v2/alerts",
        json=[stalled_engine_alert(p, starts) for p in PODS],
        timeout=5,
    )
    assert r.status_code == 200, r.text
    found = wait_for(
        lambda: Incident.objects.filter(alerts__isnull=False).distinct().first(),
        timeout=30,
        what="Alertmanager to notify the console",
    )
    wait_for(lambda: found.alerts.count() == 2, timeout=15, what="both alerts")
    return found


def api_as(make_user, name: str, role: str) -> APIClient:
    client = APIClient()
    user = make_user(name, role)
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


def am_silence(base: str, silence_id: str) -> dict:
    r = requests.get(f"{base}/api/v2/silence/{silence_id}", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def am_silences(base: str) -> list[dict]:
    return requests.get(base + "/api/v2/silences", timeout=5).json()


def post_silence(base: str, matcher: dict) -> str:
    """A silence someone made in Alertmanager itself, for an hour; its id."""
    body = {
        "matchers": [{"isRegex": False, **matcher}],
        "startsAt": timezone.now().isoformat(),
        "endsAt": (timezone.now() + timedelta(hours=1)).isoformat(),
        "createdBy": "bob@example.com",
        "comment": "maintenance",
    }
    r = requests.post(base + "/api/v2/silences", json=body, timeout=5)
    assert r.status_code == 200, r.text
    return r.json()["silenceID"]


def suppressed_by(base: str, pod: str) -> list[str]:
    alerts = requests.get(
        base + "/api/v2/alerts", params={"filter": f'pod="{pod}"'}, timeout=5
    ).json()
    return [
        s for a in alerts if a["status"]["state"] == "suppressed" for s in a["status"]["silencedBy"]
    ]


def test_silence_one_alert_and_the_group_list_them_and_expire_one(
    alertmanager, incident, make_user
):
    commander = api_as(make_user, "cmd", roles.COMMANDER)
    url = f"/api/v1/incidents/{incident.pk}/silences/"
    first_pod = incident.alerts.get(labels__pod=PODS[0])

    r = commander.post(url, {"alert": first_pod.pk, "duration_minutes": 30}, format="json")
    assert r.status_code == 201, r.content
    (one,) = r.json()
    assert one["created_by"] == "cmd"
    assert one["comment"] == (f"#{incident.pk} {incident.title} - silenced from the console by cmd")
    assert {(m["name"], m["value"]) for m in one["matchers"]} == set(first_pod.labels.items())
    in_am = am_silence(alertmanager, one["id"])
    assert in_am["status"]["state"] == "active"
    assert in_am["createdBy"] == "cmd"
    assert all(m["isEqual"] and not m["isRegex"] for m in in_am["matchers"])
    ends = datetime.fromisoformat(in_am["endsAt"].replace("Z", "+00:00"))
    assert timedelta(minutes=29) < ends - timezone.now() <= timedelta(minutes=30)
    # Alertmanager itself now holds back that alert, and only that one.
    wait_for(
        lambda: suppressed_by(alertmanager, PODS[0]) == [one["id"]],
        timeout=15,
        what="Alertmanager to mark the alert silenced",
    )
    assert suppressed_by(alertmanager, PODS[1]) == []

    r = commander.post(url, {"comment": "draining the pool"}, format="json")
    assert r.status_code == 201, r.content
    (group,) = r.json()
    assert group["comment"] == "draining the pool"
    assert "pod" not in {m["name"] for m in group["matchers"]}
    assert {"alertname", "lws", "namespace"} <= {m["name"] for m in group["matchers"]}
    assert group["alerts_matched"] == 2
    ends = datetime.fromisoformat(group["ends_at"].replace("Z", "+00:00"))
    assert timedelta(minutes=119) < ends - timezone.now() <= timedelta(hours=2)  # default 2h

    # Someone else's silences: one on the same LWS covers the incident, one does not.
    theirs, unrelated = (
        post_silence(alertmanager, {"name": "lws", "value": "vllm-.*", "isRegex": True}),
        post_silence(alertmanager, {"name": "alertname", "value": "GPUECCErrors"}),
    )
    viewer = api_as(make_user, "vic", roles.VIEWER)
    listed = viewer.get(url).json()
    by_id = {s["id"]: s for s in listed}
    assert set(by_id) == {one["id"], group["id"], theirs}
    assert by_id[one["id"]]["created_here"]
    assert by_id[group["id"]]["created_here"]
    assert not by_id[theirs]["created_here"]
    assert by_id[theirs]["created_by"] == "bob@example.com"
    assert (by_id[one["id"]]["alerts_matched"], by_id[theirs]["alerts_matched"]) == (1, 2)
    assert [s["ends_at"] for s in listed] == sorted(s["ends_at"] for s in listed)

    r = commander.delete(f"{url}{one['id']}/")
    assert r.status_code == 200, r.content
    assert r.json()["state"] == "expired"
    assert am_silence(alertmanager, one["id"])["status"]["state"] == "expired"
    assert one["id"] not in {s["id"] for s in viewer.get(url).json()}
    again = commander.delete(f"{url}{one['id']}/")
    assert (again.status_code, again.json()["code"]) == (409, "unchanged")
    assert commander.delete(f"{url}{unrelated}/").status_code == 404
    assert am_silence(alertmanager, unrelated)["status"]["state"] == "active"
    # Someone else's silence is expired only once confirmed, after seeing whose it is.
    asked = commander.delete(f"{url}{theirs}/")
    assert (asked.status_code, asked.json()["code"]) == (409, "confirmation_required"), asked
    assert asked.json()["silence"]["created_by"] == "bob@example.com"
    assert asked.json()["silence"]["matchers"][0]["value"] == "vllm-.*"
    assert am_silence(alertmanager, theirs)["status"]["state"] == "active"
    r = commander.delete(f"{url}{theirs}/?confirm=true")
    assert r.status_code == 200, r.content
    assert am_silence(alertmanager, theirs)["status"]["state"] == "expired"

    events = list(
        TimelineEvent.objects.filter(incident=incident, kind__startswith="silence_").order_by("id")
    )
    assert [(e.kind, e.payload["silence_id"], e.actor.username) for e in events] == [
        ("silence_created", one["id"], "cmd"),
        ("silence_created", group["id"], "cmd"),
        ("silence_expired", one["id"], "cmd"),
        ("silence_expired", theirs, "cmd"),
    ]
    assert "for 30m" in events[0].message
    assert "the whole group" in events[1].message
    assert 'alertname="VLLMEngineStalled"' in events[1].message
    assert 'namespace="llm-serving"' in events[1].message
    assert [e.payload["confirmed"] for e in events[2:]] == [False, True]


def test_a_group_sharing_only_severity_silences_its_alerts_and_nothing_else(
    alertmanager, settings, make_user
):
    """Issue 23: one group, alerts in several namespaces sharing only severity. The
    silences Alertmanager gets hold back exactly the incident's alerts."""
    settings.ALERTMANAGER_URL = alertmanager
    incident = IncidentFactory()
    mine = [
        {"alertname": "KVCacheFull", "namespace": "team-a", "severity": "critical"},
        {"alertname": "KVCacheFull", "namespace": "team.a2", "severity": "critical"},
        {"alertname": "GPUECCErrors", "namespace": "team-b", "severity": "critical"},
    ]
    for labels in mine:
        AlertFactory(incident=incident, alertname=labels["alertname"], labels=labels)
    commander = api_as(make_user, "cmd", roles.COMMANDER)

    r = commander.post(
        f"/api/v1/incidents/{incident.pk}/silences/", {"duration_minutes": 4320}, format="json"
    )

    assert r.status_code == 201, r.content
    made = {s["id"] for s in r.json()}
    for silence in am_silences(alertmanager):
        names = {m["name"] for m in silence["matchers"]}
        assert {"alertname", "namespace", "severity"} <= names, silence["matchers"]
    # Alertmanager's own verdict: the incident's alerts are held back, the rest are not.
    outside = [
        {"alertname": "VLLMEngineStalled", "namespace": "team-c", "severity": "critical"},
        {"alertname": "KVCacheFull", "namespace": "teamXa2", "severity": "critical"},
        {"alertname": "KVCacheFull", "namespace": "team-b", "severity": "critical"},
    ]
    starts = timezone.now().isoformat()
    alerts = [{"labels": {**labels, "pod": f"p{n}"}, "startsAt": starts}
              for n, labels in enumerate(mine + outside)]  # fmt: skip
    posted = requests.post(alertmanager + "/api/v2/alerts", json=alerts, timeout=5)
    assert posted.status_code == 200, posted.text

    def verdicts():
        found = requests.get(alertmanager + "/api/v2/alerts", timeout=5).json()
        if len(found) < len(alerts) or any(a["status"]["state"] == "unprocessed" for a in found):
            return None
        return {a["labels"]["pod"]: set(a["status"]["silencedBy"]) for a in found}

    by_pod = wait_for(verdicts, timeout=15, what="Alertmanager to process the alerts")
    assert all(by_pod[f"p{n}"] & made for n in range(len(mine))), by_pod
    assert not any(by_pod[f"p{n}"] for n in range(len(mine), len(alerts))), by_pod


def test_a_responder_may_not_silence_and_alertmanager_is_left_alone(
    alertmanager, incident, make_user
):
    responder = api_as(make_user, "rita", roles.RESPONDER)
    r = responder.post(f"/api/v1/incidents/{incident.pk}/silences/", {}, format="json")
    assert r.status_code == 403
    assert am_silences(alertmanager) == []
    assert not TimelineEvent.objects.filter(kind="silence_created").exists()


def test_the_page_silences_lists_and_expires(alertmanager, incident, client, make_user):
    client.force_login(make_user("cmd", roles.COMMANDER))
    page = client.get(reverse("incidents:detail", args=[incident.pk])).content.decode()
    assert 'id="incident-silences"' in page
    assert f"#{incident.pk} {incident.title} - silenced from the console by cmd" in page
    listing = reverse("incidents:silences", args=[incident.pk])
    assert "No active silence." in client.get(listing).content.decode()

    htmx = {"HTTP_HX_REQUEST": "true"}
    r = client.post(
        reverse("incidents:silence-create", args=[incident.pk]),
        {"scope": "group", "duration": "60m", "comment": ""},
        **htmx,
    )
    assert r.status_code == 200, r.content
    body = r.content.decode()
    assert "Silenced in Alertmanager until" in body
    assert 'id="silence-list" hx-swap-oob="innerHTML"' in body
    silence = am_silences(alertmanager)[0]
    assert silence["createdBy"] == "cmd"
    assert f'data-silence-id="{silence["id"]}"' in body
    assert "incident-changed" in r.headers["HX-Trigger"]

    r = client.post(reverse("incidents:silence-expire", args=[incident.pk, silence["id"]]), **htmx)
    assert r.status_code == 200
    assert "expired" in r.content.decode()
    assert "No active silence." in r.content.decode()
    assert am_silence(alertmanager, silence["id"])["status"]["state"] == "expired"


def test_a_timeline_that_cannot_be_written_takes_the_silence_back(
    alertmanager, incident, make_user, monkeypatch
):
    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(silence_services, "incident_event_record", broken)
    commander = make_user("cmd", roles.COMMANDER)
    with pytest.raises(RuntimeError):
        silence_services.incident_silence_create(incident_id=incident.pk, actor=commander)
    (silence,) = am_silences(alertmanager)
    assert silence["status"]["state"] == "expired"  # created, then taken back
    assert not TimelineEvent.objects.filter(kind="silence_created").exists()


def test_alertmanager_unreachable_is_a_clear_503_and_nothing_is_recorded(
    settings, make_user, client
):
    alert = AlertFactory()
    settings.ALERTMANAGER_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    commander = api_as(make_user, "cmd", roles.COMMANDER)
    url = f"/api/v1/incidents/{alert.incident_id}/silences/"
    for response in (
        commander.post(url, {"alert": alert.pk}, format="json"),
        commander.get(url),
        commander.delete(f"{url}00000000-0000-4000-8000-000000000000/"),
    ):
        assert response.status_code == 503, response.content
        assert response.json()["code"] == "alertmanager_unavailable"
        assert response.json()["detail"] == (
            f"Alertmanager at {settings.ALERTMANAGER_URL} refused the connection."
        )
    assert not TimelineEvent.objects.filter(kind__startswith="silence_").exists()

    client.force_login(make_user("cara", roles.COMMANDER))
    panel = client.get(reverse("incidents:silences", args=[alert.incident_id]))
    assert panel.status_code == 200
    assert "refused the connection" in panel.content.decode()
    r = client.post(
        reverse("incidents:silence-create", args=[alert.incident_id]),
        {"scope": f"alert-{alert.pk}", "duration": "120m", "comment": "typed"},
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 409
    body = r.content.decode()
    assert "refused the connection" in body
    assert 'value="typed"' in body  # what was typed is kept
    assert not TimelineEvent.objects.filter(kind__startswith="silence_").exists()


def test_alertmanager_refusing_is_named_with_its_own_words(alertmanager, settings):
    from incidents.silences import client as silences

    settings.ALERTMANAGER_URL = alertmanager
    now = timezone.now()
    with pytest.raises(silences.AlertmanagerError) as info:
        silences.silence_post(
            matchers=[silences.Matcher("pod", "")],  # matches every alert: Alertmanager says no
            starts_at=now,
            ends_at=now + timedelta(hours=1),
            created_by="cara",
            comment="",
        )
    assert info.value.code == "alertmanager_refused"
    assert str(info.value) == (
        f"Alertmanager at {alertmanager} refused to create the silence (400): silence "
        "invalid: at least one matcher must not match the empty string"
    )
    assert am_silences(alertmanager) == []
