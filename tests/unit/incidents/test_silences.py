"""Silences without an Alertmanager: Alertmanager's matching rules, which silences belong
to an incident, what the services check before asking Alertmanager, and what every
failure to ask it looks like (connection refused, no answer in time, an answer that is
not what the v2 API says). The real Alertmanager is in
tests/integration/test_silences_alertmanager.py."""

import json
import socket
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.errors import DomainError, NotFound
from incidents.silences import client as silences
from incidents.silences import scope as silence_scope
from incidents.silences import services
from incidents.silences.client import AlertmanagerError, Matcher, Silence
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory

pytestmark = pytest.mark.django_db
NOWHERE = "http://127.0.0.1:9"  # config/settings_test.py: nothing listens there


# --- Alertmanager's matching rules ------------------------------------------------------
@pytest.mark.parametrize(
    ("matcher", "labels", "expected"),
    [
        (Matcher("pod", "vllm-chat-0"), {"pod": "vllm-chat-0"}, True),
        (Matcher("pod", "vllm-chat-0"), {"pod": "vllm-chat-01"}, False),
        (Matcher("pod", "vllm-chat-0", is_equal=False), {"pod": "vllm-chat-1"}, True),
        (Matcher("pod", "vllm-chat-0", is_equal=False), {"pod": "vllm-chat-0"}, False),
        # Regexes are anchored: a match in the middle is no match.
        (Matcher("pod", "vllm-.*", is_regex=True), {"pod": "vllm-chat-0"}, True),
        (Matcher("pod", "chat", is_regex=True), {"pod": "vllm-chat-0"}, False),
        (Matcher("pod", "a|vllm-chat-0", is_regex=True), {"pod": "vllm-chat-0"}, True),
        (Matcher("pod", "vllm-.*", is_regex=True, is_equal=False), {"pod": "x"}, True),
        # A missing label is the empty string.
        (Matcher("node", ""), {"pod": "p"}, True),
        (Matcher("node", "gpu-1"), {"pod": "p"}, False),
        (Matcher("node", ".*", is_regex=True), {}, True),
        # A regex Python cannot compile matches nothing (and does not raise).
        (Matcher("pod", "(", is_regex=True), {"pod": "("}, False),
    ],
)
def test_matchers_follow_alertmanager(matcher, labels, expected):
    assert matcher.matches(labels) is expected


def _silence(*matchers: Matcher, id: str = "s-1", state: str = "active") -> Silence:
    now = timezone.now()
    return Silence(
        id=id,
        state=state,
        matchers=matchers,
        starts_at=now,
        ends_at=now + timedelta(hours=1),
        created_by="bob",
        comment="",
    )


def test_a_silence_needs_every_matcher_and_belongs_by_match_or_by_origin():
    s = _silence(Matcher("alertname", "VLLMHighTTFT"), Matcher("pod", "vllm-chat-0"))
    assert s.matches({"alertname": "VLLMHighTTFT", "pod": "vllm-chat-0", "x": "y"})
    assert not s.matches({"alertname": "VLLMHighTTFT", "pod": "vllm-chat-1"})
    assert not _silence().matches({"a": "b"})  # no matcher: never Alertmanager's
    label_sets = [{"alertname": "VLLMHighTTFT", "pod": f"vllm-chat-{i}"} for i in range(3)]
    assert silences.covering(s, label_sets=label_sets, created_ids=set()).alerts_matched == 1
    other = _silence(Matcher("alertname", "GPUECCErrors"), id="s-2")
    assert silences.covering(other, label_sets=label_sets, created_ids=set()) is None
    mine = silences.covering(other, label_sets=label_sets, created_ids={"s-2"})
    assert (mine.created_here, mine.alerts_matched) == (True, 0)
    assert str(s.matchers[0]) == 'alertname="VLLMHighTTFT"'
    assert str(Matcher("pod", "v.*", is_regex=True, is_equal=False)) == 'pod!~"v.*"'


def test_the_incidents_label_sets_and_its_silence_ids_come_from_its_rows():
    incident = IncidentFactory()
    for pod in ("vllm-chat-0", "vllm-chat-0", "vllm-chat-1"):
        AlertFactory(incident=incident, labels={"alertname": "VLLMHighTTFT", "pod": pod})
    AlertFactory(labels={"alertname": "Elsewhere"})
    sets = silences.incident_label_sets(incident_id=incident.pk)
    assert sorted(s["pod"] for s in sets) == ["vllm-chat-0", "vllm-chat-1"]
    TimelineEventFactory(incident=incident, kind="silence_created", payload={"silence_id": "a"})
    TimelineEventFactory(incident=incident, kind="note", payload={"silence_id": "b"})
    TimelineEventFactory(kind="silence_created", payload={"silence_id": "c"})
    assert silences.incident_silence_ids(incident_id=incident.pk) == {"a"}


# --- what a silence is made of -------------------------------------------------------------
def test_one_alert_is_silenced_by_its_exact_labels_the_group_by_what_all_share():
    incident = IncidentFactory()
    base = {"alertname": "VLLMHighTTFT", "namespace": "llm-serving", "lws": "vllm-chat"}
    a = AlertFactory(incident=incident, labels={**base, "pod": "vllm-chat-0", "node": "gpu-1"})
    AlertFactory(incident=incident, labels={**base, "pod": "vllm-chat-1", "node": "gpu-1"})
    AlertFactory(incident=incident, labels={**base, "pod": "vllm-chat-2", "node": "gpu-2"})
    assert [str(m) for m in services.alert_matchers(a)] == [
        'alertname="VLLMHighTTFT"', 'lws="vllm-chat"', 'namespace="llm-serving"',
        'node="gpu-1"', 'pod="vllm-chat-0"',
    ]  # fmt: skip
    (group,) = silence_scope.group_silences(silence_scope.incident_scope(incident_id=incident.pk))
    assert {m.name: m.value for m in group} == base
    assert all(m.is_equal and not m.is_regex for m in group)
    # Without a namespace label, the matcher says so: namespace="" (absent).
    bare = AlertFactory(labels={"alertname": "A", "pod": "p"})
    assert [str(m) for m in services.alert_matchers(bare)] == [
        'alertname="A"', 'namespace=""', 'pod="p"',
    ]  # fmt: skip


def test_defaults_and_durations_read_as_a_person_would_write_them(make_user):
    incident = IncidentFactory(title="VLLMHighTTFT: TTFT p99 above 2s")
    assert services.default_comment(incident, make_user("cara", roles.COMMANDER)) == (
        f"#{incident.pk} VLLMHighTTFT: TTFT p99 above 2s - silenced from the console by cara"
    )
    texts = [services.duration_text(m) for m in (5, 30, 60, 90, 120, 4320)]
    assert texts == ["5m", "30m", "1h", "1h 30m", "2h", "72h"]


# --- what the services check before asking Alertmanager -------------------------------------
@pytest.fixture
def commander(make_user):
    return make_user("cara", roles.COMMANDER)


def test_only_commanders_silence(make_user):
    alert = AlertFactory()
    for role in (roles.VIEWER, roles.RESPONDER):
        with pytest.raises(PermissionDenied):
            services.incident_silence_create(
                incident_id=alert.incident_id, actor=make_user(role, role)
            )
        with pytest.raises(PermissionDenied):
            services.incident_silence_expire(
                incident_id=alert.incident_id, actor=make_user(f"{role}2", role), silence_id="x"
            )


@pytest.mark.parametrize("minutes", [0, 4, 72 * 60 + 1, 10**6])
def test_a_duration_out_of_bounds_is_refused_before_alertmanager_is_asked(commander, minutes):
    # Alertmanager is NOWHERE: a call would raise AlertmanagerError instead.
    alert = AlertFactory()
    with pytest.raises(DomainError) as info:
        services.incident_silence_create(
            incident_id=alert.incident_id, actor=commander, duration_minutes=minutes
        )
    assert info.value.code == "invalid"
    assert "5 minutes to 72h" in str(info.value)


def test_an_alert_of_another_incident_or_a_group_without_common_labels_is_refused(commander):
    incident = IncidentFactory()
    stranger = AlertFactory()
    with pytest.raises(DomainError, match=f"Alert #{stranger.pk} is not one of incident"):
        services.incident_silence_create(
            incident_id=incident.pk, actor=commander, alert_id=stranger.pk
        )
    with pytest.raises(DomainError, match="has no alerts, so there is nothing to silence"):
        services.incident_silence_create(incident_id=incident.pk, actor=commander)
    for n in range(silence_scope.MAX_GROUP_SILENCES + 1):  # each its own namespaces
        AlertFactory(incident=incident, labels={"alertname": f"A{n}", "namespace": f"n{n}"})
    with pytest.raises(DomainError, match=r"at most 10\. Silence its alerts one by one"):
        services.incident_silence_create(incident_id=incident.pk, actor=commander)
    with pytest.raises(NotFound):
        services.incident_silence_create(incident_id=999_999, actor=commander)
    with pytest.raises(NotFound, match="is not a silence id"):
        services.incident_silence_expire(
            incident_id=incident.pk, actor=commander, silence_id="../../api/v2/status"
        )


def test_alertmanager_unreachable_means_no_silence_and_no_timeline_entry(commander):
    alert = AlertFactory()
    with pytest.raises(AlertmanagerError) as info:
        services.incident_silence_create(incident_id=alert.incident_id, actor=commander)
    assert info.value.code == "alertmanager_unavailable"
    assert str(info.value) == f"Alertmanager at {NOWHERE} refused the connection."
    assert not alert.incident.events.exists()


# --- every failure to ask Alertmanager, named ---------------------------------------------------
def test_no_answer_in_time_is_a_timeout_naming_the_limit(settings):
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        settings.ALERTMANAGER_URL = f"http://127.0.0.1:{silent.getsockname()[1]}"
        settings.ALERTMANAGER_TIMEOUT_SECONDS = 0.3
        with pytest.raises(AlertmanagerError) as info:
            silences.silences_fetch()
    assert (
        str(info.value) == f"Alertmanager at {settings.ALERTMANAGER_URL} did not answer in 0.3 s."
    )
    assert info.value.code == "alertmanager_unavailable"


@pytest.fixture
def answering(settings):
    """A local HTTP server answering every request with the (status, body) given."""
    reply = {"status": 200, "body": b"[]"}

    class Handler(BaseHTTPRequestHandler):
        def _answer(self):
            self.send_response(reply["status"])
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(reply["body"])

        do_GET = do_POST = do_DELETE = _answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.ALERTMANAGER_URL = f"http://127.0.0.1:{server.server_port}/"

    def set_reply(status: int, body) -> str:
        reply.update(
            status=status, body=body if isinstance(body, bytes) else json.dumps(body).encode()
        )
        return settings.ALERTMANAGER_URL.rstrip("/")

    yield set_reply
    server.shutdown()
    server.server_close()


REFUSED, UNAVAILABLE = "alertmanager_refused", "alertmanager_unavailable"


@pytest.mark.parametrize(
    ("status", "body", "code", "words"),
    [
        (400, "silence invalid: x", REFUSED, "refused to list silences (400): silence invalid: x"),
        (500, "storage failed", UNAVAILABLE, "could not list silences (500): storage failed"),
        (200, b"<html>not it</html>", UNAVAILABLE, "answered 200 with a body that is not JSON"),
        (200, {"silences": []}, UNAVAILABLE, "answered a list that is not one"),
        (200, [{"id": "x"}], UNAVAILABLE, "answered a silence its v2 API does not describe"),
    ],
)
def test_an_answer_other_than_the_v2_api_says_is_named(answering, status, body, code, words):
    base = answering(status, body)
    with pytest.raises(AlertmanagerError) as info:
        silences.silences_fetch()
    assert info.value.code == code
    assert str(info.value).startswith(f"Alertmanager at {base} ")
    assert words in str(info.value)


def test_reading_one_silence_and_a_post_without_an_id(answering):
    answering(404, "silence not found")
    assert silences.silence_fetch("00000000-0000-4000-8000-000000000000") is None
    answering(200, {})
    now = timezone.now()
    with pytest.raises(AlertmanagerError, match="created a silence without an id"):
        silences.silence_post(
            matchers=[Matcher("a", "b")], starts_at=now, ends_at=now, created_by="c", comment=""
        )


# --- the API -----------------------------------------------------------------------------
def api_as(make_user, name: str, role: str) -> APIClient:
    client = APIClient()
    client.force_login(make_user(name, role))  # the API takes the session as well
    return client


def test_api_refusals_before_alertmanager_and_503_when_it_is_down(make_user):
    alert = AlertFactory()
    url = f"/api/v1/incidents/{alert.incident_id}/silences/"
    boss = api_as(make_user, "cara", roles.COMMANDER)
    assert (
        api_as(make_user, "rita", roles.RESPONDER).post(url, {}, format="json").status_code == 403
    )
    bad = boss.post(url, {"duration_minutes": 1, "comment": "x" * 1001}, format="json")
    assert bad.status_code == 400
    assert set(bad.json()) == {"duration_minutes", "comment"}
    other = boss.post(url, {"alert": AlertFactory().pk}, format="json")
    assert (other.status_code, other.json()["code"]) == (400, "invalid")
    assert boss.get("/api/v1/incidents/999999/silences/").status_code == 404
    assert boss.delete(f"{url}not-a-uuid/").status_code == 404
    down = api_as(make_user, "vic", roles.VIEWER).get(url)
    assert down.status_code == 503
    assert down.json() == {
        "detail": f"Alertmanager at {NOWHERE} refused the connection.",
        "code": "alertmanager_unavailable",
    }


def test_the_schema_documents_the_silences_api(make_user, client):
    client.force_login(make_user("vic", roles.VIEWER))
    paths = client.get("/api/schema/?format=json").json()["paths"]
    listing = paths["/api/v1/incidents/{id}/silences/"]
    assert {"200", "404", "503"} <= set(listing["get"]["responses"])
    assert {"201", "400", "403", "409", "503"} <= set(listing["post"]["responses"])
    expire = paths["/api/v1/incidents/{id}/silences/{silence_id}/"]["delete"]
    assert {"200", "404", "409", "503"} <= set(expire["responses"])


# --- the page --------------------------------------------------------------------------------
def test_the_panel_offers_the_form_to_commanders_only(client, make_user):
    alert = AlertFactory(labels={"alertname": "VLLMHighTTFT", "pod": "vllm-chat-7"})
    detail = reverse("incidents:detail", args=[alert.incident_id])
    client.force_login(make_user("cara", roles.COMMANDER))
    page = client.get(detail).content.decode()
    assert 'id="incident-silences"' in page
    assert reverse("incidents:silences", args=[alert.incident_id]) in page
    assert f'<option value="alert-{alert.pk}"' in page
    assert "Alert VLLMHighTTFT pod=vllm-chat-7" in page
    assert '<option value="120m" selected>2h</option>' in page
    assert "silenced from the console by cara" in page
    client.force_login(make_user("vic", roles.VIEWER))
    page = client.get(detail).content.decode()
    assert 'id="incident-silences"' in page
    assert 'id="silence-form"' not in page
    create = reverse("incidents:silence-create", args=[alert.incident_id])
    assert client.post(create, {"scope": "group"}).status_code == 403


def test_the_panel_says_when_alertmanager_is_down_and_keeps_the_form(client, make_user):
    alert = AlertFactory()
    client.force_login(make_user("cara", roles.COMMANDER))
    listing = client.get(reverse("incidents:silences", args=[alert.incident_id]))
    assert listing.status_code == 200
    text = listing.content.decode()
    assert f"Alertmanager at {NOWHERE} refused the connection." in text
    assert "(ALERTMANAGER_URL)" in text
    r = client.post(
        reverse("incidents:silence-create", args=[alert.incident_id]),
        {"scope": "group", "duration": "9999m", "comment": "typed"},
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 409
    assert "5 minutes to 72h" in r.content.decode()
    assert 'value="typed"' in r.content.decode()
    plain = client.post(
        reverse("incidents:silence-create", args=[alert.incident_id]),
        {"scope": "group", "duration": "60m"},
        follow=True,
    )
    assert "refused the connection" in plain.content.decode()
    assert not alert.incident.events.exists()
