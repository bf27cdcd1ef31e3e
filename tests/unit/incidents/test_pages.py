"""Console pages: what an on-call engineer sees and may do, and what it costs in queries."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from console import roles
from incidents.models import Incident, ReceiptOutcome, TimelineEvent, WebhookReceipt
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


# --- helpers --------------------------------------------------------------------------
def login(client, make_user, username="resp", role=roles.RESPONDER):
    user = make_user(username, role)
    client.force_login(user)
    return user


def make_incident(n: int = 0, **kw) -> Incident:
    now = timezone.now()
    fields = {
        "title": f"VLLMHighTTFT: TTFT p99 above 2s ({n})",
        "severity": "SEV2",
        "grouping_key": f"group-{n}",
        "runbook": "ttft-spike",
        "namespace": "llm-serving",
        "triggered_at": now - timedelta(minutes=n),
        "started_at": now - timedelta(minutes=n + 1),
    }
    fields.update(kw)
    return Incident.objects.create(**fields)


def ingest(post_webhook, alerts, **kw) -> Incident:
    response = post_webhook(notification(alerts, **kw))
    assert response.status_code == 200, response.content
    return Incident.objects.get(pk=response.json()["incidents"][0])


def detail_url(incident) -> str:
    return reverse("incidents:detail", args=[incident.pk])


def action_url(name: str, incident) -> str:
    return reverse(f"incidents:{name}", args=[incident.pk])


# --- access ---------------------------------------------------------------------------
def test_anonymous_is_sent_to_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=/")


def test_login_page_renders_and_logs_in(client, make_user):
    make_user("carol", roles.VIEWER)
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert b'name="username"' in page.content
    response = client.post(reverse("login"), {"username": "carol", "password": "pw-carol"})
    assert response.status_code == 302
    assert response["Location"] == reverse("incidents:list")


def test_user_without_role_gets_a_helpful_403(client, make_user):
    login(client, make_user, "norole", role=None)
    response = client.get("/")
    assert response.status_code == 403
    assert b"Your account has no console role yet" in response.content
    assert b"viewer, responder, commander or admin" in response.content


def test_expired_session_under_htmx_polling_reloads_to_login(client):
    response = client.get("/?status=open", **HTMX, HTTP_HX_CURRENT_URL="http://testserver/?x=1")
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("login") + "?next=%2F%3Fx%3D1"


def test_nav_shows_receipts_and_admin_only_to_those_allowed(client, make_user):
    login(client, make_user, "viewer", roles.VIEWER)
    body = client.get("/").content.decode()
    assert "Webhook receipts" not in body
    assert ">Admin<" not in body
    assert "viewer" in body  # the role chip
    assert 'action="/logout/"' in body
    client.force_login(make_user("boss", roles.ADMIN, is_staff=True))
    body = client.get("/").content.decode()
    assert "Webhook receipts" in body
    assert ">Admin<" in body
    logout = client.post("/logout/")
    assert logout.status_code == 302
    assert client.get("/").status_code == 302  # logged out


# --- list -----------------------------------------------------------------------------
def test_empty_list_says_how_to_get_incidents(client, make_user):
    login(client, make_user)
    body = client.get("/").content.decode()
    assert "No incidents." in body
    assert "/api/v1/alerts/alertmanager" in body


def test_list_shows_an_ingested_incident(client, make_user, post_webhook):
    login(client, make_user)
    incident = ingest(post_webhook, [alert(pod="p0"), alert(pod="p1")])
    body = client.get("/").content.decode()
    assert f"#{incident.pk}" in body
    assert incident.title in body
    assert "SEV1" in body
    assert "Triggered" in body
    assert "ttft-spike" in body
    assert "llm-serving" in body
    assert ">2</span>/2<" in body  # firing / total
    assert f'hx-trigger="every {10}s"' in body


def test_filters_and_no_match_empty_state(client, make_user):
    login(client, make_user)
    make_incident(1, title="ttft one", severity="SEV1")
    make_incident(2, title="nccl two", runbook="nccl-hang", status="resolved")
    make_incident(3, title="cache three", runbook="prefix-cache-drop", status="acknowledged")

    def titles(query: str) -> set[str]:
        body = client.get("/" + query).content.decode()
        return {t for t in ("ttft one", "nccl two", "cache three") if t in body}

    assert titles("") == {"ttft one", "nccl two", "cache three"}
    assert titles("?status=open") == {"ttft one", "cache three"}
    assert titles("?status=resolved") == {"nccl two"}
    assert titles("?severity=sev1") == {"ttft one"}
    assert titles("?runbook=nccl-hang") == {"nccl two"}
    assert titles("?q=cache") == {"cache three"}
    body = client.get("/?q=nothing-like-this").content.decode()
    assert "No incident matches these filters" in body
    assert "Clear filters" in body
    # The runbook menu is filled from the incidents.
    page = client.get("/").content.decode()
    assert '<option value="prefix-cache-drop"' in page


def test_pagination_keeps_filters(client, make_user):
    login(client, make_user)
    for n in range(30):
        make_incident(n, severity="SEV1" if n % 2 else "SEV2")
    make_incident(99, severity="SEV3")
    first = client.get("/")
    assert first.content.decode().count('class="row-') == 25
    assert "Page 1 of 2" in first.content.decode()
    second = client.get("/?page=2").content.decode()
    assert second.count('class="row-') == 6
    filtered = client.get("/?severity=SEV1").content.decode()
    assert filtered.count('class="row-') == 15  # one page only
    both = client.get("/?status=open&page=1").content.decode()
    assert "?status=open&amp;page=2" in both


def test_list_partial_for_htmx(client, make_user):
    login(client, make_user)
    make_incident(1)
    response = client.get("/?status=open", **HTMX)
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in body
    assert body.lstrip().startswith('<section id="incident-table"')
    assert 'hx-get="/?status=open"' in body


def test_list_query_count_does_not_grow_with_rows(client, make_user, django_assert_num_queries):
    login(client, make_user)
    make_incident(0)
    with CaptureQueriesContext(connection) as small:
        assert client.get("/").status_code == 200
    small_count = len(small)  # now: the next request clears Django's query log
    # session, user, groups, 2 perms, count, rows, runbooks; worker liveness and, with no
    # worker alive (none runs here), the waiting-runs count of the banner
    assert small_count <= 10
    for n in range(1, 30):
        make_incident(n, commander=make_user(f"cmd{n}", roles.COMMANDER))
    with django_assert_num_queries(small_count):
        response = client.get("/")
    assert response.content.decode().count('class="row-') == 25


# --- detail ---------------------------------------------------------------------------
def test_detail_shows_header_alerts_and_timeline(client, make_user, post_webhook):
    login(client, make_user)
    incident = ingest(post_webhook, [alert(pod="vllm-chat-3", extra_labels={"node": "gpu-node-2"})])
    body = client.get(detail_url(incident)).content.decode()
    assert incident.title in body
    assert "ttft-spike" in body
    assert "vllm-chat-3" in body
    assert "gpu-node-2" in body
    assert "pod=vllm-chat-3" in body  # label chips
    assert "TTFT p99 on vllm-chat-3 is 9.8s" in body  # annotation description
    assert 'rel="noopener noreferrer"' in body
    assert "Incident opened" in body  # timeline
    assert "Impact start" in body
    assert "Acknowledged" in body


def test_detail_404(client, make_user):
    login(client, make_user)
    response = client.get("/incidents/999999/")
    assert response.status_code == 404
    assert b"Not found" in response.content


@pytest.mark.parametrize(
    ("role", "status", "shown"),
    [
        (roles.VIEWER, "triggered", set()),
        (roles.RESPONDER, "triggered", {"Acknowledge", "Mitigate", "Take command"}),
        (roles.RESPONDER, "acknowledged", {"Mitigate", "Take command"}),
        (
            roles.COMMANDER,
            "triggered",
            {"Acknowledge", "Mitigate", "Resolve", "Take command", "Assign"},
        ),
        (roles.COMMANDER, "mitigated", {"Resolve", "Take command", "Assign"}),
        (roles.COMMANDER, "resolved", {"Reopen", "Take command", "Assign"}),
        (roles.RESPONDER, "resolved", {"Take command"}),
    ],
)
def test_buttons_follow_permissions_and_status(client, make_user, role, status, shown):
    login(client, make_user, "u", role)
    incident = make_incident(1, status=status)
    body = client.get(detail_url(incident)).content.decode()
    buttons = {"Acknowledge", "Mitigate", "Resolve", "Reopen", "Take command", "Assign"}
    assert {b for b in buttons if f">{b}</button>" in body} == shown


def test_viewer_cannot_acknowledge(client, make_user):
    login(client, make_user, "v", roles.VIEWER)
    incident = make_incident(1)
    response = client.post(action_url("acknowledge", incident))
    assert response.status_code == 403
    assert b"does not allow you to acknowledge" in response.content
    incident.refresh_from_db()
    assert incident.status == "triggered"


def test_responder_acknowledges_and_mitigates_but_cannot_resolve(client, make_user):
    login(client, make_user)
    incident = make_incident(1)
    response = client.post(action_url("acknowledge", incident))
    assert response.status_code == 302
    assert response["Location"] == detail_url(incident)
    page = client.get(detail_url(incident)).content.decode()
    assert f"Incident #{incident.pk} acknowledged." in page
    assert client.post(action_url("resolve", incident)).status_code == 403
    incident.refresh_from_db()
    assert incident.status == "acknowledged"
    client.post(action_url("mitigate", incident), {"reason": "scaled to 6 replicas"})
    incident.refresh_from_db()
    assert incident.status == "mitigated"
    assert "scaled to 6 replicas" in client.get(detail_url(incident)).content.decode()


def test_commander_resolves_and_reopens_with_a_reason(client, make_user):
    login(client, make_user, "cmd", roles.COMMANDER)
    incident = make_incident(1, severity="SEV3")  # SEV1/SEV2 without a commander: test_command
    assert client.post(action_url("resolve", incident), {"reason": "fixed"}).status_code == 302
    incident.refresh_from_db()
    assert incident.status == "resolved"
    # A reopen without a reason is refused with a message, not a crash.
    response = client.post(action_url("reopen", incident), {"reason": ""}, follow=True)
    assert "The reason is empty." in response.content.decode()
    client.post(action_url("reopen", incident), {"reason": "TTFT regressed again"})
    incident.refresh_from_db()
    assert incident.status == "triggered"


def test_invalid_transition_shows_the_message(client, make_user):
    login(client, make_user)
    incident = make_incident(1, status="acknowledged")
    response = client.post(action_url("acknowledge", incident), follow=True)
    assert response.status_code == 200
    assert "is already acknowledged" in response.content.decode()
    htmx = client.post(action_url("acknowledge", incident), **HTMX)
    assert htmx.status_code == 409
    assert htmx["HX-Retarget"] == "#flash"
    assert b"is already acknowledged" in htmx.content
    assert "incident-stale" in json.loads(htmx["HX-Trigger"])  # the header re-fetches


def test_action_on_missing_incident_is_404(client, make_user):
    login(client, make_user)
    assert client.post("/incidents/424242/acknowledge/").status_code == 404


def test_actions_require_post(client, make_user):
    login(client, make_user)
    incident = make_incident(1)
    assert client.get(action_url("acknowledge", incident)).status_code == 405


def test_htmx_action_returns_header_and_triggers_refresh(client, make_user):
    login(client, make_user)
    incident = make_incident(1)
    response = client.post(action_url("acknowledge", incident), **HTMX)
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in body
    assert body.lstrip().startswith('<section id="incident-header"')
    assert "Acknowledged" in body
    assert "incident-changed" in json.loads(response["HX-Trigger"])


def test_htmx_forbidden_action_is_shown_in_the_message_area(client, make_user):
    login(client, make_user, "v", roles.VIEWER)
    incident = make_incident(1)
    response = client.post(action_url("acknowledge", incident), **HTMX)
    assert response.status_code == 403
    assert response["HX-Retarget"] == "#flash"
    assert b"<html" not in response.content


def test_take_command_and_assign(client, make_user):
    responder = login(client, make_user)
    viewer = make_user("watcher", roles.VIEWER)
    commander = make_user("cmd", roles.COMMANDER)
    incident = make_incident(1)
    client.post(action_url("commander", incident), {"commander_id": responder.pk})
    incident.refresh_from_db()
    assert incident.commander == responder
    # A responder cannot hand command to someone else.
    response = client.post(action_url("commander", incident), {"commander_id": commander.pk})
    assert response.status_code == 403
    # A commander sees who may command, and can clear it.
    client.force_login(commander)
    body = client.get(detail_url(incident)).content.decode()
    assert f'<option value="{responder.pk}" selected>' in body
    assert f'<option value="{commander.pk}"' in body
    assert f'<option value="{viewer.pk}"' not in body
    client.post(action_url("commander", incident), {"commander_id": ""})
    incident.refresh_from_db()
    assert incident.commander is None
    bad = client.post(action_url("commander", incident), {"commander_id": "x"}, follow=True)
    assert "is not a number" in bad.content.decode()


def test_note_is_added_and_escaped(client, make_user):
    login(client, make_user)
    incident = make_incident(1)
    text = "<script>alert(1)</script>\nsecond line"
    assert client.post(action_url("notes", incident), {"text": text}).status_code == 302
    body = client.get(detail_url(incident)).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;<br>second line" in body
    empty = client.post(action_url("notes", incident), {"text": "   "}, follow=True)
    assert "The note is empty." in empty.content.decode()


def test_htmx_note_returns_a_fresh_form(client, make_user):
    login(client, make_user)
    incident = make_incident(1)
    response = client.post(action_url("notes", incident), {"text": "checked KV cache"}, **HTMX)
    assert response.status_code == 200
    assert response.content.decode().lstrip().startswith('<form id="note-form"')
    assert "incident-changed" in json.loads(response["HX-Trigger"])
    assert TimelineEvent.objects.filter(incident=incident, kind="note").count() == 1


def test_viewer_cannot_add_notes(client, make_user):
    login(client, make_user, "v", roles.VIEWER)
    incident = make_incident(1)
    assert client.post(action_url("notes", incident), {"text": "hi"}).status_code == 403
    assert 'id="note-form"' not in client.get(detail_url(incident)).content.decode()


def test_alert_label_markup_is_escaped(client, make_user, post_webhook):
    login(client, make_user)
    evil = '<img src=x onerror="alert(1)">'
    a = alert(extra_labels={"pod": evil, "items": "shadow"})
    a["annotations"]["runbook_url"] = "javascript:alert(1)"
    incident = ingest(post_webhook, [a])
    body = client.get(detail_url(incident)).content.decode()
    assert evil not in body
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body
    assert "javascript:" not in body
    assert "items=shadow" in body  # a label called "items" does not break the chips


def test_csrf_is_enforced(make_user):
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(make_user("resp", roles.RESPONDER))
    incident = make_incident(1)
    response = csrf_client.post(action_url("acknowledge", incident))
    assert response.status_code == 403
    incident.refresh_from_db()
    assert incident.status == "triggered"
    # With the token from the page (as the hx-headers on <body> send it), it works.
    page = csrf_client.get(detail_url(incident))
    token = page.context["csrf_token"]
    assert f'hx-headers=\'{{"X-CSRFToken": "{token}"}}\'' in page.content.decode()
    ok = csrf_client.post(action_url("acknowledge", incident), HTTP_X_CSRFTOKEN=str(token))
    assert ok.status_code == 302


def _big_incident(post_webhook, alerts: int, notes: int, lws="vllm-chat", **kw) -> Incident:
    pods = [alert(pod=f"{lws}-{n}", extra_labels={"lws": lws}) for n in range(alerts)]
    incident = ingest(post_webhook, pods, **kw)
    now = timezone.now()
    TimelineEvent.objects.bulk_create(
        TimelineEvent(incident=incident, kind="note", occurred_at=now, message=f"note {n}")
        for n in range(notes)
    )
    return incident


def test_detail_query_count_does_not_grow_with_rows(
    client, make_user, post_webhook, django_assert_num_queries
):
    user = login(client, make_user, "cmd", roles.COMMANDER)
    small = _big_incident(post_webhook, alerts=1, notes=1)
    small.commander = user
    small.save()
    with CaptureQueriesContext(connection) as baseline:
        assert client.get(detail_url(small)).status_code == 200
    baseline_count = len(baseline)  # now: the next request clears Django's query log
    # session, user, groups, 2 perms, incident, alerts, events, users; worker liveness and,
    # with no worker alive (none runs here), the waiting-runs count of the banner; the
    # chat panel's look for an installation (chatops/panel.py)
    assert baseline_count <= 12
    for n in range(5):
        make_user(f"resp{n}", roles.RESPONDER)
    big = _big_incident(
        post_webhook,
        alerts=50,
        notes=100,
        lws="vllm-long",
        group_key='{}:{alertname="VLLMHighTTFT", lws="vllm-long"}',
    )
    assert TimelineEvent.objects.filter(incident=big).count() >= 100
    with django_assert_num_queries(baseline_count):
        response = client.get(detail_url(big))
    body = response.content.decode()
    assert body.count('class="alert-main"') == 50
    assert "note 99" in body


# --- live partials --------------------------------------------------------------------
def test_timeline_poll_is_empty_until_something_happens(client, make_user):
    user = login(client, make_user)
    incident = make_incident(1)
    url = reverse("incidents:timeline", args=[incident.pk])
    first = client.get(url, **HTMX)
    assert first.status_code == 200
    assert "No events yet." in first.content.decode()
    assert client.get(f"{url}?after=0", **HTMX).status_code == 204
    TimelineEvent.objects.create(
        incident=incident, kind="note", occurred_at=timezone.now(), actor=user, message="new!"
    )
    later = client.get(f"{url}?after=0", **HTMX)
    assert later.status_code == 200
    assert "new!" in later.content.decode()
    last = TimelineEvent.objects.latest("id").pk
    assert f"?after={last}" in later.content.decode()
    assert client.get(f"{url}?after={last}", **HTMX).status_code == 204


def test_header_poll_swaps_only_on_change(client, make_user):
    login(client, make_user)
    incident = make_incident(1)
    url = reverse("incidents:header", args=[incident.pk])
    first = client.get(url, **HTMX)
    version = first.content.decode().split("?v=", 1)[1].split('"', 1)[0]
    assert client.get(f"{url}?v={version}", **HTMX).status_code == 204
    client.post(action_url("acknowledge", incident))
    changed = client.get(f"{url}?v={version}", **HTMX)
    assert changed.status_code == 200
    assert "incident-changed" in json.loads(changed["HX-Trigger"])
    assert 'data-testid="status-badge">Acknowledged<' in changed.content.decode()


def test_alerts_partial(client, make_user, post_webhook):
    login(client, make_user)
    incident = ingest(post_webhook, [alert(pod="vllm-chat-7")])
    response = client.get(reverse("incidents:alerts", args=[incident.pk]), **HTMX)
    assert response.status_code == 200
    assert "<html" not in response.content.decode()
    assert "vllm-chat-7" in response.content.decode()


# --- webhook receipts -----------------------------------------------------------------
def test_receipts_need_the_permission(client, make_user):
    login(client, make_user)  # responder
    assert client.get(reverse("incidents:receipts")).status_code == 403


def test_receipt_log_filters_and_detail(client, make_user, post_webhook):
    login(client, make_user, "cmd", roles.COMMANDER)
    ok = post_webhook(notification([alert()]))
    assert ok.status_code == 200
    bad = post_webhook(None, raw=b'{"version": "4", "alerts": "<b>nope</b>"}')
    assert bad.status_code == 400
    dead_id = bad.json()["receipt"]
    page = client.get(reverse("incidents:receipts")).content.decode()
    assert page.count('class="badge outcome-') == 2
    dead = client.get(reverse("incidents:receipts") + "?outcome=dead").content.decode()
    assert dead.count('class="badge outcome-') == 1
    assert f"#{dead_id}" in dead
    accepted = client.get(reverse("incidents:receipts") + "?outcome=accepted").content.decode()
    incident_id = ok.json()["incidents"][0]
    assert reverse("incidents:detail", args=[incident_id]) in accepted
    detail = client.get(reverse("incidents:receipt-detail", args=[dead_id])).content.decode()
    assert "&lt;b&gt;nope&lt;/b&gt;" in detail
    assert "<b>nope</b>" not in detail
    assert '"version": "4"' in detail.replace("&quot;", '"')  # pretty-printed
    assert ">Replay</button>" in detail


def test_replay_is_queued(client, make_user, django_capture_on_commit_callbacks):
    login(client, make_user, "cmd", roles.COMMANDER)
    receipt = WebhookReceipt.objects.create(
        received_at=timezone.now(),
        body=json.dumps({"version": "4"}),
        outcome=ReceiptOutcome.REJECTED,
        http_status=400,
        error="alerts: missing",
        error_field="alerts",
    )
    url = reverse("incidents:receipt-replay", args=[receipt.pk])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(url, follow=True)
    assert len(callbacks) == 1
    assert "Replay queued" in response.content.decode()
    # A receipt's outcome is never rewritten (a database trigger refuses): an accepted one.
    accepted = WebhookReceipt.objects.create(
        received_at=timezone.now(), body="{}", outcome=ReceiptOutcome.ACCEPTED, http_status=200
    )
    url = reverse("incidents:receipt-replay", args=[accepted.pk])
    refused = client.post(url, follow=True).content.decode()
    assert "only rejected or failed bodies can be replayed" in refused


def test_responder_cannot_replay(client, make_user):
    login(client, make_user)
    receipt = WebhookReceipt.objects.create(
        received_at=timezone.now(), body="{}", outcome=ReceiptOutcome.REJECTED, http_status=400
    )
    response = client.post(reverse("incidents:receipt-replay", args=[receipt.pk]))
    assert response.status_code == 403


def test_error_pages_render(client, make_user, settings):
    settings.DEBUG = False
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert b"Not found" in response.content
    from django.template.loader import get_template

    html = get_template("500.html").render()  # no request, no context processors
    assert "The console hit an error" in html


def test_admin_pages(client, make_user, post_webhook):
    ingest(post_webhook, [alert()])
    client.force_login(make_user("root", None, is_staff=True, is_superuser=True))
    incident = Incident.objects.get()
    event = TimelineEvent.objects.filter(incident=incident).first()
    receipt = WebhookReceipt.objects.get()
    for url in (
        "/admin/incidents/incident/",
        f"/admin/incidents/incident/{incident.pk}/change/",
        "/admin/incidents/alert/",
        "/admin/incidents/timelineevent/",
        f"/admin/incidents/timelineevent/{event.pk}/change/",
        "/admin/incidents/webhookreceipt/",
        f"/admin/incidents/webhookreceipt/{receipt.pk}/change/",
    ):
        assert client.get(url).status_code == 200, url
    # The timeline is append-only and incidents come from alerts: no add, no delete.
    assert client.get("/admin/incidents/timelineevent/add/").status_code == 403
    assert client.get("/admin/incidents/incident/add/").status_code == 403
    delete = f"/admin/incidents/timelineevent/{event.pk}/delete/"
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert TimelineEvent.objects.filter(pk=event.pk).exists()
