"""Single sign-on against a real OpenID Connect provider (django-oauth-toolkit, its own
process: tests/oidc_provider/), walked over HTTP as a browser would, cookies and
redirects included: roles come from the groups claim and follow it at every sign-in,
and a bad ID token signs nobody in but is audited. The Chromium walk is in
test_oidc_browser.py."""

import html
import time
from urllib.parse import parse_qs, urlparse

import pytest
import requests

from console import roles
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.audit.services import roles_of
from console.oidc.models import OidcIdentity
from tests.oidc_provider.fixtures import idp_fixture, sso_fixture  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
SESSIONS: list[requests.Session] = []


@pytest.fixture(autouse=True)
def _close_sessions():
    """Closing the kept-alive sockets ends the live server's request threads, which
    close their database connections (the test database can then be dropped)."""
    yield
    while SESSIONS:
        SESSIONS.pop().close()


def sign_in(console: str, provider, username: str, *, next_path: str = "/runbooks/"):
    """Start at the console's SSO link, sign in at the provider, follow every redirect
    back. Returns the session (cookies of both) and the last response."""
    session = requests.Session()
    session.headers["User-Agent"] = "sign-in-test/1.0"
    SESSIONS.append(session)
    page = session.get(f"{console}/oidc/authenticate/", params={"next": next_path}, timeout=10)
    assert urlparse(page.url).path == "/accounts/login/", page.url  # at the provider
    done = session.post(
        page.url,
        data={
            "username": username,
            "password": provider.password(username),
            "csrfmiddlewaretoken": session.cookies["idp_csrftoken"],
            "next": parse_qs(urlparse(page.url).query)["next"][0],
        },
        timeout=20,
    )
    return session, done


def signed_in_as(session: requests.Session, console: str) -> str | None:
    """The username the console's header shows, or None on the login page."""
    page = session.get(f"{console}/", timeout=10)
    if urlparse(page.url).path == "/login/":
        return None
    marker = 'title="Signed in as '
    start = page.text.index(marker) + len(marker)
    return page.text[start : page.text.index('"', start)]


def role_of(username: str) -> list[str]:
    user = OidcIdentity.objects.get(user__username=username).user
    return roles_of([user.pk])[user.pk]


def test_two_people_in_different_groups_land_with_their_roles(live_server, sso):
    olga_sub = sso.user("olga", groups=["sre-oncall"])
    sso.user("carl", groups=["staff", "sre-leads"])  # the highest role wins
    for name, want in (("olga", [roles.RESPONDER]), ("carl", [roles.COMMANDER])):
        session, done = sign_in(live_server.url, sso, name)
        assert done.status_code == 200
        assert urlparse(done.url).path == "/runbooks/"  # where they were going
        assert signed_in_as(session, live_server.url) == name
        assert role_of(name) == want
        # The session ends with the shift (OIDC_SESSION_SECONDS), not in two weeks.
        cookie = next(c for c in session.cookies if c.name == "sessionid")
        assert 12 * 3600 - 120 < cookie.expires - time.time() <= 12 * 3600
    olga = OidcIdentity.objects.get(subject=olga_sub, issuer=sso.issuer).user
    assert olga.username == "olga"
    assert olga.email == "olga@example.test"
    assert not olga.has_usable_password()  # only the provider signs her in
    login = AuditEvent.objects.get(user=olga, kind=AuditKind.LOGIN)
    assert (login.method, login.ip, login.user_agent) == (
        AuditMethod.OIDC,
        "127.0.0.1",
        "sign-in-test/1.0",
    )
    granted = AuditEvent.objects.get(user=olga, kind=AuditKind.ROLE_CHANGED)
    assert (granted.old, granted.new) == ([], [roles.RESPONDER])
    assert "sre-oncall" in granted.reason


def test_a_group_removed_at_the_provider_demotes_at_the_next_sign_in(live_server, sso):
    sso.user("carl", groups=["sre-leads"])
    sign_in(live_server.url, sso, "carl")
    assert role_of("carl") == [roles.COMMANDER]

    sso.user("carl", groups=["sre-oncall"])  # moved out of the leads group
    sign_in(live_server.url, sso, "carl")
    assert role_of("carl") == [roles.RESPONDER]

    sso.user("carl", groups=[])  # left the team
    session, done = sign_in(live_server.url, sso, "carl")
    assert urlparse(done.url).path == "/login/"
    assert "none of the groups that give a console role" in done.text
    assert signed_in_as(session, live_server.url) is None
    assert role_of("carl") == []

    changes = AuditEvent.objects.filter(username="carl", kind=AuditKind.ROLE_CHANGED)
    assert [(c.old, c.new) for c in changes.order_by("id")] == [
        ([], [roles.COMMANDER]),
        ([roles.COMMANDER], [roles.RESPONDER]),
        ([roles.RESPONDER], []),
    ]
    refused = AuditEvent.objects.get(username="carl", kind=AuditKind.LOGIN_FAILED)
    assert refused.method == AuditMethod.OIDC
    assert "none of the groups" in refused.reason


def test_the_admin_group_reaches_the_admin_and_the_audit_log(live_server, sso):
    sso.user("ada", groups=["console-admins"])
    session, _ = sign_in(live_server.url, sso, "ada")
    assert role_of("ada") == [roles.ADMIN]
    audit = session.get(f"{live_server.url}/audit/", timeout=10)
    assert audit.status_code == 200
    assert "Sign-in audit log" in audit.text
    assert session.get(f"{live_server.url}/admin/", timeout=10).status_code == 200


def test_nobody_is_made_for_a_sign_in_without_a_role(live_server, sso):
    sso.user("visitor", groups=["book-club"])
    _, done = sign_in(live_server.url, sso, "visitor")
    assert "none of the groups" in done.text
    assert "book-club" in done.text
    assert not OidcIdentity.objects.filter(user__username="visitor").exists()


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("signature", "signature does not match"),
        ("audience", "issued to another client"),
    ],
)
def test_a_bad_id_token_signs_nobody_in_and_is_audited(live_server, sso, mode, said):
    sso.user("mallory", groups=["console-admins"])
    sso.tamper(mode)
    session, done = sign_in(live_server.url, sso, "mallory")
    assert urlparse(done.url).path == "/login/"
    assert said in done.text  # the page says why
    assert signed_in_as(session, live_server.url) is None
    assert not OidcIdentity.objects.exists()  # no account was made
    refused = AuditEvent.objects.get(kind=AuditKind.LOGIN_FAILED)
    assert refused.method == AuditMethod.OIDC
    assert said in refused.reason
    assert refused.ip == "127.0.0.1"

    sso.tamper("")  # a good token again: the same person gets in
    session, _ = sign_in(live_server.url, sso, "mallory")
    assert signed_in_as(session, live_server.url) == "mallory"


def test_failed_sign_ins_do_not_lock_out_the_address(live_server, sso, settings):
    # django-axes counts password guesses per username and address; a sign-in callback
    # has no username, so counting it would lock everyone behind one office address out.
    settings.AXES_FAILURE_LIMIT = 2
    sso.user("olga", groups=["sre-oncall"])
    sso.tamper("signature")
    for _ in range(3):
        session, _ = sign_in(live_server.url, sso, "olga")
        assert signed_in_as(session, live_server.url) is None
    sso.tamper("")
    session, _ = sign_in(live_server.url, sso, "olga")
    assert signed_in_as(session, live_server.url) == "olga"
    assert AuditEvent.objects.filter(kind=AuditKind.LOGIN_FAILED).count() == 3


def test_a_local_account_of_the_same_name_is_never_taken_over(live_server, sso, make_user):
    make_user("root", roles.ADMIN, is_superuser=True)
    sso.user("root", groups=["console-admins"])
    session, done = sign_in(live_server.url, sso, "root")
    assert "already has an account named 'root'" in html.unescape(done.text)
    assert signed_in_as(session, live_server.url) is None
    assert not OidcIdentity.objects.exists()
