"""The pager's models in the Django admin: every page opens, secrets are write-only (a
blank field keeps the stored value), a rotation's times are the schedule's wall clock
whatever the admin's own zone, and history (pages, summaries) is read-only."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.urls import reverse

from console import roles
from console.viewer import TZ_COOKIE
from pager.models import (
    ContactMethod,
    EscalationPolicy,
    Rotation,
    Schedule,
    Team,
)
from pager.schedules.rotation import wall_clock

pytestmark = pytest.mark.django_db
MODELS = [
    "team", "schedule", "rotation", "override", "shiftswap", "pagerprofile",
    "escalationpolicy", "contactmethod", "page", "heartbeat", "maintenancewindow",
    "maintenancesummary",
]  # fmt: skip


@pytest.fixture
def ada(make_user, client):
    user = make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True)
    client.force_login(user)
    return user


@pytest.fixture
def schedule():
    team = Team.objects.create(slug="serving", name="Serving")
    return Schedule.objects.create(
        team=team, slug="primary", name="Primary", time_zone="Europe/Berlin"
    )


@pytest.mark.parametrize("model", MODELS)
def test_every_admin_page_opens(client, ada, schedule, model):
    assert client.get(reverse(f"admin:pager_{model}_changelist")).status_code == 200
    add = client.get(reverse(f"admin:pager_{model}_add"))
    assert add.status_code == (403 if model in ("page", "maintenancesummary", "shiftswap") else 200)


def test_contact_method_address_is_write_only(client, ada):
    url = reverse("admin:pager_contactmethod_add")
    response = client.post(
        url,
        {
            "user": ada.pk,
            "position": 1,
            "kind": "email",
            "label": "work",
            "address": "ada.lovelace@example.com",
            "enabled": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    method = ContactMethod.objects.get()
    change = reverse("admin:pager_contactmethod_change", args=[method.pk])
    page = client.get(change).content.decode()
    assert "ada.lovelace@example.com" not in page
    assert "Leave blank to keep the current value" in page
    response = client.post(
        change,
        {
            "user": ada.pk,
            "position": 1,
            "kind": "email",
            "label": "desk",
            "address": "",
            "enabled": "on",
        },
    )
    assert response.status_code == 302
    method.refresh_from_db()
    assert (method.label, method.address) == ("desk", "ada.lovelace@example.com")
    response = client.post(
        change,
        {
            "user": ada.pk,
            "position": 1,
            "kind": "ntfy",
            "address": "https://x.example/t",
            "enabled": "on",
        },
    )
    assert response.status_code == 200
    assert "starts with ntfy:// or ntfys://" in (response.content.decode())


def test_schedule_ical_url_is_write_only(client, ada, schedule):
    change = reverse("admin:pager_schedule_change", args=[schedule.pk])
    form = {
        "team": schedule.team_id, "name": "Primary", "slug": "primary",
        "time_zone": "Europe/Berlin", "ical_url": "https://cal.example.com/secret-abc.ics",
        "ical_text": "", "ical_refresh_minutes": 60,
        "rotations-TOTAL_FORMS": 0, "rotations-INITIAL_FORMS": 0,
    }  # fmt: skip
    assert client.post(change, form).status_code == 302
    schedule.refresh_from_db()
    assert schedule.ical_url == "https://cal.example.com/secret-abc.ics"
    assert "secret-abc" not in client.get(change).content.decode()
    assert client.post(change, {**form, "ical_url": ""}).status_code == 302
    schedule.refresh_from_db()
    assert schedule.ical_url == "https://cal.example.com/secret-abc.ics"


def test_rotation_times_are_the_schedules_wall_clock(client, ada, schedule):
    client.cookies[TZ_COOKIE] = "Asia/Shanghai"  # the admin's own zone must not shift it
    response = client.post(
        reverse("admin:pager_rotation_add"),
        {
            "schedule": schedule.pk,
            "name": "Weekly",
            "priority": 0,
            "frequency": "weekly",
            "interval": 1,
            "starts_at": "2026-11-02 09:00:00",
            "restrict_weekdays": "[]",
            "memberships-TOTAL_FORMS": 0,
            "memberships-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    rotation = Rotation.objects.get()
    assert wall_clock(rotation.starts_at) == datetime(2026, 11, 2, 9, 0)  # noqa: DTZ001
    change = client.get(reverse("admin:pager_rotation_change", args=[rotation.pk]))
    assert "09:00" in change.content.decode()
    listing = client.get(reverse("admin:pager_rotation_changelist")).content.decode()
    assert "2026-11-02 09:00 (Europe/Berlin)" in listing


def test_policy_with_steps_inline(client, ada, schedule):
    response = client.post(
        reverse("admin:pager_escalationpolicy_add"),
        {
            "name": "P",
            "repeat_times": 0,
            "ack_timeout_minutes": "",
            "steps-TOTAL_FORMS": 1,
            "steps-INITIAL_FORMS": 0,
            "steps-0-position": 1,
            "steps-0-action": "page_schedule",
            "steps-0-schedule": schedule.pk,
            "steps-0-wait_minutes": 5,
            "steps-0-severities": "[]",
            "steps-0-time_zone": "UTC",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    assert EscalationPolicy.objects.get().steps.get().schedule == schedule


def test_deleting_a_heartbeat_in_the_admin_goes_through_the_service(client, ada):
    from console.audit.models import AuditEvent, AuditKind
    from pager.heartbeats.services import heartbeat_create
    from pager.models import Heartbeat

    heartbeat, _token = heartbeat_create(
        name="nightly export", team_id=None, interval_seconds=300, grace_seconds=60, actor=ada
    )
    url = reverse("admin:pager_heartbeat_delete", args=[heartbeat.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Heartbeat.objects.filter(pk=heartbeat.pk).exists()
    reasons = AuditEvent.objects.filter(kind=AuditKind.PAGER_CONFIG).values_list(
        "reason", flat=True
    )
    assert "Heartbeat nightly export deleted" in list(reasons)


def test_a_contact_address_the_page_would_refuse_is_refused_in_the_admin(client, ada):
    answer = client.post(
        reverse("admin:pager_contactmethod_add"),
        {"user": ada.pk, "position": 1, "kind": "webhook", "label": "x",
         "address": "https://hooks.example.com/page", "enabled": "on"},
    )  # fmt: skip
    # A webhook needs its signing secret (#secret=...), as on the page.
    assert answer.status_code == 200
    assert b"secret" in answer.content
