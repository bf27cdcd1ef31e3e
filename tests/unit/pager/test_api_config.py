"""Heartbeats and maintenance windows over the pager API: a heartbeat's token is shown
once (and works at its check-in address), windows are planned and cancelled, and bad
input answers 400 naming the problem."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from pager.models import Heartbeat, MaintenanceWindow, Team
from tests.unit.pager import test_api as base

pytestmark = pytest.mark.django_db

API = base.API
api_as = base.api_as


@pytest.fixture
def commander(api_as):
    return api_as(roles.COMMANDER, "mia")


# --- heartbeats -------------------------------------------------------------------------------
def test_a_heartbeats_token_is_shown_once_and_checks_in(commander, api_as):
    Team.objects.create(slug="infra", name="Infra")
    r = commander.post(API + "heartbeats/",
                       {"name": "Nightly backup", "team": "infra", "interval_seconds": 3600},
                       format="json")  # fmt: skip
    assert r.status_code == 201, r.content
    made = r.json()
    token = made["token"]
    assert len(token) >= 32
    assert (made["slug"], made["team"], made["kind"], made["state"]) == (
        "nightly-backup", "infra", "http", "waiting"
    )  # fmt: skip
    assert made["grace_seconds"] == 60  # HEARTBEAT_GRACE_SECONDS
    assert made["beat_url"].endswith("/api/v1/pager/heartbeats/nightly-backup/beat")
    # Never again: not in the list, not stored.
    listed = api_as(roles.VIEWER).get(API + "heartbeats/")
    assert listed.status_code == 200
    assert token not in listed.content.decode()
    assert "token" not in listed.json()["results"][0]
    assert token not in Heartbeat.objects.get().token_hash
    # The token works where beat_url says.
    r = APIClient().post(made["beat_url"], HTTP_AUTHORIZATION=f"Bearer {token}")
    assert r.status_code == 200, r.content
    assert Heartbeat.objects.get().last_seen_at is not None


def test_heartbeat_input_errors(commander):
    for body, field in [
        ({"interval_seconds": 3600}, "name"),
        ({"name": "x", "interval_seconds": 0}, "interval_seconds"),
        ({"name": "x", "interval_seconds": "often"}, "interval_seconds"),
        ({"name": "x", "interval_seconds": 3600, "team": "no-such-team"}, "team"),
        ({"name": "x", "interval_seconds": 3600, "grace_seconds": -1}, "grace_seconds"),
    ]:
        r = commander.post(API + "heartbeats/", body, format="json")
        assert r.status_code == 400, body
        assert field in r.json(), r.json()
    r = commander.post(API + "heartbeats/", {"name": "x", "interval_seconds": 5}, format="json")
    assert r.status_code == 400
    assert "between 60" in r.json()["detail"]
    assert not Heartbeat.objects.exists()


def test_removing_a_heartbeat(commander):
    made = commander.post(API + "heartbeats/", {"name": "cron", "interval_seconds": 600},
                          format="json").json()  # fmt: skip
    assert commander.delete(f"{API}heartbeats/{made['slug']}/").status_code == 204
    assert not Heartbeat.objects.exists()
    r = commander.delete(f"{API}heartbeats/{made['slug']}/")
    assert r.status_code == 404
    assert made["slug"] in r.json()["detail"]


# --- maintenance windows ----------------------------------------------------------------------
def test_plan_list_and_cancel_a_window(commander, api_as):
    Team.objects.create(slug="infer", name="Inference")
    start = (timezone.now() + timedelta(hours=1)).replace(microsecond=0)
    body = {"name": "Driver upgrade", "team": "infer", "matchers": {"namespace": "llm-prod-*"},
            "starts_at": start.isoformat(), "ends_at": (start + timedelta(hours=2)).isoformat(),
            "recurrence": "FREQ=WEEKLY;BYDAY=TU", "time_zone": "Europe/Berlin",
            "reason": "CUDA 12.8"}  # fmt: skip
    r = commander.post(API + "maintenance-windows/", body, format="json")
    assert r.status_code == 201, r.content
    made = r.json()
    assert (made["team"], made["matchers"], made["created_by"]) == (
        "infer", {"namespace": "llm-prod-*"}, "mia"
    )  # fmt: skip
    viewer = api_as(roles.VIEWER)
    assert [w["id"] for w in viewer.get(API + "maintenance-windows/").json()["results"]] == [
        made["id"]
    ]
    r = commander.post(f"{API}maintenance-windows/{made['id']}/cancel/")
    assert r.status_code == 200
    assert r.json()["cancelled_at"] is not None
    assert commander.post(f"{API}maintenance-windows/{made['id']}/cancel/").status_code == 409
    # Cancelled: only with include_past.
    assert viewer.get(API + "maintenance-windows/").json()["count"] == 0
    past = viewer.get(API + "maintenance-windows/", {"include_past": "true"}).json()
    assert past["count"] == 1
    assert commander.post(f"{API}maintenance-windows/{2**63}/cancel/").status_code == 404


def test_window_input_errors(commander):
    start = timezone.now() + timedelta(hours=1)
    times = {"starts_at": start.isoformat(), "ends_at": (start + timedelta(hours=1)).isoformat()}
    for body, problem in [
        ({"name": "n", **times}, "team or at least one label"),
        ({"name": "n", "matchers": {"colour": "red"}, **times}, "not a label"),
        ({"name": "n", "matchers": {"namespace": "x"}, "recurrence": "EVERY TUESDAY", **times},
         "repeat rule"),
        ({"name": "n", "matchers": {"namespace": "x"}, "time_zone": "Mars/Olympus", **times},
         "Unknown time zone"),
        ({"name": "n", "matchers": {"namespace": "x"}, "starts_at": times["ends_at"],
          "ends_at": times["starts_at"]}, "end after"),
    ]:  # fmt: skip
        r = commander.post(API + "maintenance-windows/", body, format="json")
        assert r.status_code == 400, body
        assert problem in r.json()["detail"], r.json()
    r = commander.post(API + "maintenance-windows/", {"name": "n", "team": "nope", **times},
                       format="json")  # fmt: skip
    assert r.status_code == 400
    assert "team" in r.json()
    r = commander.post(API + "maintenance-windows/", {"name": "n"}, format="json")
    assert r.status_code == 400
    assert {"starts_at", "ends_at"} <= set(r.json())
    assert not MaintenanceWindow.objects.exists()
