"""Similar past incidents (issue #15, item 3): the incident page's panel and
GET /api/v1/incidents/{id}/similar/ list earlier incidents with the same runbook, LWS or
node, newest first, with what fixed them, their postmortem and their open action items;
"seen before, and the fix is not done" when any of those is open. A constant number of
queries however many match."""

from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from actions.models import ActionRun
from console import roles
from console.api_tokens.models import ApiToken
from incidents.models import Incident
from postmortems.models import ActionItem, Postmortem
from tests.factories import AlertFactory, IncidentFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
NOW = timezone.now()
LABELS = {"namespace": "llm-serving", "lws": "vllm-chat", "node": "gpu-node-3"}


def incident(*, runbook="", hours_ago=1.0, resolved_after=None, **labels) -> Incident:
    opened = NOW - timedelta(hours=hours_ago)
    inc = IncidentFactory(
        runbook=runbook,
        triggered_at=opened,
        started_at=opened,
        status="resolved" if resolved_after else "triggered",
        resolved_at=opened + resolved_after if resolved_after else None,
    )
    if labels:
        AlertFactory(incident=inc, labels={"alertname": "X", **labels})
    return inc


def fix(inc: Incident, user, *, status="succeeded", kind="scale_lws", n=0) -> ActionRun:
    return ActionRun.objects.create(
        incident=inc, kind=kind, target=f"leaderworkerset/llm-serving/vllm-chat-{inc.pk}-{n}",
        params={"replicas_delta": 2}, idempotency_key=f"k-{inc.pk}-{n}", status=status,
        requested_by=user, requested_at=NOW, finished_at=NOW,
    )  # fmt: skip


def item(inc: Incident, user, *, status="open", title="Scale earlier", due=None) -> ActionItem:
    return ActionItem.objects.create(
        incident=inc, title=title, status=status, category="capacity", priority="P1",
        due_date=due or timezone.localdate() + timedelta(days=7), created_by=user, created_at=NOW,
    )  # fmt: skip


def api(make_user, role=roles.VIEWER, name="vic") -> APIClient:
    client = APIClient()
    token = ApiToken.objects.create(user=make_user(name, role))[1]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def similar(client: APIClient, inc: Incident) -> dict:
    r = client.get(f"/api/v1/incidents/{inc.pk}/similar/")
    assert r.status_code == 200, r.content
    return r.json()


def test_earlier_incidents_with_the_same_runbook_lws_or_node_newest_first(make_user):
    same_runbook = incident(runbook="ttft-spike", hours_ago=50, namespace="other", lws="x")
    same_lws = incident(runbook="nccl-hang", hours_ago=40, namespace="llm-serving", lws="vllm-chat")
    same_node = incident(runbook="ecc-errors", hours_ago=30, node="gpu-node-3")
    incident(runbook="nccl-hang", hours_ago=20, namespace="team-b", lws="vllm-chat")  # other ns
    incident(runbook="retry-storm", hours_ago=10, node="gpu-node-9")  # nothing in common
    everything = incident(runbook="ttft-spike", hours_ago=5, **LABELS)
    now = incident(runbook="ttft-spike", hours_ago=1, **LABELS)
    incident(runbook="ttft-spike", hours_ago=0.5, **LABELS)  # later: not "past"

    body = similar(api(make_user), now)
    assert body["runbook"] == "ttft-spike"
    assert body["lws"] == [["llm-serving", "vllm-chat"]]
    assert body["nodes"] == ["gpu-node-3"]
    found = [(s["id"], sorted(s["reasons"])) for s in body["similar"]]
    assert found == [
        (everything.pk, ["same LWS llm-serving/vllm-chat", "same node gpu-node-3",
                         "same runbook ttft-spike"]),
        (same_node.pk, ["same node gpu-node-3"]),
        (same_lws.pk, ["same LWS llm-serving/vllm-chat"]),
        (same_runbook.pk, ["same runbook ttft-spike"]),
    ]  # fmt: skip


def test_each_says_how_long_it_lasted_what_fixed_it_its_postmortem_and_open_items(make_user):
    rita = make_user("rita", roles.RESPONDER)
    before = incident(
        runbook="ttft-spike", hours_ago=72, resolved_after=timedelta(minutes=95), **LABELS
    )
    fixed = fix(before, rita, kind="scale_lws", n=1)
    fix(before, rita, status="failed", kind="update_gateway_limits", n=2)
    pm = Postmortem.objects.create(
        incident=before, title="TTFT spike on vllm-chat", created_by=rita, status="published"
    )
    overdue = item(before, rita, title="Scale earlier on queue depth", due=date(2020, 1, 1))
    item(before, rita, status="done", title="Dashboards")
    now = incident(runbook="ttft-spike", **LABELS)

    body = similar(api(make_user), now)
    assert body["fix_not_done"] is True
    (s,) = body["similar"]
    assert s["duration_seconds"] == 95 * 60
    assert [(f["id"], f["kind"]) for f in s["fixes"]] == [(fixed.pk, "scale_lws")]
    assert s["postmortem"] == {"id": pm.pk, "title": "TTFT spike on vllm-chat",
                               "status": "published"}  # fmt: skip
    assert s["open_action_items"] == [{
        "id": overdue.pk, "title": "Scale earlier on queue depth", "status": "open",
        "priority": "P1", "owner": None, "due_date": "2020-01-01", "overdue": True,
    }]  # fmt: skip


def test_the_panel_says_seen_before_and_the_fix_is_not_done(client, make_user):
    rita = make_user("rita", roles.RESPONDER)
    before = incident(runbook="ttft-spike", hours_ago=72, resolved_after=timedelta(hours=1))
    fix(before, rita)
    item(before, rita, title="Scale earlier on queue depth")
    now = incident(runbook="ttft-spike")
    client.force_login(make_user("vic", roles.VIEWER))

    page = client.get(f"/incidents/{now.pk}/").content.decode()
    assert 'id="incident-similar"' in page
    assert f"/postmortems/incidents/{now.pk}/similar/" in page  # loads itself over htmx

    html = client.get(f"/postmortems/incidents/{now.pk}/similar/", **HTMX).content.decode()
    assert 'data-testid="fix-not-done"' in html
    assert "Seen before, and the fix is not done." in html
    assert "Scale earlier on queue depth" in html
    assert f'data-incident="{before.pk}"' in html
    assert "1h 0m" in html
    assert f"/runbooks/actions/{before.action_runs.get().pk}/" in html


def test_once_the_items_are_done_the_warning_goes(client, make_user):
    rita = make_user("rita", roles.RESPONDER)
    before = incident(runbook="ttft-spike", hours_ago=72)
    item(before, rita, status="done")
    now = incident(runbook="ttft-spike")
    client.force_login(make_user("vic", roles.VIEWER))
    html = client.get(f"/postmortems/incidents/{now.pk}/similar/", **HTMX).content.decode()
    assert f'data-incident="{before.pk}"' in html
    assert "fix-not-done" not in html
    assert similar(api(make_user, name="val"), now)["fix_not_done"] is False


def test_nothing_similar_says_so(client, make_user):
    incident(runbook="nccl-hang", hours_ago=3, node="gpu-node-9")
    now = incident(runbook="ttft-spike", **LABELS)
    client.force_login(make_user("vic", roles.VIEWER))
    html = client.get(f"/postmortems/incidents/{now.pk}/similar/", **HTMX).content.decode()
    assert "No earlier incident with this runbook or these labels." in html
    body = similar(api(make_user, name="val"), now)
    assert body["similar"] == []
    assert body["fix_not_done"] is False


def test_at_most_ten_the_newest(make_user):
    older = [incident(runbook="ttft-spike", hours_ago=100 - n) for n in range(12)]
    now = incident(runbook="ttft-spike")
    ids = [s["id"] for s in similar(api(make_user), now)["similar"]]
    assert ids == [i.pk for i in reversed(older)][:10]


def test_the_query_count_is_the_same_for_1_and_20_similar_incidents(client, make_user):
    rita = make_user("rita", roles.RESPONDER)

    def history(runbook: str, labels: dict, count: int) -> Incident:
        for n in range(count):
            before = incident(runbook=runbook, hours_ago=100 - n, **labels)
            fix(before, rita)
            item(before, rita)
            Postmortem.objects.create(incident=before, title=f"pm {n}", created_by=rita)
        return incident(runbook=runbook, **labels)

    one = history("ttft-spike", {"namespace": "a", "lws": "a", "node": "node-a"}, 1)
    twenty = history("nccl-hang", {"namespace": "b", "lws": "b", "node": "node-b"}, 20)
    client.force_login(make_user("vic", roles.VIEWER))
    token_client = api(make_user, name="val")

    def queries(url: str, get) -> int:
        get(url)  # warm: session and permission caches
        with CaptureQueriesContext(connection) as ctx:
            assert get(url).status_code == 200
        return len(ctx.captured_queries)

    for name, url, get in (
        ("page", "/postmortems/incidents/{}/similar/", lambda u: client.get(u, **HTMX)),
        ("api", "/api/v1/incidents/{}/similar/", token_client.get),
    ):
        small, big = queries(url.format(one.pk), get), queries(url.format(twenty.pk), get)
        assert len(similar(token_client, twenty)["similar"]) == 10
        assert small == big, f"{name}: {small} queries for 1 similar incident, {big} for 20"
        # session, user, groups, 2 x permissions, the incident, then the selector's five:
        # this incident's alerts, the candidates (one statement), the incidents with their
        # postmortems, their succeeded runs, their open items
        assert big <= 11, name


def test_the_api_needs_a_console_role_and_a_real_incident(make_user):
    now = incident(runbook="ttft-spike")
    assert APIClient().get(f"/api/v1/incidents/{now.pk}/similar/").status_code == 401
    assert api(make_user, role=None).get(f"/api/v1/incidents/{now.pk}/similar/").status_code == 403
    r = api(make_user, name="val").get(f"/api/v1/incidents/{now.pk + 99}/similar/")
    assert r.status_code == 404
    assert "does not exist" in r.json()["detail"]
