"""The viewer's language and time zone: browser, switcher, saved preference, UTC toggle."""

import re
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.preferences.models import UserPreference
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
AT = datetime(2026, 12, 2, 8, 0, 0, tzinfo=UTC)


def test_the_browser_language_picks_the_page_language(client):
    assert '<html lang="en">' in client.get("/login/").content.decode()
    page = client.get("/login/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert '<html lang="zh-hans">' in page


def test_the_switcher_remembers_a_signed_out_choice_in_a_cookie(client):
    r = client.post("/preferences/language/", {"language": "zh-hans", "next": "/login/"})
    assert r.status_code == 302
    assert r["Location"] == "/login/"
    assert r.cookies["console_language"].value == "zh-hans"
    assert '<html lang="zh-hans">' in client.get("/login/").content.decode()


def test_an_unknown_language_is_refused_with_the_choices(client):
    r = client.post("/preferences/language/", {"language": "klingon"})
    assert r.status_code == 400
    assert "en, zh-hans" in r.content.decode()


def test_the_switcher_never_redirects_off_site(client):
    r = client.post("/preferences/language/", {"language": "en", "next": "https://evil.example/"})
    assert r["Location"] == "/"


def test_a_signed_in_choice_is_saved_and_beats_the_browser(client, make_user):
    user = make_user()
    client.force_login(user)
    client.post("/preferences/language/", {"language": "zh-hans", "next": "/"})
    assert UserPreference.objects.get(user=user).language == "zh-hans"
    # Another browser, English by Accept-Language: the saved choice comes back at login.
    other = type(client)()
    other.post("/login/", {"username": "alice", "password": "pw-alice"})
    page = other.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="zh-hans">' in page


def test_following_the_browser_again_clears_the_saved_language(client, make_user):
    user = make_user()
    client.force_login(user)
    client.post("/preferences/language/", {"language": "zh-hans"})
    client.post("/preferences/language/", {"language": ""})
    assert UserPreference.objects.get(user=user).language == ""
    assert '<html lang="en">' in client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_applying_the_saved_preference_costs_no_query(client, make_user):
    user = make_user()
    UserPreference.objects.create(user=user, language="zh-hans", show_utc=True)
    client.post("/login/", {"username": "alice", "password": "pw-alice"})
    with CaptureQueriesContext(connection) as queries:
        page = client.get("/").content.decode()
    assert '<html lang="zh-hans">' in page
    assert not [q for q in queries if "console_userpreference" in q["sql"]]


def test_times_follow_the_browser_zone_unless_utc_is_chosen(client, make_user):
    client.force_login(make_user())
    incident = IncidentFactory(triggered_at=AT, started_at=AT)
    client.cookies["console_tz"] = "Asia/Shanghai"
    page = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert "2026-12-02 16:00:00" in page
    assert 'data-testid="utc-toggle"' in page
    client.post("/preferences/utc/", {"utc": "1"})
    page = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert "2026-12-02 08:00:00 UTC" in page
    assert "2026-12-02 16:00:00" not in page


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "x" * 200])
def test_a_made_up_browser_zone_is_ignored(client, make_user, zone):
    client.force_login(make_user())
    incident = IncidentFactory(triggered_at=AT, started_at=AT)
    client.cookies["console_tz"] = zone
    r = client.get(f"/incidents/{incident.pk}/")
    assert r.status_code == 200
    assert "2026-12-02 08:00:00 UTC" in r.content.decode()


def test_a_bad_utc_value_is_refused(client):
    r = client.post("/preferences/utc/", {"utc": "maybe"})
    assert r.status_code == 400
    assert "utc must be 0 or 1" in r.content.decode()


def test_the_api_answers_in_the_language_its_request_names_and_in_utc(client, make_user):
    # A saved preference and the browser's zone never change what a program reads.
    client.force_login(make_user("bo"))
    UserPreference.objects.create(user=User.objects.get(username="bo"), language="zh-hans")
    incident = IncidentFactory(triggered_at=AT, started_at=AT)
    client.cookies["console_tz"] = "Asia/Shanghai"
    r = client.get(f"/api/v1/incidents/{incident.pk}/")
    assert r["Content-Language"] == "en"
    assert r.json()["triggered_at"].startswith("2026-12-02T08:00:00")
    r = client.get("/api/v1/incidents/?status=nonsense")
    assert r.status_code == 400
    assert not re.search(r"[\u4e00-\u9fff]", r.content.decode())
    # Accept-Language (or ?lang=) names the language of the words, never of the times.
    r = client.get(f"/api/v1/incidents/{incident.pk}/", HTTP_ACCEPT_LANGUAGE="zh-CN,en;q=0.5")
    assert r["Content-Language"] == "zh-hans"
    assert r.json()["triggered_at"].startswith("2026-12-02T08:00:00")
    r = client.get("/api/v1/incidents/?status=nonsense&lang=zh-hans")
    assert r.status_code == 400
    assert re.search(r"[\u4e00-\u9fff]", r.content.decode())
    r = client.get("/api/v1/incidents/?lang=klingon", HTTP_ACCEPT_LANGUAGE="fr, *")
    assert r["Content-Language"] == "en"


def test_switching_language_says_it_applies_to_the_accounts_other_sessions(client, make_user):
    client.force_login(make_user("lin"))
    page = client.get("/").content.decode()
    assert "your other signed-in sessions switch too" in page  # the button's title
    r = client.post("/preferences/language/", {"language": "zh-hans", "next": "/"}, follow=True)
    text = r.content.decode()
    assert "语言已保存到您的账号：简体中文" in text
    assert "其他浏览器、手机" in text
    # Signed out, only this browser's cookie changes: nothing is said about other sessions.
    client.logout()
    r = client.post("/preferences/language/", {"language": "en", "next": "/login/"}, follow=True)
    assert "other signed-in sessions" not in r.content.decode()
