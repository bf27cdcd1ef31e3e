"""Look-alike usernames (issue 23, finding 6): a name is compared with the others by its
key (NFKC, case-folded, marks and invisible characters dropped, dotless i folded into i),
and the keys are unique in the database, so a full-width `Admin`, `ADM` + a dotted
capital I + `N` or `admin` + a zero-width space cannot become an account beside `admin`,
whichever way the account is made."""

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from console import roles
from console.oidc.services import SignInRefused, oidc_account_sync
from console.usernames.keys import UsernameRefused, username_check, username_key
from console.usernames.models import UsernameKey

pytestmark = pytest.mark.django_db

ISSUER = "https://idp.example.test/realms/acme"
LOOK_ALIKES = [
    pytest.param("\uff21dmin", id="full-width A"),
    pytest.param("\uff41\uff44\uff4d\uff49\uff4e", id="all full-width"),
    pytest.param("ADM\u0130N", id="capital I with dot above"),
    pytest.param("adm\u0131n", id="dotless i"),
    pytest.param("admi\u0307n", id="i + combining dot above"),
    pytest.param("ADMIN", id="upper case"),
]
INVISIBLE = [
    pytest.param("admin\u200b", id="zero-width space"),
    pytest.param("ad\u00admin", id="soft hyphen"),
    pytest.param("admin\u3164", id="Hangul filler (a letter to Django's validator)"),
    pytest.param("\u202eadmin", id="right-to-left override"),
]


@pytest.fixture
def sso(settings):
    settings.OIDC_ENABLED = True
    settings.OIDC_ISSUER = ISSUER
    settings.OIDC_ROLE_GROUPS = {"responder": ["sre-oncall"], "admin": ["console-admins"]}
    return settings


def sync(username: str, sub: str = "u-1") -> User:
    request = RequestFactory().get("/oidc/callback/")
    claims = {"sub": sub, "preferred_username": username, "groups": ["sre-oncall"]}
    return oidc_account_sync(issuer=ISSUER, claims=claims, request=request)


# --- the key ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", LOOK_ALIKES + INVISIBLE)
def test_look_alikes_share_the_key_of_admin(name):
    assert username_key(name) == username_key("admin") == "admin"


@pytest.mark.parametrize("name", ["adminka", "ada", "José", "王小明", "ops.bot+1"])
def test_different_names_keep_different_keys(name):
    assert username_key(name) != "admin"


# --- single sign-on -----------------------------------------------------------------------
@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_sso_refuses_a_look_alike_of_an_existing_account_and_names_it(sso, make_user, name):
    make_user("admin", roles.ADMIN, is_superuser=True)
    with pytest.raises(SignInRefused, match="'admin'"):
        sync(name)
    assert list(User.objects.filter(username=name)) == []


@pytest.mark.parametrize("name", INVISIBLE)
def test_sso_refuses_invisible_characters_even_without_a_collision(sso, name):
    with pytest.raises(SignInRefused, match="invisible or formatting characters"):
        sync(name)
    assert list(User.objects.filter(username=name)) == []


def test_sso_refuses_a_name_mixing_latin_and_cyrillic(sso):
    with pytest.raises(SignInRefused, match=r"alphabets that look alike \(Cyrillic, Latin\)"):
        sync("\u0430dmin")  # a Cyrillic a


def test_a_legitimate_new_name_still_signs_in(sso, make_user):
    make_user("admin", roles.ADMIN)
    for sub, name in enumerate(["adminka", "José", "王小明", "ops.bot+1"]):
        user = sync(name, sub=f"u-{sub}")
        assert user.username == name
        assert UsernameKey.objects.get(user=user).key == username_key(name)


# --- the database -------------------------------------------------------------------------
def test_the_database_refuses_a_look_alike_whoever_creates_it(make_user):
    make_user("admin", roles.ADMIN)
    with pytest.raises(IntegrityError, match="'admin'"), transaction.atomic():
        User.objects.create_user("\uff21dmin")  # no form, no service: a shell, a script
    assert not User.objects.filter(username="\uff21dmin").exists()


def test_the_key_table_itself_is_unique():
    ada = User.objects.create_user("ada")
    bob = User.objects.create_user("bob")
    assert UsernameKey.objects.get(user=ada).key == "ada"
    with pytest.raises(IntegrityError), transaction.atomic():
        UsernameKey.objects.filter(user=bob).update(key="ada")


def test_a_rename_moves_the_key_and_a_colliding_rename_is_refused():
    ada = User.objects.create_user("ada")
    bob = User.objects.create_user("bob")
    ada.username = "Adele"
    ada.save()
    assert UsernameKey.objects.get(user=ada).key == "adele"
    assert User.objects.create_user("ada").username == "ada"  # the old key is free again
    bob.username = "\uff21\uff24\uff25\uff2c\uff25"  # ADELE, full-width
    with pytest.raises(IntegrityError, match="'Adele'"), transaction.atomic():
        bob.save()
    bob.refresh_from_db()
    assert bob.username == "bob"


def test_saving_a_user_without_renaming_is_not_checked_again():
    ada = User.objects.create_user("ada")
    with CaptureQueriesContext(connection) as done:
        ada.save(update_fields=["last_login"])  # every login does this
    sql = " ".join(q["sql"] for q in done.captured_queries)
    assert "console_usernamekey" not in sql
    assert '"username"' not in sql


# --- the check the forms and services share ------------------------------------------------
def test_the_check_allows_a_user_to_keep_their_own_name():
    ada = User.objects.create_user("ada")
    username_check("ada", user_pk=ada.pk)
    username_check("ADA", user_pk=ada.pk)  # a change of case of one's own name
    with pytest.raises(UsernameRefused, match="looks the same as the existing account 'ada'"):
        username_check("ADA")


# --- the admin ----------------------------------------------------------------------------
def admin_client(client, make_user):
    make_user("root", roles.ADMIN, is_superuser=True, is_staff=True)
    client.force_login(User.objects.get(username="root"))
    return client


def test_the_admins_user_form_refuses_look_alikes_and_takes_a_new_name(client, make_user):
    make_user("admin", roles.ADMIN)
    admin = admin_client(client, make_user)
    form = {"username": "ADMİN", "usable_password": "false"}
    page = admin.post("/admin/auth/user/add/", form)
    assert page.status_code == 200
    assert "looks the same as the existing account" in page.content.decode()
    page = admin.post("/admin/auth/user/add/", form | {"username": "admin\u200b"})
    assert "invisible or formatting characters" in page.content.decode()
    assert not User.objects.filter(username__in=["ADMİN", "admin\u200b"]).exists()
    done = admin.post("/admin/auth/user/add/", form | {"username": "grace"})
    assert done.status_code == 302
    assert User.objects.filter(username="grace").exists()


def test_the_admins_change_form_refuses_a_colliding_rename(client, make_user):
    make_user("admin", roles.ADMIN)
    bob = make_user("bob", roles.VIEWER)
    admin = admin_client(client, make_user)
    form = {
        "username": "\uff41\uff44\uff4d\uff49\uff4e",  # admin, full-width
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        "initial-date_joined_0": "2026-01-01",
        "initial-date_joined_1": "00:00:00",
    }
    page = admin.post(f"/admin/auth/user/{bob.pk}/change/", form)
    assert page.status_code == 200
    assert "looks the same as the existing account" in page.content.decode()
    bob.refresh_from_db()
    assert bob.username == "bob"
