"""A user's API tokens all end when their password changes (every way it can), when they
are deactivated, and when they lose their console role (groups, the superuser flag,
single sign-on); each revocation is in the audit log with why. Changes that are none of
these (a profile edit, a promotion, a password hash upgraded at login) leave them."""

import getpass

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from console import roles
from console.api_tokens.services import api_token_issue
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.oidc.services import SignInRefused
from tests.unit.console.test_oidc import sso, sync  # noqa: F401  (sso is a fixture)

pytestmark = pytest.mark.django_db

PROBE = "/api/v1/incidents/"
NEW_PASSWORD = "a-much-longer-Passw0rd-7"


class QuickPBKDF2(PBKDF2PasswordHasher):
    """A preferred hasher unlike the tests' MD5, so a login upgrades the stored hash."""

    algorithm = "pbkdf2_quick"
    iterations = 2


def new_token(user: User, client: str = "ci") -> str:
    return api_token_issue(user=user, client=client)[1]


def works(token: str) -> bool:
    status = Client(HTTP_AUTHORIZATION=f"Token {token}").get(PROBE).status_code
    assert status in (200, 401, 403), status
    return status == 200


def revoked(user: User) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=AuditKind.TOKEN_REVOKED, user=user).order_by("id"))


@pytest.fixture
def tom(make_user):
    return make_user("tom", roles.RESPONDER)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """A role is judged when its change commits; the test's own transaction never does,
    so this runs what would run at the commit."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


# --- the password -------------------------------------------------------------------------
def test_set_password_and_save_ends_every_token(tom):
    tokens = [new_token(tom, "ci"), new_token(tom, "grafana")]
    tom.set_password(NEW_PASSWORD)
    tom.save()
    assert not any(works(t) for t in tokens)
    (event,) = revoked(tom)
    assert (event.method, event.reason, event.new) == (
        AuditMethod.ACCOUNT,
        "Password changed.",
        {"by": None},
    )
    assert {t["client"] for t in event.old["tokens"]} == {"ci", "grafana"}


def test_the_admins_password_form_ends_every_token(tom, make_user):
    token = new_token(tom)
    admin = Client()
    admin.force_login(make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True))
    r = admin.post(
        f"/admin/auth/user/{tom.pk}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert r.status_code == 302, r.content
    assert not works(token)
    assert [e.reason for e in revoked(tom)] == ["Password changed."]


def test_the_changepassword_command_ends_every_token(tom, monkeypatch):
    token = new_token(tom)
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": NEW_PASSWORD)  # the terminal
    call_command("changepassword", "tom")
    assert not works(token)
    assert [e.reason for e in revoked(tom)] == ["Password changed."]


def test_removing_the_password_ends_every_token(tom):
    token = new_token(tom)
    tom.set_unusable_password()
    tom.save()
    assert not works(token)


def test_a_hash_upgraded_at_login_and_a_profile_edit_keep_tokens(tom, settings):
    token = new_token(tom)
    settings.PASSWORD_HASHERS = [
        f"{__name__}.QuickPBKDF2",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    r = Client().post("/login/", {"username": "tom", "password": "pw-tom"})
    assert r.status_code == 302
    tom.refresh_from_db()
    assert tom.password.startswith("pbkdf2_quick$")  # rehashed: same password, new hash
    tom.email = "tom@example.com"
    tom.save()
    assert works(token)
    assert revoked(tom) == []


# --- deactivation -------------------------------------------------------------------------
@pytest.mark.parametrize("fields", [None, ["is_active"]])
def test_deactivation_ends_every_token(tom, fields):
    token = new_token(tom)
    tom.is_active = False
    tom.save(update_fields=fields)
    tom.is_active = True  # coming back does not bring the tokens back
    tom.save()
    assert not works(token)
    assert [e.reason for e in revoked(tom)] == ["Account deactivated."]


# --- the role -----------------------------------------------------------------------------
def _group(name: str) -> Group:
    return Group.objects.get(name=name)


@pytest.mark.parametrize(
    "change",
    [
        lambda u: u.groups.remove(_group(roles.RESPONDER)),
        lambda u: _group(roles.RESPONDER).user_set.remove(u),
        lambda u: u.groups.clear(),
        lambda u: _group(roles.RESPONDER).user_set.clear(),
        lambda u: u.groups.set([_group(roles.VIEWER)]),  # a demotion
        lambda u: _group(roles.RESPONDER).delete(),
    ],
    ids=["remove", "reverse-remove", "clear", "reverse-clear", "demotion", "group-deleted"],
)
def test_losing_the_role_ends_every_token(tom, make_user, change, committed):
    bystander = make_user("uma", roles.VIEWER)
    theirs, token = new_token(bystander), new_token(tom)
    with committed():
        change(tom)
    assert not works(token)
    assert works(theirs)
    (event,) = revoked(tom)
    assert event.method == AuditMethod.GROUPS
    assert event.reason.startswith("Role changed from responder to ")


@pytest.mark.parametrize(
    "change",
    [
        lambda u: u.groups.add(_group(roles.COMMANDER)),
        lambda u: u.groups.set([_group(roles.COMMANDER)]),
        lambda u: u.groups.add(Group.objects.create(name="book-club")),
    ],
    ids=["added", "promoted", "other-group"],
)
def test_a_promotion_or_another_group_keeps_tokens(tom, change, committed):
    token = new_token(tom)
    with committed():
        change(tom)
    assert works(token)
    assert revoked(tom) == []


def test_a_superuser_made_ordinary_loses_their_tokens(make_user, committed):
    root = make_user("root", role=None, is_superuser=True)
    token = new_token(root)
    root.is_superuser = False
    with committed():
        root.save()
    assert not works(token)
    assert [e.reason for e in revoked(root)] == ["Role changed from admin to none."]


def test_single_sign_on_that_drops_the_role_ends_every_token(sso, committed):  # noqa: F811
    claims = {"sub": "u-1", "preferred_username": "ada", "groups": ["sre-leads"]}
    ada = sync(claims)
    token = new_token(ada)
    with committed():
        sync(claims)  # the same role again
        sync(claims | {"groups": ["console-admins"]})  # a promotion
    assert works(token)
    with committed():
        sync(claims | {"groups": ["staff"]})  # down to viewer
    assert not works(token)
    token = new_token(ada)
    # No role at all: the sign-in is refused, and the role it had is gone.
    with committed(), pytest.raises(SignInRefused):
        sync(claims | {"groups": ["book-club"]})
    assert not works(token)
    reasons = [e.reason for e in revoked(ada)]
    assert reasons == [
        "Role changed from admin to viewer.",
        "Role changed from viewer to none.",
    ]
