"""Service accounts (issue 23, finding 5): the accounts the console acts as by itself
(the guard's, GUARD_USERNAME) exist from the migrations on, never by a lazy
get_or_create a person could beat to the name. They have no usable password (the login
page, the admin login and the token endpoint refuse them even if someone sets one), no
single sign-on identity, and their names are reserved."""

import logging

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, RequestFactory

from console import roles
from console.audit.models import AuditEvent, AuditKind
from console.errors import DomainError
from console.oidc.models import OidcIdentity
from console.oidc.services import SignInRefused, oidc_account_sync
from console.service_accounts import (
    GUARD,
    is_service_account,
    service_account_user,
    service_accounts_ensure,
)

pytestmark = pytest.mark.django_db

ISSUER = "https://idp.example.test/realms/acme"


@pytest.fixture
def sso(settings):
    settings.OIDC_ENABLED = True
    settings.OIDC_ISSUER = ISSUER
    settings.OIDC_ROLE_GROUPS = {"commander": ["sre-leads"], "admin": ["console-admins"]}
    return settings


def sync(username: str, sub: str = "u-1") -> User:
    request = RequestFactory().get("/oidc/callback/")
    claims = {"sub": sub, "preferred_username": username, "groups": ["sre-leads"]}
    return oidc_account_sync(issuer=ISSUER, claims=claims, request=request)


def test_the_guards_account_exists_after_migrate_with_no_way_in():
    guard = User.objects.get(username="console-guard")  # made by the migrations, not lazily
    assert is_service_account(guard)
    assert not guard.has_usable_password()
    assert guard.is_active  # an inactive user holds no permission at all
    assert not OidcIdentity.objects.filter(user=guard).exists()
    assert roles.user_roles(guard) == []
    assert guard.has_perm("actions.request_actionrun")
    assert not guard.has_perm("actions.approve_actionrun")
    assert service_account_user(GUARD) == guard


def test_people_are_not_service_accounts(make_user):
    assert not is_service_account(make_user("rita"))
    assert not is_service_account(User(username="Console-Guard"))  # exact names only


def test_a_first_time_sso_user_named_like_the_guard_is_refused(sso):
    guard = service_account_user(GUARD)
    for sub, name in enumerate(["console-guard", "Console-Guard", "\uff43onsole-guard"]):
        with pytest.raises(SignInRefused, match="reserved for the console's service account"):
            sync(name, sub=f"u-{sub}")
    assert list(User.objects.filter(username__icontains="guard")) == [guard]
    assert not OidcIdentity.objects.exists()


def test_the_name_stays_reserved_even_while_the_account_is_missing(sso):
    User.objects.filter(username="console-guard").delete()
    with pytest.raises(SignInRefused, match="reserved"):
        sync("console-guard")
    assert not User.objects.filter(username="console-guard").exists()


def test_a_missing_account_is_a_clear_error_not_a_new_account():
    User.objects.filter(username="console-guard").delete()
    with pytest.raises(DomainError, match=r"manage\.py migrate"):
        service_account_user(GUARD)
    assert not User.objects.filter(username="console-guard").exists()


@pytest.mark.parametrize("password_login", [True, False])
def test_password_logins_refuse_it_even_with_a_password_set(settings, password_login):
    settings.PASSWORD_LOGIN = password_login
    guard = service_account_user(GUARD)
    guard.is_superuser = True  # even an admin's slip does not open it
    guard.set_password("a-long-enough-password")
    guard.save()
    credentials = {"username": "console-guard", "password": "a-long-enough-password"}
    page = Client().post("/login/", credentials)
    assert "_auth_user_id" not in page.wsgi_request.session
    admin_login = Client().post("/admin/login/", credentials)
    assert "_auth_user_id" not in admin_login.wsgi_request.session
    api = Client().post("/api/v1/auth/token/", credentials, content_type="application/json")
    assert api.status_code in (400, 403)
    assert "token" not in api.json()
    refusals = AuditEvent.objects.filter(kind=AuditKind.LOGIN_FAILED, username="console-guard")
    assert refusals.count() == 3
    assert all("service account" in row.reason for row in refusals)


def test_the_admins_user_form_refuses_a_reserved_name(client, make_user):
    User.objects.filter(username="console-guard").delete()  # reserved even when missing
    make_user("root", roles.ADMIN, is_superuser=True, is_staff=True)
    client.force_login(User.objects.get(username="root"))
    page = client.post(
        "/admin/auth/user/add/", {"username": "console-guard", "usable_password": "false"}
    )
    assert "reserved for the console&#x27;s service account" in page.content.decode()
    assert not User.objects.filter(username="console-guard").exists()


def test_the_admin_cannot_rename_a_service_account(client, make_user):
    guard = service_account_user(GUARD)
    make_user("root", roles.ADMIN, is_superuser=True, is_staff=True)
    client.force_login(User.objects.get(username="root"))
    form = {
        "username": "guard2",
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        "initial-date_joined_0": "2026-01-01",
        "initial-date_joined_1": "00:00:00",
    }
    page = client.post(f"/admin/auth/user/{guard.pk}/change/", form)
    assert "it cannot be renamed" in page.content.decode()
    guard.refresh_from_db()
    assert guard.username == "console-guard"


def test_migrate_puts_a_taken_name_aside_and_makes_the_real_account(caplog):
    """A database where a person signed in as console-guard before this release: their
    account keeps its identity and role under another name; the guard gets its own."""
    User.objects.filter(username="console-guard").delete()
    squatter = User.objects.create_user("console-guard")  # as a first SSO sign-in made it
    OidcIdentity.objects.create(user=squatter, issuer=ISSUER, subject="u-9")
    with caplog.at_level(logging.WARNING, logger="console.service_accounts"):
        service_accounts_ensure()
    squatter.refresh_from_db()
    assert squatter.username == f"console-guard-taken-{squatter.pk}"
    assert OidcIdentity.objects.get(subject="u-9").user == squatter
    guard = service_account_user(GUARD)
    assert guard.pk != squatter.pk
    assert not guard.has_usable_password()
    assert guard.has_perm("actions.request_actionrun")
    assert f"renamed to 'console-guard-taken-{squatter.pk}'" in caplog.text


def test_migrate_adopts_the_account_the_guard_made_lazily_and_is_idempotent():
    before = service_account_user(GUARD)
    call_command("migrate", "console", verbosity=0)  # post_migrate runs the sync again
    service_accounts_ensure()
    after = service_account_user(GUARD)
    assert after.pk == before.pk
    assert User.objects.filter(username__startswith="console-guard").count() == 1
