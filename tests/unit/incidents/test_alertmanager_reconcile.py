"""Reconciling with Alertmanager's own view (incidents/alertmanager_view/), against a
local HTTP server that speaks `GET /api/v2/alerts` like Alertmanager's v2 API. A silenced
alert gets no resolved notification, so only this ends it; the real Alertmanager is in
tests/integration/test_alertmanager_reconcile.py."""

import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.urls import reverse
from django.utils import timezone

from console import roles
from incidents.alertmanager_view import services
from incidents.alertmanager_view.services import alertmanager_reconcile
from incidents.models import Alert, Incident, TimelineEvent
from tests.factories import AlertFactory, IncidentFactory

pytestmark = pytest.mark.django_db
NOWHERE = "http://127.0.0.1:9"  # config/settings_test.py: nothing listens there
LONG_AGO = timedelta(minutes=10)


class AlertsApi:
    """One Alertmanager replica: the alerts it lists, as its v2 API writes them."""

    def __init__(self) -> None:
        self.alerts: list[dict] = []
        self.status = 200
        self.asked = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                api.asked += 1
                assert self.path == "/api/v2/alerts", self.path
                data = json.dumps(api.alerts if api.status == 200 else "boom").encode()
                self.send_response(api.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def lists(self, alert: Alert, *, state="active", silenced=(), inhibited=(), starts=None):
        self.alerts.append(
            {
                "fingerprint": alert.fingerprint,
                "labels": alert.labels,
                "annotations": alert.annotations,
                "startsAt": (starts or alert.starts_at).isoformat().replace("+00:00", "Z"),
                "endsAt": (timezone.now() + timedelta(minutes=4)).isoformat(),
                "updatedAt": timezone.now().isoformat(),
                "generatorURL": "",
                "receivers": [{"name": "console"}],
                "status": {
                    "state": state,
                    "silencedBy": list(silenced),
                    "inhibitedBy": list(inhibited),
                    "mutedBy": [],
                },
            }
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def am(settings):
    api = AlertsApi()
    settings.ALERTMANAGER_URL = api.url
    settings.ALERTMANAGER_REPLICA_URLS = []
    yield api
    api.close()


def firing(incident=None, **kw) -> Alert:
    """A firing alert Alertmanager last notified the console about ten minutes ago."""
    long_ago = timezone.now() - LONG_AGO
    kw.setdefault("starts_at", long_ago.replace(microsecond=0))
    return AlertFactory(
        incident=incident or IncidentFactory(),
        first_received_at=long_ago,
        last_received_at=long_ago,
        **kw,
    )


# --- the failing-before cases of issue 25 item 4 ------------------------------------------
def test_a_silenced_incident_whose_alert_ended_is_mitigated_after_reconcile(am):
    """Silenced, then the fleet recovered: no resolved notification came, and
    Alertmanager no longer lists the alert. Before the reconcile it stayed firing."""
    alert = firing()
    incident = alert.incident
    result = alertmanager_reconcile()
    alert.refresh_from_db()
    incident.refresh_from_db()
    assert (alert.status, alert.am_state) == ("resolved", "gone")
    assert alert.ends_at is not None
    assert incident.status == "mitigated"
    assert result.mitigated == [incident.pk]
    assert result.ended == 1
    ended, moved = TimelineEvent.objects.filter(incident=incident).order_by("id")
    assert ended.kind == "alert_resolved"
    assert ended.message == "Alertmanager no longer lists VLLMHighTTFT: ended (reconciled)."
    assert ended.payload["reconciled"] is True
    # The same decision and words as ingest's "all alerts resolved".
    assert moved.kind == "status_changed"
    assert "All alerts resolved; mitigated until a person resolves it." in moved.message


def test_a_silenced_alert_is_shown_as_silenced_not_firing(am, client, make_user):
    alert = firing()
    am.lists(alert, state="suppressed", silenced=["5e1f-silence"])
    alertmanager_reconcile()
    alert.refresh_from_db()
    assert (alert.status, alert.am_state, alert.am_silenced_by) == (
        "firing",
        "silenced",
        ["5e1f-silence"],
    )
    assert Incident.objects.get(pk=alert.incident_id).status == "triggered"  # still holds
    client.force_login(make_user("ann", roles.VIEWER))
    page = client.get(reverse("incidents:alerts", args=[alert.incident_id])).content.decode()
    assert "0 firing / 1 total" in page
    assert "1 silenced" in page
    assert 'data-testid="alert-state"' in page
    assert "5e1f-silence" in page
    assert "States as Alertmanager reported them" in page
    header = client.get(reverse("incidents:header", args=[alert.incident_id])).content.decode()
    assert "0 firing" in header
    assert "1 silenced" in header
    listing = client.get(reverse("incidents:list"), HTTP_HX_REQUEST="true").content.decode()
    assert ">0</span>/1" in listing
    assert "+1 silenced" in listing


def _resolve_form(client, incident_id: int) -> str:
    response = client.post(reverse("incidents:resolve", args=[incident_id]), {"reason": ""})
    assert response.status_code == 409
    return response.content.decode()


def test_the_resolve_form_says_still_firing_only_when_alertmanager_does(am, client, make_user):
    client.force_login(make_user("cara", roles.COMMANDER))
    silenced = firing()
    am.lists(silenced, state="suppressed", silenced=["s-1"])
    active = firing()
    am.lists(active)
    unasked = firing()
    alertmanager_reconcile(incident_id=silenced.incident_id)
    alertmanager_reconcile(incident_id=active.incident_id)

    form = _resolve_form(client, silenced.incident_id)
    assert "Alertmanager still sees" not in form
    assert "as silenced or inhibited" in form
    form = _resolve_form(client, active.incident_id)
    assert "Alertmanager still sees it firing" in form
    form = _resolve_form(client, unasked.incident_id)
    assert "Alertmanager still sees" not in form
    assert "not been checked with Alertmanager yet" in form


# --- how far the view is trusted ---------------------------------------------------------
def test_an_alert_just_delivered_or_just_seen_is_not_ended_yet(am):
    """Not listed, but a webhook or a listing showed it alive within the grace period
    (a restarted Alertmanager lists nothing until Prometheus resends)."""
    recent = AlertFactory(incident=IncidentFactory())  # received just now
    alertmanager_reconcile()
    recent.refresh_from_db()
    assert (recent.status, recent.am_state) == ("firing", "gone")
    assert recent.incident.status == "triggered"


def test_a_later_episode_of_the_same_fingerprint_ends_this_one(am):
    alert = firing()
    am.lists(alert, starts=timezone.now())  # fired again since: another episode
    alertmanager_reconcile()
    alert.refresh_from_db()
    assert alert.status == "resolved"


def test_one_alert_ended_of_two_leaves_the_incident_open(am):
    gone = firing()
    still = firing(incident=gone.incident)
    am.lists(still, state="suppressed", inhibited=["abc"])
    alertmanager_reconcile()
    gone.refresh_from_db()
    still.refresh_from_db()
    assert (gone.status, still.status, still.am_state) == ("resolved", "firing", "inhibited")
    assert gone.incident.status == "triggered"


def test_an_alert_alertmanager_lists_again_fires_again(am):
    alert = firing()
    alertmanager_reconcile()  # not listed: ended, incident mitigated
    assert Incident.objects.get(pk=alert.incident_id).status == "mitigated"
    am.lists(alert)
    alertmanager_reconcile()
    alert.refresh_from_db()
    assert (alert.status, alert.ends_at, alert.am_state) == ("firing", None, "firing")
    incident = Incident.objects.get(pk=alert.incident_id)
    assert incident.status == "triggered"
    last = TimelineEvent.objects.filter(incident=incident, kind="alert_fired").get()
    assert last.message == "Alertmanager lists VLLMHighTTFT again: firing (reconciled)."


def test_alertmanager_unreachable_changes_nothing_and_the_page_says_so(settings, client, make_user):
    settings.ALERTMANAGER_URL = NOWHERE
    settings.ALERTMANAGER_REPLICA_URLS = []
    alert = firing()
    result = alertmanager_reconcile()
    alert.refresh_from_db()
    assert (result.asked, result.answered, result.ended) == (True, False, 0)
    assert (alert.status, alert.am_state, alert.am_checked_at) == ("firing", None, None)
    assert alert.am_asked_at is not None
    assert "127.0.0.1:9" in alert.am_error
    assert Incident.objects.get(pk=alert.incident_id).status == "triggered"
    client.force_login(make_user("ann", roles.VIEWER))
    page = client.get(reverse("incidents:alerts", args=[alert.incident_id])).content.decode()
    assert "Alertmanager could not be asked" in page
    assert "the console's own record" in page


def test_with_replicas_an_alert_ends_only_if_no_replica_that_answered_lists_it(settings, am):
    other = AlertsApi()
    try:
        settings.ALERTMANAGER_REPLICA_URLS = [am.url, other.url, NOWHERE]
        alert = firing()
        other.lists(alert)  # one replica still has it
        alertmanager_reconcile()
        alert.refresh_from_db()
        assert (alert.status, alert.am_state) == ("firing", "firing")
        assert NOWHERE in alert.am_error  # the replica that could not be asked is named
        other.alerts.clear()
        alert.am_seen_at = timezone.now() - LONG_AGO
        alert.save()
        alertmanager_reconcile()
        alert.refresh_from_db()
        assert alert.status == "resolved"
        assert (am.asked, other.asked) == (2, 2)
    finally:
        other.close()


def test_nothing_to_ask_asks_nothing(am):
    AlertFactory(status="resolved", incident=IncidentFactory())
    assert alertmanager_reconcile().asked is False
    assert am.asked == 0


def test_opening_the_page_queues_one_reconcile_and_never_waits(
    am, client, make_user, monkeypatch, settings
):
    queued = []

    class Task:
        def apply_async(self, **kw):
            queued.append(kw)

    monkeypatch.setitem(services.current_app.tasks, services.TASK, Task())
    settings.ALERTMANAGER_RECONCILE_PAGE_SECONDS = 60
    alert = firing()
    client.force_login(make_user("ann", roles.VIEWER))
    url = reverse("incidents:detail", args=[alert.incident_id])
    assert client.get(url).status_code == 200
    assert client.get(url).status_code == 200
    assert queued == [{"kwargs": {"incident_id": alert.incident_id}, "retry": False}]
    assert am.asked == 0  # the page itself never asks Alertmanager
