"""A silence made from an incident never reaches beyond it (issue 23, finding 1): group
silences are scoped by alertname and namespace, a silence that would cover another open
incident's firing alerts is refused (409, naming them), and expiring a silence the
console did not make, or one broader than the incident, takes an explicit confirmation.

Alertmanager here is a local server speaking its v2 silences API (alertmanager_fake);
the real one is in tests/integration/test_silences_alertmanager.py."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from console import roles
from console.errors import DomainError
from incidents.models import TimelineEvent
from incidents.silences import client as silences
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory
from tests.unit.incidents.alertmanager_fake import FakeAlertmanager

pytestmark = pytest.mark.django_db


@pytest.fixture
def am(settings):
    fake = FakeAlertmanager()
    settings.ALERTMANAGER_URL = fake.url
    yield fake
    fake.close()


@pytest.fixture
def boss(make_user):
    client = APIClient()
    client.force_login(make_user("cara", roles.COMMANDER))  # the API takes the session too
    return client


def alert(incident, **labels):
    return AlertFactory(incident=incident, alertname=labels["alertname"], labels=labels)


def posted(am: FakeAlertmanager) -> list[silences.Silence]:
    return [s for s in silences.silences_fetch() if s.is_active]


def url(incident) -> str:
    return f"/api/v1/incidents/{incident.pk}/silences/"


# --- the matchers of a group silence --------------------------------------------------
def test_a_group_sharing_only_severity_does_not_mute_the_fleet(am, boss):
    incident = IncidentFactory()
    kv = {"alertname": "KVCacheFull", "namespace": "team-a", "severity": "critical"}
    ecc = {"alertname": "GPUECCErrors", "namespace": "team-b", "severity": "critical"}
    alert(incident, **kv, pod="vllm-chat-0")
    alert(incident, **ecc, node="gpu-7")

    r = boss.post(url(incident), {"duration_minutes": 72 * 60}, format="json")

    assert r.status_code == 201, r.content
    made = posted(am)
    assert made, "no silence was created"
    for s in made:
        names = {m.name for m in s.matchers}
        assert {"alertname", "namespace"} <= names, s.matchers_text()
        assert names != {"severity"}
    # Every alert of the incident is silenced; nothing outside it is.
    for labels in ({**kv, "pod": "vllm-chat-0"}, {**ecc, "node": "gpu-7"}):
        assert any(s.matches(labels) for s in made)
    outside = [
        {"alertname": "VLLMEngineStalled", "namespace": "team-c", "severity": "critical"},
        {**kv, "namespace": "team-b"},  # the pairs are not crossed
        {**ecc, "namespace": "team-a"},
    ]
    for labels in outside:
        assert not any(s.matches(labels) for s in made), labels
    assert {s["id"] for s in r.json()} == {s.id for s in made}


def test_one_alertname_in_several_namespaces_is_one_anchored_escaped_regex(am, boss):
    incident = IncidentFactory()
    for ns in ("team.b", "team-a"):
        alert(incident, alertname="KVCacheFull", namespace=ns, severity="critical", lws="x")

    r = boss.post(url(incident), {}, format="json")

    assert r.status_code == 201, r.content
    (made,) = posted(am)
    by_name = {m.name: m for m in made.matchers}
    assert str(by_name["alertname"]) == 'alertname="KVCacheFull"'
    assert str(by_name["namespace"]) == r'namespace=~"team-a|team\.b"'
    assert str(by_name["lws"]) == 'lws="x"'
    ns = by_name["namespace"]
    assert ns.matches({"namespace": "team.b"})
    assert not ns.matches({"namespace": "teamXb"})  # the dot is escaped
    assert not ns.matches({"namespace": "team-a-prod"})  # anchored
    assert "severity" not in by_name or by_name["severity"].value == "critical"


def test_a_silence_inside_the_incident_is_created_and_its_matchers_are_on_the_timeline(am, boss):
    incident = IncidentFactory()
    alert(incident, alertname="KVCacheFull", namespace="team-a", severity="critical")
    neighbour = IncidentFactory()  # same alert, another namespace: not covered
    alert(neighbour, alertname="KVCacheFull", namespace="team-b", severity="critical")

    r = boss.post(url(incident), {}, format="json")

    assert r.status_code == 201, r.content
    (made,) = posted(am)
    event = TimelineEvent.objects.get(incident=incident, kind="silence_created")
    assert event.payload["silence_id"] == made.id
    assert 'alertname="KVCacheFull"' in event.message
    assert 'namespace="team-a"' in event.message


# --- refused when it would cover another open incident ------------------------------------
def test_a_silence_covering_another_open_incidents_alerts_is_refused_naming_it(am, boss):
    incident = IncidentFactory()
    labels = {"alertname": "KVCacheFull", "namespace": "team-a", "severity": "critical"}
    alert(incident, **labels, pod="p-0")
    alert(incident, **labels, pod="p-1")  # the group's silence leaves out the pod
    other = IncidentFactory(title="KV cache full on the other pool")
    alert(other, **labels, pod="p-9")
    closed = IncidentFactory(status="resolved", title="Closed long ago")
    alert(closed, **labels, pod="p-8")
    quiet = IncidentFactory(title="Its alert has resolved")
    AlertFactory(incident=quiet, status="resolved", labels={**labels, "pod": "p-7"})

    r = boss.post(url(incident), {}, format="json")

    assert r.status_code == 409, r.content
    body = r.json()
    assert body["code"] == "covers_other_incidents"
    assert f"#{other.pk} KV cache full on the other pool" in body["detail"]
    assert "Closed long ago" not in body["detail"]
    assert "Its alert has resolved" not in body["detail"]
    assert [i["id"] for i in body["incidents"]] == [other.pk]
    assert ("POST", "/api/v2/silences") not in am.requests
    assert not TimelineEvent.objects.filter(kind="silence_created").exists()


def test_the_overlap_check_takes_the_same_queries_for_1_or_30_other_incidents(am, make_user):
    from incidents.silences import services

    cara = make_user("cara", roles.COMMANDER)
    labels = {"alertname": "KVCacheFull", "namespace": "team-a", "severity": "critical"}

    def refused_queries(n: int) -> int:
        incident = IncidentFactory()
        alert(incident, **labels, pod="mine")
        alert(incident, **labels, pod="mine-too")
        for i in range(n):
            alert(IncidentFactory(), **labels, pod=f"p-{i}")
        actor = type(cara).objects.get(pk=cara.pk)  # no permission cache carried over
        with CaptureQueriesContext(connection) as queries, pytest.raises(DomainError) as info:
            services.incident_silence_create(incident_id=incident.pk, actor=actor)
        assert info.value.code == "covers_other_incidents", info.value
        return len(queries)

    small, large = refused_queries(1), refused_queries(30)
    assert small == large
    assert large <= 8


def test_the_page_shows_the_refusal_naming_the_other_incident(am, client, make_user):
    incident = IncidentFactory()
    labels = {"alertname": "KVCacheFull", "namespace": "team-a", "severity": "critical"}
    alert(incident, **labels, pod="p-0")
    alert(incident, **labels, pod="p-1")
    other = IncidentFactory(title="The other pool")
    alert(other, **labels, pod="p-2")
    client.force_login(make_user("cara", roles.COMMANDER))
    r = client.post(
        reverse("incidents:silence-create", args=[incident.pk]),
        {"scope": "group", "duration": "60m"},
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 409
    assert f"#{other.pk} The other pool" in r.content.decode()


# --- expiring takes a confirmation when the silence is not plainly ours ----------------------
def test_expiring_a_silence_made_elsewhere_needs_a_confirmation(am, boss):
    incident = IncidentFactory()
    alert(incident, alertname="KVCacheFull", namespace="team-a", severity="critical")
    theirs = am.add(
        [{"name": "alertname", "value": "KVCacheFull"}, {"name": "namespace", "value": "team-a"}],
        created_by="bob@example.com",
        comment="maintenance window",
    )

    r = boss.delete(f"{url(incident)}{theirs}/")

    assert r.status_code == 409, r.content
    body = r.json()
    assert body["code"] == "confirmation_required"
    assert body["silence"]["created_by"] == "bob@example.com"
    assert body["silence"]["comment"] == "maintenance window"
    assert {(m["name"], m["value"]) for m in body["silence"]["matchers"]} == {
        ("alertname", "KVCacheFull"),
        ("namespace", "team-a"),
    }
    assert "bob@example.com" in body["detail"]
    assert am.silences[theirs]["status"]["state"] == "active"
    assert not TimelineEvent.objects.filter(kind="silence_expired").exists()

    r = boss.delete(f"{url(incident)}{theirs}/?confirm=true")

    assert r.status_code == 200, r.content
    assert am.silences[theirs]["status"]["state"] == "expired"
    event = TimelineEvent.objects.get(incident=incident, kind="silence_expired")
    assert event.payload["confirmed"] is True
    assert "not_created_here" in event.payload["confirmed_because"]
    assert "Confirmed by cara: it was not created from this incident" in event.message


def test_expiring_a_broad_silence_even_one_from_this_incident_needs_a_confirmation(am, boss):
    incident = IncidentFactory()
    alert(incident, alertname="KVCacheFull", namespace="team-a", severity="critical")
    broad = am.add([{"name": "severity", "value": "critical"}], created_by="cara")
    TimelineEventFactory(
        incident=incident,
        kind="silence_created",
        payload={"silence_id": broad, "created_by": "cara", "comment": ""},
    )

    r = boss.delete(f"{url(incident)}{broad}/")

    assert r.status_code == 409, r.content
    assert r.json()["code"] == "confirmation_required"
    assert r.json()["silence"]["matchers"][0]["value"] == "critical"
    assert am.silences[broad]["status"]["state"] == "active"
    r = boss.delete(f"{url(incident)}{broad}/?confirm=true")
    assert r.status_code == 200, r.content
    event = TimelineEvent.objects.get(incident=incident, kind="silence_expired")
    assert event.payload["confirmed_because"] == ["broader_than_incident"]
    assert boss.delete(f"{url(incident)}{broad}/?confirm=maybe").status_code == 400


def test_expiring_the_consoles_own_precise_silence_needs_no_confirmation(am, boss):
    incident = IncidentFactory()
    alert(incident, alertname="KVCacheFull", namespace="team-a", severity="critical")
    (made,) = boss.post(url(incident), {}, format="json").json()
    r = boss.delete(f"{url(incident)}{made['id']}/")
    assert r.status_code == 200, r.content
    event = TimelineEvent.objects.get(incident=incident, kind="silence_expired")
    assert event.payload["confirmed"] is False


def test_a_silence_whose_author_changed_in_alertmanager_needs_a_confirmation(am, boss):
    incident = IncidentFactory()
    alert(incident, alertname="KVCacheFull", namespace="team-a", severity="critical")
    (made,) = boss.post(url(incident), {}, format="json").json()
    am.silences[made["id"]]["createdBy"] = "mallory"  # edited in Alertmanager's UI
    r = boss.delete(f"{url(incident)}{made['id']}/")
    assert (r.status_code, r.json()["code"]) == (409, "confirmation_required")


def test_the_page_asks_for_the_confirmation_with_matchers_and_author(am, client, make_user):
    incident = IncidentFactory()
    alert(incident, alertname="KVCacheFull", namespace="team-a", severity="critical")
    theirs = am.add([{"name": "alertname", "value": "KVCacheFull"}], created_by="bob@example.com")
    client.force_login(make_user("cara", roles.COMMANDER))
    expire = reverse("incidents:silence-expire", args=[incident.pk, theirs])

    r = client.post(expire, HTTP_HX_REQUEST="true")

    assert r.status_code == 409
    page = r.content.decode()
    assert 'data-testid="silence-confirm"' in page
    assert "bob@example.com" in page
    assert "alertname=&quot;KVCacheFull&quot;" in page
    assert 'name="confirm" value="true"' in page
    assert am.silences[theirs]["status"]["state"] == "active"

    r = client.post(expire, {"confirm": "true"}, HTTP_HX_REQUEST="true")

    assert r.status_code == 200, r.content
    assert am.silences[theirs]["status"]["state"] == "expired"
