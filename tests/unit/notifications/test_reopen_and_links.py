"""Issue 25, item 7: an incident firing again is an event of its own; links in
notifications follow how the console is reached (not a hard-coded port 8000); a drill's
incident opens as a drill, so a rule that excludes drills never hears of it."""

from datetime import timedelta

import pytest
from django.core.checks import run_checks
from django.utils import timezone

from console import roles
from console.management.commands.runstack import console_url_env
from drills.models import DrillPlan, DrillRun, DrillRunStatus
from incidents.models import Incident
from notifications import links
from notifications.events import Notice
from notifications.messages import message_build
from notifications.models import Delivery, Event
from tests.payloads import BASE, alert, notification, resolved

pytestmark = pytest.mark.django_db


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


# --- b. firing again ----------------------------------------------------------------
def test_a_mitigated_incident_firing_again_notifies_a_rule_that_selects_it(
    post_webhook, webhook_target, make_rule, queued, committed
):
    make_rule(webhook_target, events=[Event.INCIDENT_REOPENED])
    with committed():
        post_webhook(notification([alert()]))
        post_webhook(notification([resolved(alert())]))
    incident = Incident.objects.get()
    assert incident.status == "mitigated"
    assert not Delivery.objects.exists()  # opened and mitigated: not selected
    with committed():
        post_webhook(notification([alert(starts_at=BASE + timedelta(minutes=5))]))
    assert Incident.objects.get().status == "triggered"
    (delivery,) = Delivery.objects.all()
    assert delivery.event == Event.INCIDENT_REOPENED
    assert delivery.body["details"] == {"previous_status": "mitigated", "reopened_by": "alerts"}
    assert f"Incident #{incident.pk} fired again after it was mitigated" in delivery.summary
    assert queued == [delivery.pk]


def test_old_rules_that_listed_opened_keep_hearing_of_reopenings():
    from importlib import import_module

    from django.apps import apps

    from notifications.models import Rule

    migration = import_module("notifications.migrations.0002_reopen_and_links")
    rule = Rule.objects.create(name="opened", events=["incident_opened"])
    other = Rule.objects.create(name="resolved", events=["incident_resolved"])
    migration._rules_keep_reopenings(apps, None)
    rule.refresh_from_db()
    other.refresh_from_db()
    assert rule.events == ["incident_opened", "incident_reopened"]
    assert other.events == ["incident_resolved"]


# --- a. links follow how the console is reached --------------------------------------
def _link(incident: Incident) -> str:
    notice = Notice(
        event=Event.INCIDENT_OPENED, key="k", incident_id=incident.pk, occurred_at=timezone.now()
    )
    return message_build(notice, incident)[1]["url"]


@pytest.fixture
def no_console_url(settings, monkeypatch):
    settings.NOTIFY_CONSOLE_URL = ""
    settings.ALLOWED_HOSTS = ["127.0.0.1", "testserver"]
    monkeypatch.setattr(links, "_last_written", None)  # this process wrote nothing yet


def test_without_a_configured_url_links_follow_the_requests_people_make(
    client, make_user, no_console_url
):
    from tests.factories import IncidentFactory

    incident = IncidentFactory()
    assert _link(incident) == f"/incidents/{incident.pk}/"  # nothing seen: no guessed port
    client.force_login(make_user("rita", roles.RESPONDER))
    assert client.get("/", HTTP_HOST="127.0.0.1:8123").status_code == 200
    assert _link(incident) == f"http://127.0.0.1:8123/incidents/{incident.pk}/"
    # A Host that ALLOWED_HOSTS refuses is never recorded.
    client.get("/", HTTP_HOST="evil.example:9999")
    assert _link(incident) == f"http://127.0.0.1:8123/incidents/{incident.pk}/"


def test_an_anonymous_request_is_not_how_people_reach_it(client, no_console_url):
    from tests.factories import IncidentFactory

    incident = IncidentFactory()
    client.get("/healthz", HTTP_HOST="127.0.0.1:7000")
    assert _link(incident) == f"/incidents/{incident.pk}/"


def test_a_configured_url_wins(client, make_user, settings):
    from tests.factories import IncidentFactory

    settings.NOTIFY_CONSOLE_URL = "https://console.example.com/"
    incident = IncidentFactory()
    client.force_login(make_user("rita", roles.RESPONDER))
    client.get("/", HTTP_HOST="127.0.0.1")
    assert _link(incident) == f"https://console.example.com/incidents/{incident.pk}/"


def test_make_run_sets_the_url_from_the_port_it_serves_on(settings):
    settings.NOTIFY_CONSOLE_URL = ""
    assert console_url_env("127.0.0.1", 8123) == {"NOTIFY_CONSOLE_URL": "http://127.0.0.1:8123"}
    assert console_url_env("0.0.0.0", 8123) == {}  # noqa: S104 (requests tell then)
    settings.NOTIFY_CONSOLE_URL = "https://ops.example"
    assert console_url_env("127.0.0.1", 8123) == {"NOTIFY_CONSOLE_URL": "https://ops.example"}


def test_check_deploy_requires_the_url(settings):
    settings.NOTIFY_CONSOLE_URL = ""
    ids = {m.id for m in run_checks(include_deployment_checks=True)}
    assert "notifications.E001" in ids
    settings.NOTIFY_CONSOLE_URL = "console.example.com"
    ids = {m.id for m in run_checks(include_deployment_checks=True)}
    assert "notifications.E002" in ids
    settings.NOTIFY_CONSOLE_URL = "https://console.example.com"
    ids = {m.id for m in run_checks(include_deployment_checks=True)}
    assert not ids & {"notifications.E001", "notifications.E002"}


# --- c. a drill's incident opens as a drill ------------------------------------------
def test_a_running_drills_incident_opens_as_a_drill_and_skips_rules_without_drills(
    post_webhook, webhook_target, make_rule, queued, committed, make_user
):
    make_rule(webhook_target, events=[Event.INCIDENT_OPENED], include_drills=False)
    cara = make_user("cara", roles.COMMANDER)
    plan = DrillPlan.objects.create(
        title="ttft drill", runbook="ttft-spike", namespace="llm-serving", lws="vllm-chat",
        fault="ttft-spike", created_by=cara, created_at=timezone.now(),
    )  # fmt: skip
    DrillRun.objects.create(
        plan=plan, runbook=plan.runbook, namespace="llm-serving", lws="vllm-chat",
        status=DrillRunStatus.RUNNING, started_by=cara, started_at=timezone.now(),
        injected_at=timezone.now() - timedelta(seconds=30),
    )  # fmt: skip
    with committed():
        post_webhook(notification([alert()]))
        # Another target is nobody's drill: it opens as a real incident and is told.
        other = notification(
            [alert(pod="other-0", extra_labels={"lws": "vllm-other"})],
            group_key='{}:{alertname="VLLMHighTTFT", lws="vllm-other"}',
        )
        other["groupLabels"]["lws"] = "vllm-other"
        post_webhook(other)
    drill, real = Incident.objects.order_by("id")
    assert (drill.is_drill, real.is_drill) == (True, False)
    (delivery,) = Delivery.objects.all()
    assert delivery.incident == real
