"""The checklist pages and API: what each role sees and may do, 4xx with a message for
bad input, and a fixed number of queries however many deployments and sign-offs."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from console import roles
from console.api_tokens.models import ApiToken
from readiness import services
from readiness.items import SIGN_OFF_KEYS
from readiness.models import Deployment, Verification, VerificationStatus

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _deployment(lws="vllm-chat"):
    now = timezone.now()
    return Deployment.objects.create(
        namespace="llm-serving", lws=lws, first_seen_at=now, last_seen_at=now
    )


def page_as(make_user, name, role) -> Client:
    client = Client()
    client.force_login(make_user(name, role))
    return client


def api_as(make_user, name, role) -> APIClient:
    user = make_user(name, role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    client.user = user
    return client


def test_pages_show_rag_evidence_and_the_right_buttons(
    make_user, django_capture_on_commit_callbacks
):
    d = _deployment()
    viewer = page_as(make_user, "vic", roles.VIEWER)
    html = viewer.get("/readiness/").content.decode()
    assert 'data-testid="deployment-row" data-rag="red"' in html
    assert f'href="/readiness/{d.pk}/"' in html
    page = viewer.get(f"/readiness/{d.pk}/").content.decode()
    assert 'data-testid="overall-rag">red<' in page
    assert 'data-testid="item-dcgm" data-state="unknown" data-rag="amber"' in page
    assert "Not verified yet." in page
    assert 'data-testid="verify-button"' not in page
    assert "signoff-form" not in page
    assert viewer.post(f"/readiness/{d.pk}/verify/").status_code == 403

    rita = page_as(make_user, "rita", roles.RESPONDER)
    assert 'data-testid="verify-button"' in rita.get(f"/readiness/{d.pk}/").content.decode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = rita.post(f"/readiness/{d.pk}/verify/", follow=True)
    assert len(callbacks) == 1
    body = response.content.decode()
    assert "Verification queued" in body
    assert 'data-testid="verification-active"' in body
    assert rita.get(f"/readiness/{d.pk}/verification/", **HTMX).status_code == 200
    Verification.objects.filter(deployment=d).update(status=VerificationStatus.DONE)
    done = rita.get(f"/readiness/{d.pk}/verification/", **HTMX)
    assert done.headers["HX-Refresh"] == "true"  # finished: reload the page with results
    assert rita.post(f"/readiness/{d.pk}/signoff/", {"item": "canary"}).status_code == 403

    cora = page_as(make_user, "cora", roles.COMMANDER)
    expiry = (timezone.localdate() + timedelta(days=30)).isoformat()
    form = {"item": "canary", "note": "5% canary, rollback at 1% errors", "expires_on": expiry}
    body = cora.post(f"/readiness/{d.pk}/signoff/", form, follow=True).content.decode()
    assert "Signed off: Canary with rollback thresholds." in body
    assert 'data-testid="item-canary" data-state="signed_off" data-rag="green"' in body
    bad = cora.post(f"/readiness/{d.pk}/signoff/", {**form, "expires_on": "soon"}, follow=True)
    assert "Give the expiry as a date (YYYY-MM-DD)." in bad.content.decode()
    assert cora.get("/readiness/99999/").status_code == 404
    assert Client().get("/readiness/").status_code == 302  # login first


def test_pages_queries_do_not_grow(make_user):
    cora = page_as(make_user, "cora", roles.COMMANDER)

    def count(url):
        with CaptureQueriesContext(connection) as ctx:
            assert cora.get(url).status_code == 200
        return len(ctx.captured_queries)

    first = _deployment("pool-0")
    listing, detail = count("/readiness/"), count(f"/readiness/{first.pk}/")
    for i in range(1, 6):
        d = _deployment(f"pool-{i}")
        for key in SIGN_OFF_KEYS:
            services.signoff_record(
                deployment_id=d.pk, item=key, actor=_user(cora), note="ok",
                expires_on=timezone.localdate() + timedelta(days=5),
            )  # fmt: skip
        services.verification_request(deployment_id=d.pk, trigger="schedule", enqueue=False)
    assert count("/readiness/") == listing
    assert count(f"/readiness/{d.pk}/") == detail


def _user(client):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="cora")


def test_api_mirrors_the_pages(make_user, django_capture_on_commit_callbacks):
    d = _deployment()
    vic = api_as(make_user, "vic", roles.VIEWER)
    listed = vic.get("/api/v1/readiness/deployments/").json()
    assert listed[0]["lws"] == "vllm-chat"
    assert listed[0]["rag"] == "red"
    assert listed[0]["counts"] == {"green": 0, "amber": 11, "red": 4}
    detail = vic.get(f"/api/v1/readiness/deployments/{d.pk}/").json()
    assert [i["key"] for i in detail["items"]][:3] == ["autoscaling", "drain", "readiness_probe"]
    assert vic.post(f"/api/v1/readiness/deployments/{d.pk}/verify/").status_code == 403

    rita = api_as(make_user, "rita", roles.RESPONDER)
    with django_capture_on_commit_callbacks(execute=False):
        queued = rita.post(f"/api/v1/readiness/deployments/{d.pk}/verify/")
        again = rita.post(f"/api/v1/readiness/deployments/{d.pk}/verify/")
    assert (queued.status_code, again.status_code) == (202, 200)
    assert queued.json()["status"] == "queued"
    assert queued.json()["requested_by"] == "rita"
    got = vic.get(f"/api/v1/readiness/verifications/{queued.json()['id']}/")
    assert got.json()["id"] == queued.json()["id"]

    cora = api_as(make_user, "cora", roles.COMMANDER)
    url = f"/api/v1/readiness/deployments/{d.pk}/signoffs/"
    expiry = (timezone.localdate() + timedelta(days=30)).isoformat()
    body = {"item": "client_retries", "note": "SDK 2.3: backoff + jitter", "expires_on": expiry}
    assert rita.post(url, body, format="json").status_code == 403
    made = cora.post(url, body, format="json")
    assert made.status_code == 201
    assert made.json()["by"] == "cora"
    wrong = cora.post(url, {**body, "item": "dcgm"}, format="json")
    assert wrong.status_code == 400
    assert "item" in wrong.json()
    past = cora.post(url, {**body, "expires_on": "2001-01-01"}, format="json")
    assert past.status_code == 400
    assert "not in the future" in past.json()["detail"]
    revoke = cora.post(url + "revoke/", {"item": "canary", "note": "x"}, format="json")
    assert revoke.status_code == 409
    assert "is not signed off" in revoke.json()["detail"]
    assert [s["item"] for s in vic.get(url).json()] == ["client_retries"]
    missing = vic.get("/api/v1/readiness/deployments/99999/")
    assert missing.status_code == 404
    assert "does not exist" in missing.json()["detail"]
    huge = vic.get(f"/api/v1/readiness/deployments/{2**63}/")
    assert huge.status_code == 404
