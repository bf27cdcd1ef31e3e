"""The deliveries page and API: who sees them, what an empty or broken setup says, that
secrets never come back (page, API, admin), and sending a failed one again."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from notifications.models import Delivery, DeliveryStatus, Event, Target, TargetKind
from tests.factories import IncidentFactory
from tests.unit.notifications.conftest import SECRET

pytestmark = pytest.mark.django_db

SLACK_URL = "https://hooks.slack.com/services/T0SECRET/B0SECRET/tokenTOKENtoken"
PAGE = "/notifications/"
API = "/api/v1/notifications/deliveries/"


@pytest.fixture
def slack():
    return Target.objects.create(name="sre-slack", kind=TargetKind.SLACK, url=SLACK_URL)


@pytest.fixture
def rows(slack, webhook_target):
    incident = IncidentFactory()
    now = timezone.now()

    def make(target, status, key, **kw):
        return Delivery.objects.create(
            target=target, event=Event.INCIDENT_OPENED, event_key=key, incident=incident,
            summary=f"[SEV2] Incident #{incident.pk} opened", body={}, status=status,
            created_at=now, **kw,
        )  # fmt: skip

    return {
        "sent": make(slack, DeliveryStatus.SENT, "a", attempts=1, sent_at=now),
        "failed": make(
            webhook_target,
            DeliveryStatus.FAILED,
            "b",
            attempts=6,
            last_error="ops-webhook answered HTTP 500. Gave up after 6 attempts.",
        ),
        "pending": make(
            webhook_target,
            DeliveryStatus.PENDING,
            "c",
            last_error="Could not queue it for the worker (connection refused)",
        ),
    }


def login(client, people, who):
    client.force_login(people[who])
    return client


@pytest.mark.parametrize(
    ("who", "status"), [("vic", 403), ("rita", 403), ("cara", 200), ("ada", 200)]
)
def test_page_and_api_are_for_commanders_and_admins(client, people, who, status):
    login(client, people, who)
    assert client.get(PAGE).status_code == status
    assert client.get(API).status_code == status


def test_nav_link_for_commanders_only(client, people):
    assert (
        b">Notifications</a>"
        in login(client, people, "cara").get(reverse("incidents:list")).content
    )
    assert (
        b">Notifications</a>"
        not in login(client, people, "rita").get(reverse("incidents:list")).content
    )


def test_empty_page_says_how_to_set_up(client, people):
    page = login(client, people, "ada").get(PAGE).content.decode()
    assert "No target is set up, so nothing is sent." in page
    assert reverse("admin:notifications_target_add") in page
    assert "Nothing has been sent yet." in page
    # A commander without the admin is told whom to ask.
    page = login(client, people, "cara").get(PAGE).content.decode()
    assert "Ask an admin to add a target" in page


def test_targets_without_rules_say_so(client, people, slack):
    page = login(client, people, "ada").get(PAGE).content.decode()
    assert "No rule is enabled, so nothing is sent." in page


def test_rows_show_status_target_incident_attempts_and_error_never_a_secret(client, people, rows):
    page = login(client, people, "cara").get(PAGE).content.decode()
    assert page.count('data-status="') == 3
    assert "1 notification failed in the last 24 hours." in page
    assert "could not be handed to the worker" in page
    assert "ops-webhook answered HTTP 500. Gave up after 6 attempts." in page
    assert reverse("incidents:detail", args=[rows["sent"].incident_id]) in page
    assert "Slack (incoming webhook)" in page
    assert "Send again" in page
    for secret in (SLACK_URL, "T0SECRET", SECRET):
        assert secret not in page
    failed_only = client.get(PAGE, {"status": "failed"}).content.decode()
    assert failed_only.count('data-status="') == 1
    nothing = client.get(PAGE, {"event": "approval_wanted"}).content.decode()
    assert "No notification matches these filters." in nothing


def test_page_query_count_does_not_grow_with_rows(client, people, rows):
    login(client, people, "cara")

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(PAGE).status_code == 200
        return len(ctx.captured_queries)

    few = queries()
    incident = IncidentFactory()
    for n in range(20):
        Delivery.objects.create(
            target=rows["sent"].target, event=Event.INCIDENT_RESOLVED, event_key=f"more{n}",
            incident=incident, summary="s", body={}, created_at=timezone.now(),
        )  # fmt: skip
    assert queries() == few <= 14


def test_send_again(client, people, rows, queued, django_capture_on_commit_callbacks):
    login(client, people, "cara")
    failed = rows["failed"]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("notifications:retry", args=[failed.pk]), follow=True)
    assert f"Delivery #{failed.pk} is queued again" in response.content.decode()
    failed.refresh_from_db()
    assert failed.status == DeliveryStatus.QUEUED
    assert queued == [failed.pk]
    # Only a failed one; only with the role.
    response = client.post(reverse("notifications:retry", args=[rows["sent"].pk]), follow=True)
    assert "only a failed one is sent again" in response.content.decode()
    login(client, people, "rita")
    assert client.post(reverse("notifications:retry", args=[failed.pk])).status_code == 403


def test_api_lists_deliveries_without_secrets(client, people, rows):
    login(client, people, "cara")
    data = client.get(API).json()
    assert data["count"] == 3
    failed = next(d for d in data["results"] if d["status"] == "failed")
    assert failed["target"] == {
        "id": rows["failed"].target_id,
        "name": "ops-webhook",
        "kind": "webhook",
    }
    assert failed["incident"] == rows["failed"].incident_id
    assert failed["attempts"] == 6
    assert failed["last_error"].startswith("ops-webhook answered HTTP 500")
    assert {"event", "event_label", "summary", "created_at", "sent_at"} <= set(failed)
    text = client.get(API).content.decode()
    for secret in (SLACK_URL, "T0SECRET", SECRET, "/hook"):
        assert secret not in text
    assert client.get(API, {"status": "sent"}).json()["count"] == 1
    assert client.get(API, {"target": rows["failed"].target_id}).json()["count"] == 2
    assert client.get(API, {"status": "nonsense"}).status_code == 400


def test_api_is_in_the_openapi_schema(client, people):
    schema = login(client, people, "cara").get("/api/schema/?format=json").json()
    operation = schema["paths"][API]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {
        "status",
        "event",
        "target",
        "incident",
        "page",
    }
    assert {"200", "401", "403"} <= set(operation["responses"])


def test_admin_never_shows_a_target_secret_and_blank_keeps_it(
    client, people, slack, webhook_target
):
    login(client, people, "ada")
    for target in (slack, webhook_target):
        form = client.get(reverse("admin:notifications_target_change", args=[target.pk]))
        assert form.status_code == 200
        html = form.content.decode()
        for secret in (SLACK_URL, "T0SECRET", SECRET, webhook_target.url):
            assert secret not in html
    listing = client.get(reverse("admin:notifications_target_changelist")).content.decode()
    assert "Slack webhook at hooks.slack.com" in listing
    assert SLACK_URL not in listing
    # Saving with the write-only fields blank keeps them.
    response = client.post(
        reverse("admin:notifications_target_change", args=[webhook_target.pk]),
        {
            "name": "ops-webhook",
            "kind": "webhook",
            "enabled": "on",
            "url": "",
            "secret": "",
            "recipients": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    webhook_target.refresh_from_db()
    assert webhook_target.secret == SECRET
    assert webhook_target.url.endswith("/hook")


def test_admin_refuses_a_target_that_cannot_work(client, people):
    login(client, people, "ada")
    add = reverse("admin:notifications_target_add")
    page = client.post(
        add, {"name": "w", "kind": "webhook", "url": "https://hooks.example/x", "secret": "short"}
    )
    assert "signing secret of at least 16 characters" in page.content.decode()
    page = client.post(add, {"name": "s", "kind": "slack", "url": "https://example.com/x"})
    assert "Paste the incoming webhook URL Slack gave you" in page.content.decode()
    page = client.post(add, {"name": "m", "kind": "email", "recipients": "not-an-address"})
    assert "is not an email address" in page.content.decode()
    assert not Target.objects.exists()


def test_admin_test_notification(
    client, people, webhook_target, queued, django_capture_on_commit_callbacks
):
    login(client, people, "ada")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:notifications_target_changelist"),
            {"action": "send_test", "_selected_action": [webhook_target.pk]},
            follow=True,
        )
    assert "queued for ops-webhook" in response.content.decode()
    (delivery,) = Delivery.objects.all()
    assert (delivery.event, delivery.incident, queued) == (Event.TEST, None, [delivery.pk])
    assert delivery.body["actor"] == "ada"
