"""Single sign-on without a provider process: the login page's choices, the password
switch, the redirect to the provider, refused callbacks, the ID-token checks the
library leaves out, and the group-to-role mapping. tests/e2e/test_oidc_*.py run the
whole trip against a real provider."""

import time
from urllib.parse import parse_qs, urlparse

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from console import roles
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.audit.services import roles_of
from console.oidc.backends import OIDCBackend
from console.oidc.services import SignInRefused, oidc_account_sync, role_for_groups
from tests.unit.console.test_security_settings import production, run_manage

pytestmark = pytest.mark.django_db

ISSUER = "https://idp.example.test/realms/acme"
GROUPS = {
    "viewer": ["staff"],
    "responder": ["sre-oncall"],
    "commander": ["sre-leads"],
    "admin": ["console-admins"],
}


@pytest.fixture
def sso(settings):
    settings.OIDC_ENABLED = True
    settings.OIDC_ISSUER = ISSUER
    settings.OIDC_RP_CLIENT_ID = "console"
    settings.OIDC_RP_CLIENT_SECRET = "s3cret"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = f"{ISSUER}/protocol/openid-connect/auth"
    settings.OIDC_OP_TOKEN_ENDPOINT = f"{ISSUER}/protocol/openid-connect/token"
    settings.OIDC_OP_JWKS_ENDPOINT = f"{ISSUER}/protocol/openid-connect/certs"
    settings.OIDC_ROLE_GROUPS = GROUPS
    settings.OIDC_PROVIDER_NAME = "Keycloak"
    return settings


def login(client, username, password):
    return client.post("/login/", {"username": username, "password": password})


# --- the login page and the password switch ----------------------------------------------
def test_without_sso_the_page_is_the_password_form(client):
    page = client.get("/login/").content.decode()
    assert 'name="password"' in page
    assert "Sign in with" not in page


def test_with_sso_the_page_offers_it_first_and_keeps_where_you_were_going(client, sso):
    page = client.get("/login/", {"next": "/runbooks/?x=1"}).content.decode()
    assert 'href="/oidc/authenticate/?next=/runbooks/%3Fx%3D1"' in page
    assert "Sign in with Keycloak" in page
    assert 'name="password"' in page  # PASSWORD_LOGIN is on by default


def test_password_login_off_refuses_every_post_and_shows_no_form(client, sso, make_user):
    sso.PASSWORD_LOGIN = False
    sso.PASSWORD_LOGIN_BREAK_GLASS = False
    make_user("ada", roles.ADMIN, is_superuser=True)
    assert 'name="password"' not in client.get("/login/").content.decode()
    refused = login(client, "ada", "pw-ada")
    assert refused.status_code == 403
    assert "Password login is turned off here: sign in with Keycloak." in refused.content.decode()
    assert "_auth_user_id" not in client.session
    row = AuditEvent.objects.get(kind=AuditKind.LOGIN_FAILED)
    assert (row.username, row.method) == ("ada", AuditMethod.PASSWORD)


def test_break_glass_keeps_superusers_and_only_them(client, sso, make_user):
    sso.PASSWORD_LOGIN = False  # PASSWORD_LOGIN_BREAK_GLASS stays on
    make_user("ada", roles.ADMIN, is_superuser=True)
    make_user("rita", roles.RESPONDER)
    page = client.get("/login/").content.decode()
    assert "Break-glass admin login" in page
    assert login(Client(), "rita", "pw-rita").status_code == 200  # the form again
    assert login(client, "ada", "pw-ada").status_code == 302
    row = AuditEvent.objects.get(kind=AuditKind.LOGIN_FAILED, username="rita")
    assert "break-glass admins only" in row.reason
    # The admin login and the API token endpoint follow the same rule.
    api = Client().post(
        "/api/v1/auth/token/",
        {"username": "rita", "password": "pw-rita"},
        content_type="application/json",
    )
    assert api.status_code == 400
    admin_login = Client().post("/admin/login/", {"username": "rita", "password": "pw-rita"})
    assert "_auth_user_id" not in admin_login.wsgi_request.session


# --- to the provider and back -------------------------------------------------------------
def test_the_sso_urls_are_not_found_while_sso_is_off(client):
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/", {"code": "x", "state": "y"}).status_code == 404


def test_the_redirect_carries_state_nonce_and_pkce(client, sso):
    response = client.get("/oidc/authenticate/", {"next": "/runbooks/"})
    assert response.status_code == 302
    url = urlparse(response["Location"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == sso.OIDC_OP_AUTHORIZATION_ENDPOINT
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert query["client_id"] == "console"
    assert query["redirect_uri"] == "http://testserver/oidc/callback/"
    assert query["code_challenge_method"] == "S256"
    assert query["state"] in client.session["oidc_states"]
    assert query["nonce"]
    assert client.session["oidc_login_next"] == "/runbooks/"


def test_a_provider_that_cannot_be_reached_is_a_message_not_a_500(client, sso):
    sso.OIDC_ISSUER = "http://127.0.0.1:9/realms/acme"  # nothing listens on port 9
    sso.OIDC_OP_AUTHORIZATION_ENDPOINT = ""  # so its discovery document is needed
    response = client.get("/oidc/authenticate/", follow=True)
    assert response.redirect_chain[-1][0] == "/login/"
    assert "Sign-in with Keycloak failed: The identity provider at" in response.content.decode()


def test_a_stale_callback_is_refused_explained_and_audited(client, sso):
    response = client.get(
        "/oidc/callback/", {"code": "c", "state": "never-issued"}, REMOTE_ADDR="10.2.3.4"
    )
    assert response.status_code == 302
    assert response["Location"] == "/login/"
    page = client.get("/login/").content.decode()
    assert "stale or was started in another browser" in page
    row = AuditEvent.objects.get(kind=AuditKind.LOGIN_FAILED)
    assert (row.method, row.ip) == (AuditMethod.OIDC, "10.2.3.4")


def test_a_provider_refusal_is_audited(client, sso):
    client.get("/oidc/callback/", {"error": "access_denied", "error_description": "Not you"})
    row = AuditEvent.objects.get(kind=AuditKind.LOGIN_FAILED)
    assert row.reason == "The identity provider answered access_denied. Not you"


# --- the ID token --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def keys():
    return [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]


def id_token(key, **changes) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": "console", "sub": "u-1", "iat": now, "exp": now + 300}
    claims.update(changes)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"aud": "another-app"}, "issued to another client"),
        ({"iss": "https://evil.example.test"}, "issued by another provider"),
        ({"exp": int(time.time()) - 3600}, "has expired"),
        ({"exp": None}, 'missing the "exp" claim'),
        ({"aud": ["console", "another-app"]}, "another party (azp)"),
    ],
)
def test_the_id_token_checks_the_library_leaves_out(sso, keys, changes, said):
    backend = OIDCBackend()
    with pytest.raises(SignInRefused, match=said.replace("(", r"\(").replace(")", r"\)")):
        backend._verify_jws(id_token(keys[0], **changes), keys[0].public_key())


def test_a_good_token_passes_and_a_strangers_signature_does_not(sso, keys):
    backend = OIDCBackend()
    assert backend._verify_jws(id_token(keys[0]), keys[0].public_key())["sub"] == "u-1"
    with pytest.raises(SignInRefused, match="signature does not match"):
        backend._verify_jws(id_token(keys[1]), keys[0].public_key())


# --- accounts and roles ----------------------------------------------------------------------
def test_the_highest_role_wins_and_unknown_groups_give_none(sso):
    assert role_for_groups(["staff", "sre-leads"]) == roles.COMMANDER
    assert role_for_groups(["console-admins", "staff"]) == roles.ADMIN
    assert role_for_groups(["book-club"]) is None
    assert role_for_groups([]) is None


def sync(claims: dict) -> User:
    request = RequestFactory().get("/oidc/callback/", REMOTE_ADDR="10.0.0.9")
    return oidc_account_sync(issuer=ISSUER, claims=claims, request=request)


def test_an_admin_gets_the_django_admin_and_loses_it_with_the_group(sso):
    claims = {"sub": "u-7", "preferred_username": "ada", "groups": "console-admins"}
    ada = sync(claims)
    assert (ada.is_staff, ada.is_superuser) == (True, False)
    ada = sync(claims | {"groups": ["sre-oncall"], "email": "ada@corp.example"})
    assert ada.is_staff is False
    assert roles_of([ada.pk])[ada.pk] == [roles.RESPONDER]
    assert ada.email == "ada@corp.example"  # the profile follows the provider too
    change = AuditEvent.objects.filter(user=ada, kind=AuditKind.ROLE_CHANGED).order_by("id").last()
    assert (change.old, change.new, change.ip) == ([roles.ADMIN], [roles.RESPONDER], "10.0.0.9")


def test_a_deactivated_account_stays_out_whatever_its_groups(sso):
    user = sync({"sub": "u-8", "preferred_username": "olaf", "groups": ["sre-oncall"]})
    User.objects.filter(pk=user.pk).update(is_active=False)
    with pytest.raises(SignInRefused, match="deactivated"):
        sync({"sub": "u-8", "preferred_username": "olaf", "groups": ["sre-leads"]})


@pytest.mark.parametrize(
    ("claims", "said"),
    [
        ({"sub": "u-9", "groups": ["staff"]}, "no 'preferred_username' claim"),
        ({"sub": "u-9", "preferred_username": "a b", "groups": ["staff"]}, "cannot be a console"),
        ({"preferred_username": "x", "groups": ["staff"]}, r"no subject \(sub\)"),
    ],
)
def test_claims_that_cannot_name_an_account_are_refused(sso, claims, said):
    with pytest.raises(SignInRefused, match=said):
        sync(claims)
    assert not User.objects.exclude(username="console-guard").exists()  # the service account


# --- settings --------------------------------------------------------------------------------
def test_half_configured_sso_stops_the_start(tmp_path):
    done = run_manage(tmp_path, "check", OIDC_ISSUER=ISSUER, OIDC_RP_CLIENT_ID="console")
    assert done.returncode != 0
    assert "Single sign-on is half configured: OIDC_RP_CLIENT_SECRET not set." in done.stderr


def test_turning_every_way_in_off_stops_the_start(tmp_path):
    done = run_manage(tmp_path, "check", PASSWORD_LOGIN="0", PASSWORD_LOGIN_BREAK_GLASS="0")
    assert done.returncode != 0
    assert "Nobody could sign in" in done.stderr


def test_check_deploy_stays_clean_with_sso_and_password_login_off(tmp_path):
    env = production(
        OIDC_ISSUER=ISSUER,
        OIDC_RP_CLIENT_ID="console",
        OIDC_RP_CLIENT_SECRET="s3cret-from-the-provider",
        PASSWORD_LOGIN="0",
        OIDC_COMMANDER_GROUPS="sre-leads,incident-commanders",
    )
    done = run_manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
