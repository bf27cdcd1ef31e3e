"""API tokens (django-rest-knox, console/api_tokens/services.py): each request for one makes a new
token, hashed at rest, with an expiry; the owner lists and revokes theirs, an admin
anyone's; nobody ever sees a key again after it was issued."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.utils import timezone

from console import roles
from console.api_tokens.models import ApiToken
from console.api_tokens.services import api_token_issue
from console.audit.models import AuditEvent, AuditKind, AuditMethod
from console.service_accounts import GUARD, service_account_user
from tests.unit.console.test_security_settings import run_manage

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/v1/auth/token/"
TOKENS_URL = "/api/v1/auth/tokens/"
PROBE = "/api/v1/incidents/"


def issue(username: str, *, client_name: str | None = None, ip: str = "10.0.0.1"):
    body = {"username": username, "password": "pw-" + username}
    if client_name is not None:
        body["client"] = client_name
    return Client().post(TOKEN_URL, body, content_type="application/json", REMOTE_ADDR=ip)


def token_of(username: str, **kw) -> dict:
    r = issue(username, **kw)
    assert r.status_code == 200, r.content
    return r.json()


def api(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {token}")


def works(token: str) -> bool:
    status = api(token).get(PROBE).status_code
    assert status in (200, 401), status
    return status == 200


@pytest.fixture
def expire():
    """Move a token's end into the past: the clock, as the server sees it, has passed it."""

    def _expire(token_id: int) -> None:
        ApiToken.objects.filter(pk=token_id).update(expiry=timezone.now() - timedelta(seconds=1))

    return _expire


# --- issuing ------------------------------------------------------------------------------
def test_the_same_credentials_twice_give_two_different_working_tokens(make_user):
    make_user("tom", roles.RESPONDER)
    first, second = token_of("tom"), token_of("tom")
    assert set(first) == {"token", "expiry", "id"}
    assert first["token"] != second["token"]
    assert first["id"] != second["id"]
    assert works(first["token"])
    assert works(second["token"])


def test_a_token_ends_after_the_configured_lifetime(make_user, settings):
    make_user("tom", roles.RESPONDER)
    body = token_of("tom")
    expiry = ApiToken.objects.get(pk=body["id"]).expiry
    wanted = timezone.now() + timedelta(hours=settings.API_TOKEN_TTL_HOURS)
    assert abs((expiry - wanted).total_seconds()) < 60
    assert body["expiry"].startswith(expiry.strftime("%Y-%m-%dT%H:%M"))


def test_a_token_stops_working_after_its_expiry(make_user, expire):
    make_user("tom", roles.RESPONDER)
    old, fresh = token_of("tom"), token_of("tom")
    expire(old["id"])
    r = api(old["token"]).get(PROBE)
    assert r.status_code == 401
    assert r.json()["detail"] == "Invalid token."
    assert works(fresh["token"])


def test_tokens_are_hashed_at_rest(make_user):
    make_user("tom", roles.RESPONDER)
    body = token_of("tom", client_name="grafana")
    row = ApiToken.objects.values().get(pk=body["id"])
    assert body["token"] not in {str(v) for v in row.values()}
    assert row["client"] == "grafana"


def test_a_client_name_is_checked(make_user):
    make_user("tom", roles.RESPONDER)
    r = issue("tom", client_name="x" * 65)
    assert r.status_code == 400
    assert "client" in r.json()


def test_the_per_user_limit_refuses_one_more_with_a_message(make_user, settings, expire):
    settings.REST_KNOX = {**settings.REST_KNOX, "TOKEN_LIMIT_PER_USER": 2}
    make_user("tom", roles.RESPONDER)
    first, _second = token_of("tom"), token_of("tom")
    r = issue("tom")
    assert r.status_code == 409
    assert "2 API tokens" in r.json()["detail"]
    expire(first["id"])  # an expired token no longer counts
    assert issue("tom").status_code == 200


def test_a_user_without_a_console_role_gets_no_token(make_user):
    make_user("nora", role=None)
    r = issue("nora")
    assert r.status_code == 403
    assert "console role" in r.json()["detail"]
    assert not ApiToken.objects.exists()


def test_a_service_account_gets_no_token_even_with_a_role():
    guard = service_account_user(GUARD)
    guard.groups.add(Group.objects.get(name=roles.VIEWER))
    with pytest.raises(PermissionDenied, match="service account"):
        api_token_issue(user=guard)
    assert not ApiToken.objects.exists()


def test_a_header_that_is_not_text_is_refused_not_a_crash(make_user):
    r = Client(HTTP_AUTHORIZATION="Token \xff\xfe").get(PROBE)
    assert r.status_code == 401


# --- listing and revoking -------------------------------------------------------------------
def test_the_owner_lists_their_tokens_without_any_key(make_user):
    make_user("tom", roles.RESPONDER)
    make_user("uma", roles.RESPONDER)
    grafana, ci = token_of("tom", client_name="grafana"), token_of("tom", client_name="ci")
    token_of("uma")
    r = api(ci["token"]).get(TOKENS_URL)
    assert r.status_code == 200, r.content
    rows = r.json()["results"]
    assert {row["id"] for row in rows} == {grafana["id"], ci["id"]}
    assert {row["client"] for row in rows} == {"grafana", "ci"}
    assert set(rows[0]) == {"id", "user", "client", "created", "expiry"}
    text = r.content.decode()
    for secret in (grafana["token"], ci["token"], grafana["token"][:15]):
        assert secret not in text


def test_the_owner_revokes_one_and_the_other_still_works(make_user):
    make_user("tom", roles.RESPONDER)
    keep, drop = token_of("tom", client_name="ci"), token_of("tom", client_name="grafana")
    r = api(keep["token"]).delete(f"{TOKENS_URL}{drop['id']}/")
    assert r.status_code == 204, r.content
    assert not works(drop["token"])
    assert works(keep["token"])
    event = AuditEvent.objects.get(kind=AuditKind.TOKEN_REVOKED)
    assert (event.username, event.method) == ("tom", AuditMethod.API)
    assert event.reason == "Revoked by its owner."
    assert event.old == {"tokens": [{"id": drop["id"], "client": "grafana"}]}
    assert event.new == {"by": "tom"}


def test_the_owner_revokes_the_token_in_use_with_a_session_too(make_user):
    tom = make_user("tom", roles.RESPONDER)
    body = token_of("tom")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(tom)
    # A session needs the CSRF token for a change, as every page form does.
    assert browser.delete(f"{TOKENS_URL}{body['id']}/").status_code == 403
    assert works(body["token"])
    assert browser.get(TOKENS_URL).status_code == 200
    browser.get("/")  # any page with a form sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    r = browser.delete(f"{TOKENS_URL}{body['id']}/", HTTP_X_CSRFTOKEN=csrf)
    assert r.status_code == 204
    assert not works(body["token"])


def test_someone_elses_token_cannot_be_listed_or_revoked(make_user):
    make_user("tom", roles.COMMANDER)
    make_user("uma", roles.RESPONDER)
    toms, umas = token_of("tom"), token_of("uma")
    r = api(toms["token"]).get(TOKENS_URL, {"user": "uma"})
    assert r.status_code == 403
    assert "admin" in r.json()["detail"]
    r = api(toms["token"]).delete(f"{TOKENS_URL}{umas['id']}/")
    assert r.status_code == 404
    assert r.json()["detail"] == f"API token #{umas['id']} does not exist."
    assert works(umas["token"])
    assert not AuditEvent.objects.filter(kind=AuditKind.TOKEN_REVOKED).exists()


@pytest.mark.parametrize("admin_kind", ["role", "superuser"])
def test_an_admin_lists_and_revokes_anyones(make_user, admin_kind):
    if admin_kind == "role":
        make_user("ada", roles.ADMIN)
    else:
        make_user("ada", role=None, is_superuser=True)
    make_user("uma", roles.RESPONDER)
    make_user("tom", roles.RESPONDER)
    admin, umas, toms = token_of("ada"), token_of("uma"), token_of("tom")
    r = api(admin["token"]).get(TOKENS_URL, {"user": "uma"})
    assert [row["id"] for row in r.json()["results"]] == [umas["id"]]
    own = api(admin["token"]).get(TOKENS_URL, {"user": ""}).json()["results"]
    assert [row["user"] for row in own] == ["ada"]  # an empty ?user= is not given
    assert api(admin["token"]).delete(f"{TOKENS_URL}{umas['id']}/").status_code == 204
    assert not works(umas["token"])
    assert works(toms["token"])
    event = AuditEvent.objects.get(kind=AuditKind.TOKEN_REVOKED)
    assert (event.username, event.new, event.reason) == ("uma", {"by": "ada"}, "Revoked by ada.")


def test_an_id_beyond_any_row_is_not_found(make_user):
    make_user("ada", roles.ADMIN)
    r = api(token_of("ada")["token"]).delete(f"{TOKENS_URL}{2**64}/")
    assert r.status_code == 404
    assert "does not exist" in r.json()["detail"]


def test_an_admin_asking_for_an_unknown_user_gets_an_empty_list(make_user):
    make_user("ada", roles.ADMIN)
    r = api(token_of("ada")["token"]).get(TOKENS_URL, {"user": "nobody"})
    assert (r.status_code, r.json()["results"]) == (200, [])


def test_expired_tokens_are_not_listed(make_user, expire):
    make_user("tom", roles.RESPONDER)
    old, fresh = token_of("tom"), token_of("tom")
    expire(old["id"])
    rows = api(fresh["token"]).get(TOKENS_URL).json()["results"]
    assert [row["id"] for row in rows] == [fresh["id"]]


def test_the_django_admin_lists_and_revokes_with_an_audit(make_user):
    make_user("uma", roles.RESPONDER)
    umas = token_of("uma", client_name="ci")
    browser = Client()
    browser.force_login(make_user("ada", roles.ADMIN, is_staff=True))
    page = browser.get("/admin/console/apitoken/")
    assert page.status_code == 200
    assert "uma" in page.content.decode()
    assert umas["token"][:15] not in page.content.decode()
    assert browser.get("/admin/console/apitoken/add/").status_code == 403
    url = f"/admin/console/apitoken/{umas['id']}/delete/"
    assert browser.post(url, {"post": "yes"}).status_code == 302
    assert not works(umas["token"])
    event = AuditEvent.objects.get(kind=AuditKind.TOKEN_REVOKED)
    assert (event.method, event.new, event.username) == (AuditMethod.ADMIN, {"by": "ada"}, "uma")


# --- the schema and settings ----------------------------------------------------------------
def test_the_schema_documents_the_endpoints_and_the_lifetime(make_user, settings):
    browser = Client()
    browser.force_login(make_user("vera", roles.VIEWER))
    schema = browser.get("/api/schema/?format=json").json()
    paths, components = schema["paths"], schema["components"]
    issue_op = paths[TOKEN_URL]["post"]
    assert {"200", "400", "403", "409", "429"} <= set(issue_op["responses"])
    assert f"{settings.API_TOKEN_TTL_HOURS} hours" in issue_op["description"]
    assert set(components["schemas"]["ApiTokenIssued"]["properties"]) == {"token", "expiry", "id"}
    assert "client" in components["schemas"]["ApiTokenCredentials"]["properties"]
    listing = paths[TOKENS_URL]["get"]
    assert "user" in {p["name"] for p in listing["parameters"]}
    assert "token" not in components["schemas"]["ApiToken"]["properties"]
    revoke = paths[TOKENS_URL + "{id}/"]["delete"]
    assert {"204", "401", "403", "404"} <= set(revoke["responses"])
    scheme = components["securitySchemes"]["tokenAuth"]
    assert (scheme["in"], scheme["name"]) == ("header", "Authorization")
    assert f"works for {settings.API_TOKEN_TTL_HOURS} hours" in scheme["description"]
    assert {"tokenAuth": []} in listing["security"]


# --- settings -------------------------------------------------------------------------------
def test_a_lifetime_beyond_the_maximum_stops_the_start(tmp_path):
    done = run_manage(tmp_path, "check", API_TOKEN_TTL_HOURS="9000")
    assert done.returncode != 0
    assert "API_TOKEN_TTL_HOURS must be between 1 and 8760" in done.stderr
