"""Single sign-on in headless Chromium: a responder opens the console, is sent to the
login page, signs in at the company's identity provider (the test provider, its own
process) and lands where they were going with the role their group gives; logging out
and the whole trip are in the audit log an admin reads."""

import pytest

from console import roles
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from tests.e2e.conftest import SHOTS
from tests.oidc_provider.fixtures import idp_fixture, sso_fixture  # noqa: F401

TIMEOUT_MS = 15_000

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_responder_signs_in_with_the_provider_and_out_again(live_server, browser, sso):
    from playwright.sync_api import expect

    SHOTS.mkdir(parents=True, exist_ok=True)
    sso.user("rosa", groups=["sre-oncall", "staff"])
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(TIMEOUT_MS)

    page.goto(live_server.url + "/runbooks/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/runbooks/")
    sso_button = page.get_by_role("link", name="Sign in with the test provider")
    expect(sso_button).to_be_visible()
    expect(page.locator("#id_password")).to_be_visible()  # password login is still on
    page.screenshot(path=SHOTS / "login-sso.png")

    sso_button.click()
    expect(page.get_by_role("heading", name="Test identity provider")).to_be_visible()
    page.fill("#idp-username", "rosa")
    page.fill("#idp-password", sso.password("rosa"))
    page.get_by_role("button", name="Sign in to the provider").click()

    expect(page).to_have_url(f"{live_server.url}/runbooks/")  # where she was going
    expect(page.locator(".who")).to_contain_text("rosa")
    expect(page.locator(".who .role-chip")).to_have_text([roles.RESPONDER])
    expect(page.get_by_role("link", name="Audit log")).to_have_count(0)  # admins only

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{live_server.url}/login/")
    rows = AuditEvent.objects.filter(username="rosa").order_by("id")
    assert [(r.kind, r.method) for r in rows] == [
        (AuditKind.ROLE_CHANGED, AuditMethod.OIDC),
        (AuditKind.LOGIN, AuditMethod.OIDC),
        (AuditKind.LOGOUT, AuditMethod.SESSION),
    ]
    assert all(r.user_agent.startswith("Mozilla/") and r.ip == "127.0.0.1" for r in rows)


def test_with_password_login_off_the_page_offers_only_single_sign_on(
    live_server, browser, sso, settings
):
    from playwright.sync_api import expect

    settings.PASSWORD_LOGIN = False
    settings.PASSWORD_LOGIN_BREAK_GLASS = False
    sso.user("ada", groups=["console-admins"])
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(TIMEOUT_MS)

    page.goto(live_server.url + "/")
    expect(page.get_by_role("link", name="Sign in with the test provider")).to_be_visible()
    expect(page.locator("input[type=password]")).to_have_count(0)
    page.screenshot(path=SHOTS / "login-sso-only.png")

    page.get_by_role("link", name="Sign in with the test provider").click()
    page.fill("#idp-username", "ada")
    page.fill("#idp-password", sso.password("ada"))
    page.get_by_role("button", name="Sign in to the provider").click()
    expect(page.locator(".who .role-chip")).to_have_text([roles.ADMIN])

    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("heading", name="Sign-in audit log")).to_be_visible()
    table = page.locator("table.signin-audit")
    expect(table).to_contain_text("Single sign-on")
    expect(table).to_contain_text("ada")
    expect(table).to_contain_text("no role → admin")
    page.screenshot(path=SHOTS / "audit-log.png", full_page=True)
