"""The sign-in audit log: every login, logout, failed login and role change becomes one
row with the client's address and browser, whichever way it came in; admins read it on
/audit/ and in the Django admin, nobody can change it."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from console import roles
from console.audit.models import AuditEvent, AuditKind, AuditMethod

pytestmark = pytest.mark.django_db

UA = "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0"


def web_login(client, username, password, **extra):
    extra.setdefault("REMOTE_ADDR", "10.0.0.7")
    extra.setdefault("HTTP_USER_AGENT", UA)
    return client.post("/login/", {"username": username, "password": password}, **extra)


def events(**filters) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(**filters).order_by("id"))


def test_a_password_login_and_logout_are_recorded_with_address_and_browser(client, make_user):
    user = make_user("lena", roles.RESPONDER)
    assert web_login(client, "lena", "pw-lena").status_code == 302
    client.post("/logout/", REMOTE_ADDR="10.0.0.7", HTTP_USER_AGENT=UA)
    login, logout = events(user=user, kind__in=[AuditKind.LOGIN, AuditKind.LOGOUT])
    assert (login.kind, login.method) == (AuditKind.LOGIN, AuditMethod.PASSWORD)
    assert (logout.kind, logout.method) == (AuditKind.LOGOUT, AuditMethod.SESSION)
    for row in (login, logout):
        assert (row.username, row.ip, row.user_agent) == ("lena", "10.0.0.7", UA)


def test_a_wrong_password_and_an_unknown_name_are_recorded_as_failures(client, make_user):
    make_user("lena", roles.RESPONDER)
    web_login(client, "lena", "wrong")
    web_login(client, "nobody", "guess")
    failures = events(kind=AuditKind.LOGIN_FAILED)
    assert [(f.username, f.user_id, f.method) for f in failures] == [
        ("lena", None, AuditMethod.PASSWORD),
        ("nobody", None, AuditMethod.PASSWORD),
    ]
    assert failures[0].reason == "Wrong username or password."
    assert failures[0].ip == "10.0.0.7"


def test_a_locked_out_attempt_says_so(client, make_user, settings):
    settings.AXES_FAILURE_LIMIT = 2
    make_user("lena", roles.RESPONDER)
    for _ in range(3):
        web_login(client, "lena", "wrong")
    assert web_login(client, "lena", "pw-lena").status_code == 429
    last = events(kind=AuditKind.LOGIN_FAILED)[-1]
    assert "Locked out" in last.reason


def test_the_address_behind_trusted_proxies_is_the_one_recorded(client, make_user, settings):
    settings.LOGIN_TRUSTED_PROXY_COUNT = 1
    make_user("lena", roles.RESPONDER)
    web_login(client, "lena", "pw-lena", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9")
    assert events(kind=AuditKind.LOGIN)[0].ip == "203.0.113.9"


def test_the_api_token_endpoint_is_recorded_as_such(client, make_user):
    make_user("tom", roles.RESPONDER)
    for password in ("wrong", "pw-tom"):
        client.post(
            "/api/v1/auth/token/",
            {"username": "tom", "password": password},
            content_type="application/json",
            REMOTE_ADDR="10.1.1.1",
        )
    failed, ok = events(username="tom", kind__in=[AuditKind.LOGIN, AuditKind.LOGIN_FAILED])
    assert (failed.kind, failed.method) == (AuditKind.LOGIN_FAILED, AuditMethod.API_TOKEN)
    assert (ok.kind, ok.method, ok.ip) == (AuditKind.LOGIN, AuditMethod.API_TOKEN, "10.1.1.1")


def test_a_role_change_in_the_admin_or_a_shell_is_recorded(make_user):
    user = make_user("lena", roles.VIEWER)
    user.groups.add(Group.objects.get(name=roles.COMMANDER))
    Group.objects.get(name=roles.VIEWER).user_set.remove(user)
    user.groups.clear()
    changes = events(user=user, kind=AuditKind.ROLE_CHANGED)
    assert [(c.old, c.new) for c in changes] == [
        ([], ["viewer"]),  # make_user
        (["viewer"], ["viewer", "commander"]),
        (["viewer", "commander"], ["commander"]),
        (["commander"], []),
    ]
    assert {c.method for c in changes} == {AuditMethod.GROUPS}


def test_a_group_that_is_no_role_changes_no_role(make_user):
    user = make_user("lena", roles.VIEWER)
    user.groups.add(Group.objects.create(name="book-club"))
    assert len(events(user=user, kind=AuditKind.ROLE_CHANGED)) == 1  # only make_user's


# --- reading it -------------------------------------------------------------------------
def test_admins_read_the_log_and_filter_it(client, make_user):
    make_user("lena", roles.RESPONDER)
    web_login(Client(), "lena", "wrong")
    web_login(Client(), "lena", "pw-lena")
    client.force_login(make_user("ada", roles.ADMIN))
    page = client.get("/audit/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Sign-in audit log" in text
    assert "Wrong username or password." in text
    assert "10.0.0.7" in text
    failed_only = client.get("/audit/", {"kind": "login_failed", "user": "len"}).content.decode()
    assert failed_only.count('data-kind="login_failed"') == 1
    assert 'data-kind="login"' not in failed_only
    nobody = client.get("/audit/", {"user": "zzz"}).content.decode()
    assert "Nothing matches these filters." in nobody


def test_the_log_is_for_admins_only(client, make_user):
    client.force_login(make_user("cara", roles.COMMANDER))
    assert client.get("/audit/").status_code == 403
    assert "Audit log" not in client.get("/").content.decode()


def test_the_page_costs_the_same_queries_for_many_rows(
    client, make_user, django_assert_max_num_queries
):
    make_user("lena", roles.RESPONDER)
    client.force_login(make_user("ada", roles.ADMIN))
    for _ in range(30):
        web_login(Client(), "lena", "wrong")
    with django_assert_max_num_queries(12):
        assert client.get("/audit/").status_code == 200


def test_the_django_admin_shows_the_log_read_only(client, make_user):
    client.force_login(make_user("ada", roles.ADMIN, is_staff=True))
    web_login(Client(), "ghost", "guess")
    listing = client.get("/admin/console/auditevent/")
    assert listing.status_code == 200
    assert "ghost" in listing.content.decode()
    row = AuditEvent.objects.get(username="ghost")
    assert client.get("/admin/console/auditevent/add/").status_code == 403
    assert client.post(f"/admin/console/auditevent/{row.pk}/delete/").status_code == 403
    assert AuditEvent.objects.filter(pk=row.pk).exists()
