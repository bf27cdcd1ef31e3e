"""Related incidents (incidents/related/): one failure that opens several incidents about
one LWS within a minute makes one lead and related incidents, shown on each page,
merged or unlinked with one click, configurable per label set and window."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Alert, Incident, IncidentStatus, TimelineEvent
from incidents.services import incident_drill_mark
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db

# What ttft-spike opened in the issue: KV-cache pressure (SEV3), high TTFT (SEV1) and a
# retry storm (SEV1), on one LWS, within a minute, in this order.
KV = ("VLLMKVCachePressure", "long-context-kv", "warning")
TTFT = ("VLLMHighTTFT", "ttft-spike", "critical")
STORM = ("VLLMRetryStorm", "retry-storm", "critical")
STALL = ("VLLMEngineStalled", "nccl-hang", "critical")


@pytest.fixture
def open_incident(post_webhook, django_capture_on_commit_callbacks):
    """Deliver one alert as Alertmanager groups it (alertname, namespace, lws) and run
    what waits for the commit (the linking); return its incident."""

    def _open(which, *, lws="vllm-chat", **labels) -> Incident | None:
        alertname, runbook, severity = which
        body = notification(
            [alert(alertname=alertname, runbook=runbook, severity=severity,
                   extra_labels={"lws": lws, **labels})],
            group_key=f'{{}}:{{alertname="{alertname}", lws="{lws}"}}',
            alertname=alertname,
        )  # fmt: skip
        with django_capture_on_commit_callbacks(execute=True):
            response = post_webhook(body)
        assert response.status_code == 200, response.content
        ids = response.json()["opened"] or response.json()["incidents"]
        return Incident.objects.get(pk=ids[0]) if ids else None

    return _open


def api(make_user, role: str, name: str) -> APIClient:
    client = APIClient()
    user = make_user(name, role)
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


def kinds(incident: Incident, kind: str) -> list[str]:
    return list(
        TimelineEvent.objects.filter(incident=incident, kind=kind).values_list("message", flat=True)
    )


def test_three_alerts_on_one_lws_make_one_lead_and_two_related(open_incident, client, make_user):
    kv, ttft, storm = open_incident(KV), open_incident(TTFT), open_incident(STORM)
    for incident in (kv, ttft, storm):
        incident.refresh_from_db()
    # TTFT leads: more severe than KV pressure, opened before the retry storm.
    assert ttft.related_to_id is None
    assert kv.related_to_id == ttft.pk
    assert storm.related_to_id == ttft.pk
    assert kv.linked_at is not None
    assert kv.linked_by is None
    assert kinds(kv, "incident_linked") == [
        f"Part of #{ttft.pk} (ttft-spike): SEV1 is more severe than SEV3."
    ]
    assert len(kinds(ttft, "incident_linked")) == 2
    assert kinds(storm, "incident_linked") == [
        f"Part of #{ttft.pk} (ttft-spike): opened first at the same severity."
    ]
    # Each page says so: the lead lists them, the others say what they are part of.
    client.force_login(make_user("vic", roles.VIEWER))
    lead_page = client.get(f"/incidents/{ttft.pk}/related/").content.decode()
    assert "Related incidents" in lead_page
    assert lead_page.count('data-testid="related-incident"') == 2
    assert "long-context-kv" in lead_page
    assert "retry-storm" in lead_page
    storm_page = client.get(f"/incidents/{storm.pk}/related/").content.decode()
    assert f"Part of #{ttft.pk}" in storm_page
    assert f'data-incident-id="{kv.pk}"' in storm_page  # the lead's other related incident
    assert 'data-testid="merge"' not in storm_page  # a viewer gets no buttons
    detail = client.get(f"/incidents/{storm.pk}/").content.decode()
    assert f'hx-get="/incidents/{storm.pk}/related/"' in detail
    # The API's detail too.
    body = api(make_user, roles.VIEWER, "vera").get(f"/api/v1/incidents/{kv.pk}/").json()
    assert body["part_of"]["id"] == ttft.pk
    assert [r["id"] for r in body["related"]] == [storm.pk]


def test_a_runbook_that_leads_over_another_leads_even_when_it_opens_later(open_incident):
    ttft = open_incident(TTFT)
    stall = open_incident(STALL)  # nccl-hang: leads_over ttft-spike in the catalogue
    ttft.refresh_from_db()
    stall.refresh_from_db()
    assert stall.related_to_id is None
    assert ttft.related_to_id == stall.pk
    assert kinds(ttft, "incident_linked") == [
        f"Part of #{stall.pk} (nccl-hang): runbook nccl-hang leads over ttft-spike."
    ]


def test_merge_moves_the_alerts_and_later_notifications_to_the_lead(
    open_incident, make_user, post_webhook, django_capture_on_commit_callbacks
):
    kv, ttft = open_incident(KV), open_incident(TTFT)
    responder = api(make_user, roles.RESPONDER, "rita")
    assert (
        api(make_user, roles.VIEWER, "vic").post(f"/api/v1/incidents/{kv.pk}/merge/").status_code
        == 403
    )
    r = responder.post(f"/api/v1/incidents/{kv.pk}/merge/")
    assert r.status_code == 200, r.content
    assert r.json()["id"] == ttft.pk
    kv.refresh_from_db()
    assert kv.status == IncidentStatus.RESOLVED
    assert kv.merged_at is not None
    assert Alert.objects.filter(incident=ttft).count() == 2
    assert len(kinds(kv, "incident_merged")) == len(kinds(ttft, "incident_merged")) == 1
    assert kinds(kv, "status_changed")[-1].startswith(f"Merged into #{ttft.pk}")
    # Alertmanager sends the KV group again: it lands on the lead, opens nothing.
    before = Incident.objects.count()
    assert open_incident(KV) in (None, ttft)
    assert Incident.objects.count() == before
    assert Alert.objects.filter(incident=ttft).count() == 2
    assert responder.post(f"/api/v1/incidents/{kv.pk}/merge/").json()["code"] == "merged"


def test_unlink_with_one_click_on_the_lead_page(open_incident, client, make_user):
    kv, ttft = open_incident(KV), open_incident(TTFT)
    client.force_login(make_user("rita", roles.RESPONDER))
    page = client.get(f"/incidents/{ttft.pk}/related/").content.decode()
    assert f'action="/incidents/{kv.pk}/related/unlink/"' in page
    r = client.post(f"/incidents/{kv.pk}/related/unlink/", {"page": ttft.pk})
    assert r.status_code == 302
    assert r["Location"] == f"/incidents/{ttft.pk}/"
    kv.refresh_from_db()
    assert kv.related_to_id is None
    assert (
        kinds(kv, "incident_unlinked")
        == kinds(ttft, "incident_unlinked")
        == [f"#{kv.pk} unlinked from #{ttft.pk} by rita."]
    )
    assert client.get(f"/incidents/{ttft.pk}/related/").content.decode().strip() == ""


def test_the_window_and_the_label_sets_are_settings(open_incident, settings):
    settings.INCIDENT_RELATED_WINDOW_SECONDS = 300
    kv = open_incident(KV)
    Incident.objects.filter(pk=kv.pk).update(triggered_at=kv.triggered_at - timedelta(seconds=301))
    ttft = open_incident(TTFT)
    assert Incident.objects.get(pk=ttft.pk).related_to_id is None  # outside the window
    assert Incident.objects.get(pk=kv.pk).related_to_id is None
    # Another LWS shares no key with namespace+lws; by node alone it does.
    settings.INCIDENT_RELATED_LABEL_SETS = [["namespace", "lws"]]
    storm = open_incident(STORM, lws="vllm-long", node="gpu-node-3")
    assert Incident.objects.get(pk=storm.pk).related_to_id is None
    settings.INCIDENT_RELATED_LABEL_SETS = [["node"]]
    stall = open_incident(STALL, lws="vllm-chat", node="gpu-node-3")
    assert Incident.objects.get(pk=storm.pk).related_to_id == stall.pk
    settings.INCIDENT_RELATED_WINDOW_SECONDS = 0  # off
    late = open_incident(KV, lws="vllm-long", node="gpu-node-3")
    assert Incident.objects.get(pk=late.pk).related_to_id is None


def test_a_drill_is_never_linked_to_a_real_incident(open_incident):
    kv = open_incident(KV)
    incident_drill_mark(incident_id=kv.pk, kind="note", message="drill", payload={})
    ttft = open_incident(TTFT)
    assert Incident.objects.get(pk=ttft.pk).related_to_id is None
    assert Incident.objects.get(pk=kv.pk).related_to_id is None


def test_a_drill_claimed_after_linking_is_unlinked(
    open_incident, django_capture_on_commit_callbacks
):
    ttft, kv = open_incident(TTFT), open_incident(KV)
    assert Incident.objects.get(pk=kv.pk).related_to_id == ttft.pk
    with django_capture_on_commit_callbacks(execute=True):  # the drill worker claims it
        incident_drill_mark(incident_id=kv.pk, kind="note", message="drill", payload={})
    assert Incident.objects.get(pk=kv.pk).related_to_id is None
    assert len(kinds(ttft, "incident_unlinked")) == 1


def test_a_resolved_incident_firing_again_is_linked_like_a_new_one(
    post_webhook, django_capture_on_commit_callbacks
):
    """Found at real speed: KV-cache pressure, resolved, fired again beside an open TTFT
    SEV1 on the same LWS and stayed alone (the link was looked for only at openings)."""

    def deliver(which, status="firing", starts=None):
        alertname, runbook, severity = which
        one = alert(alertname=alertname, runbook=runbook, severity=severity, status=status,
                    extra_labels={"lws": "vllm-chat"}, **({"starts_at": starts} if starts else {}),
                    **({"ends_at": timezone.now()} if status == "resolved" else {}))  # fmt: skip
        body = notification(
            [one], group_key=f'{{}}:{{alertname="{alertname}", lws="vllm-chat"}}',
            alertname=alertname,
        )  # fmt: skip
        with django_capture_on_commit_callbacks(execute=True):
            assert post_webhook(body).status_code == 200

    deliver(KV)
    kv = Incident.objects.get(runbook="long-context-kv")
    deliver(KV, status="resolved")
    Incident.objects.filter(pk=kv.pk).update(
        status=IncidentStatus.RESOLVED, resolved_at=timezone.now()
    )
    deliver(TTFT)
    ttft = Incident.objects.get(runbook="ttft-spike")
    kv.refresh_from_db()
    assert kv.related_to_id is None  # resolved when TTFT opened: nothing to link
    deliver(KV, starts=timezone.now())  # a new episode: the console reopens #kv
    kv.refresh_from_db()
    assert kv.status == IncidentStatus.TRIGGERED
    assert kv.reopen_count == 1
    assert kv.related_to_id == ttft.pk
