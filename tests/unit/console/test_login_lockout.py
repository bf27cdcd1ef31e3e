"""Login guessing is throttled: N wrong passwords for one username from one address lock
that pair out for a cool-off, on the login page, the admin login and the API token
endpoint alike; an admin can unlock, and every failure is kept for audit."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from console import roles
from console.api_tokens.models import ApiToken

pytestmark = pytest.mark.django_db

LOGIN = "/login/"
ADMIN_LOGIN = "/admin/login/"
TOKEN_URL = "/api/v1/auth/token/"


@pytest.fixture(autouse=True)
def limits(settings):
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def web_login(client, username, password, *, url=LOGIN, ip="10.0.0.1"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=ip)


def api_token(client, username, password, *, ip="10.0.0.1"):
    return client.post(
        TOKEN_URL,
        {"username": username, "password": password},
        content_type="application/json",
        REMOTE_ADDR=ip,
    )


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


# --- the login page -------------------------------------------------------------------
def test_five_wrong_passwords_lock_out_even_the_right_one(client, make_user):
    make_user("lena", roles.RESPONDER)
    for _ in range(4):
        r = web_login(client, "lena", "wrong")
        assert r.status_code == 200
        assert "Please enter a correct username and password" in r.content.decode()
    r = web_login(client, "lena", "wrong")
    assert r.status_code == 429
    r = web_login(client, "lena", "pw-lena")
    assert r.status_code == 429
    page = r.content.decode()
    assert "Too many failed logins" in page
    assert "Try again after" in page
    assert "15 minutes" in page
    assert r["Retry-After"] == str(15 * 60)
    assert not logged_in(client)


def test_lockout_is_per_username_and_address(client, make_user):
    make_user("lena", roles.RESPONDER)
    make_user("otto", roles.RESPONDER)
    for _ in range(5):
        web_login(client, "lena", "wrong", ip="10.0.0.1")
    # Lena from her other address, and Otto from the guessed-at address, still get in.
    assert web_login(Client(), "lena", "pw-lena", ip="10.0.0.2").status_code == 302
    assert web_login(Client(), "otto", "pw-otto", ip="10.0.0.1").status_code == 302


def test_a_good_login_before_the_limit_starts_the_count_again(client, make_user):
    make_user("lena", roles.RESPONDER)
    for _ in range(4):
        web_login(client, "lena", "wrong")
    assert web_login(client, "lena", "pw-lena").status_code == 302
    client.logout()
    for _ in range(4):
        assert web_login(client, "lena", "wrong").status_code == 200
    assert web_login(client, "lena", "pw-lena").status_code == 302


def test_the_lockout_ends_after_the_cool_off(client, make_user):
    make_user("lena", roles.RESPONDER)
    for _ in range(5):
        web_login(client, "lena", "wrong")
    assert web_login(client, "lena", "pw-lena").status_code == 429
    # Sixteen minutes pass (the stored attempt time is what the cool-off is measured from).
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert web_login(client, "lena", "pw-lena").status_code == 302
    assert logged_in(client)


def test_an_admin_unlocks_with_axes_reset(client, make_user):
    make_user("lena", roles.RESPONDER)
    for _ in range(5):
        web_login(client, "lena", "wrong")
    call_command("axes_reset_username", "lena")
    assert web_login(client, "lena", "pw-lena").status_code == 302


def test_failed_logins_are_kept_for_audit_and_listed_in_the_admin(client, make_user):
    make_user("lena", roles.RESPONDER)
    for _ in range(5):
        web_login(client, "lena", "wrong", ip="10.9.8.7")
    failures = AccessFailureLog.objects.filter(username="lena", ip_address="10.9.8.7")
    assert failures.count() == 5
    assert failures.filter(locked_out=True).count() == 1
    admin = Client()
    admin.force_login(make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True))
    page = admin.get("/admin/axes/accessattempt/").content.decode()
    assert "lena" in page
    assert "10.9.8.7" in page
    assert "lena" in admin.get("/admin/axes/accessfailurelog/").content.decode()


# --- the admin login ------------------------------------------------------------------
def test_the_admin_login_locks_out_the_same_way(client, make_user):
    make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True)
    for _ in range(5):
        web_login(client, "ada", "wrong", url=ADMIN_LOGIN)
    r = web_login(client, "ada", "pw-ada", url=ADMIN_LOGIN)
    assert r.status_code == 429
    assert "Too many failed logins" in r.content.decode()
    # The same pair is locked on the console's own login page too.
    assert web_login(client, "ada", "pw-ada").status_code == 429


# --- the API token endpoint -----------------------------------------------------------
def test_token_endpoint_answers_a_new_token(client, make_user):
    user = make_user("tom", roles.RESPONDER)
    r = api_token(client, "tom", "pw-tom")
    assert r.status_code == 200, r.content
    token = r.json()["token"]
    assert ApiToken.objects.filter(user=user, pk=r.json()["id"]).exists()
    assert api_token(client, "tom", "pw-tom").json()["token"] != token  # a new one each time
    r = Client().get("/api/v1/incidents/", HTTP_AUTHORIZATION=f"Token {token}")
    assert r.status_code == 200


def test_token_endpoint_refuses_bad_input_with_a_message(client, make_user):
    make_user("tom", roles.RESPONDER)
    r = api_token(client, "tom", "wrong")
    assert r.status_code == 400
    assert "username or password" in r.json()["detail"]
    r = client.post(TOKEN_URL, {"username": "tom"}, content_type="application/json")
    assert r.status_code == 400
    assert "password" in str(r.json())
    r = client.post(TOKEN_URL, "not json", content_type="application/json")
    assert r.status_code == 400


def test_token_endpoint_needs_a_console_role(client, make_user):
    make_user("nora", role=None)
    r = api_token(client, "nora", "pw-nora")
    assert r.status_code == 403
    assert "console role" in r.json()["detail"]
    assert not ApiToken.objects.filter(user__username="nora").exists()


def test_token_endpoint_locks_out_with_json(client, make_user):
    make_user("tom", roles.RESPONDER)
    for _ in range(4):
        assert api_token(client, "tom", "wrong").status_code == 400
    r = api_token(client, "tom", "wrong")
    assert r.status_code == 429
    r = api_token(client, "tom", "pw-tom")
    assert r.status_code == 429
    body = r.json()
    assert "Too many failed logins" in body["detail"]
    assert body["retry_after_seconds"] == 15 * 60
    assert r["Retry-After"] == str(15 * 60)
    assert "token" not in body


def test_web_and_api_failures_count_toward_one_lockout(client, make_user):
    make_user("tom", roles.RESPONDER)
    for _ in range(3):
        web_login(client, "tom", "wrong")
    for _ in range(2):
        api_token(client, "tom", "wrong")
    assert api_token(client, "tom", "pw-tom").status_code == 429
    assert web_login(client, "tom", "pw-tom").status_code == 429


def test_token_endpoint_is_in_the_openapi_schema(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/auth/token/"]["post"]
    assert operation.get("security", []) in ([], [{}])  # no credentials needed to ask
    assert {"200", "400", "403", "429"} <= set(operation["responses"])
