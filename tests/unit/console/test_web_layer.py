"""The shared web layer (console/web.py, console/api/base.py, console/api/errors.py): one
"incident or 404" for every page and API view, a 404 that names what is missing, and
the API documenting each view's own noun."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied

from console import roles
from console.permissions import require

pytestmark = pytest.mark.django_db
MISSING = 987654


@pytest.fixture
def viewer(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    return client


@pytest.fixture
def commander(client, make_user):
    client.force_login(make_user("cara", roles.COMMANDER))
    return client


@pytest.mark.parametrize(
    "url",
    [
        f"/incidents/{MISSING}/",
        f"/incidents/{MISSING}/header/",
        f"/incidents/{MISSING}/alerts/",
        f"/runbooks/incidents/{MISSING}/triage/",
        f"/runbooks/incidents/{MISSING}/signals/",
        f"/runbooks/incidents/{MISSING}/actions/",
        f"/postmortems/incidents/{MISSING}/panel/",
    ],
)
def test_every_incident_page_answers_404_for_an_unknown_incident(viewer, url):
    assert viewer.get(url).status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        f"/incidents/{MISSING}/acknowledge/",
        f"/runbooks/incidents/{MISSING}/diagnosis/",
        f"/postmortems/incidents/{MISSING}/draft/",
    ],
)
def test_a_change_to_an_unknown_incident_is_a_404_page_not_a_message(commander, url):
    assert commander.post(url).status_code == 404
    assert commander.post(url, HTTP_HX_REQUEST="true").status_code == 404


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        (f"/api/v1/incidents/{MISSING}/", f"Incident #{MISSING} does not exist."),
        (f"/api/v1/incidents/{MISSING}/triage/", f"Incident #{MISSING} does not exist."),
        (f"/api/v1/incidents/{MISSING}/actions/", f"Incident #{MISSING} does not exist."),
        (f"/api/v1/actions/{MISSING}/", f"Action run #{MISSING} does not exist."),
        (f"/api/v1/action-items/{MISSING}/", f"Action item #{MISSING} does not exist."),
        (f"/api/v1/postmortems/{MISSING}/", f"Postmortem #{MISSING} does not exist."),
        (f"/api/v1/drills/plans/{MISSING}/", f"Drill plan #{MISSING} does not exist."),
        (f"/api/v1/readiness/verifications/{MISSING}/", f"Verification #{MISSING} does not exist."),
    ],
)
def test_an_unknown_id_over_the_api_is_a_404_naming_the_thing(viewer, url, detail):
    response = viewer.get(url)
    assert response.status_code == 404
    assert response.json() == {"detail": detail}


def test_a_view_may_answer_a_refusal_code_as_400(commander):
    # The drills API checks a plan's fields in its service (code "invalid"): a bad body.
    response = commander.post(
        "/api/v1/drills/plans/",
        {"runbook": "no-such-runbook", "namespace": "llm-serving", "lws": "vllm-chat",
         "fault": "ttft-spike"},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert "no runbook 'no-such-runbook'" in response.json()["detail"]


def test_the_schema_documents_each_views_own_404_and_id(viewer):
    paths = viewer.get("/api/schema/?format=json").json()["paths"]
    expected = {
        ("/api/v1/incidents/{id}/", "get"): "incident",
        ("/api/v1/incidents/{id}/actions/", "post"): "incident",
        ("/api/v1/actions/{id}/", "get"): "action run",
        ("/api/v1/actions/{id}/approve/", "post"): "action run",
        ("/api/v1/action-items/{id}/", "patch"): "action item",
        ("/api/v1/postmortems/{id}/", "get"): "postmortem",
        ("/api/v1/drills/runs/{id}/stop/", "post"): "drill run",
        ("/api/v1/readiness/deployments/{id}/verify/", "post"): "deployment",
    }
    for (path, method), noun in expected.items():
        operation = paths[path][method]
        assert operation["responses"]["404"]["description"] == f"No {noun} with this id.", path
        (param,) = [p for p in operation["parameters"] if p["name"] == "id"]
        assert param["description"].lower() == f"{noun} id.", path
    texts = [str(op) for ops in paths.values() for op in ops.values()]
    assert not [t for t in texts if "{noun}" in t]


def test_require_refuses_nobody_and_anonymous_and_allows_the_role(make_user):
    for actor in (None, AnonymousUser(), make_user("vic", roles.VIEWER)):
        with pytest.raises(PermissionDenied, match="does not allow you to resolve incidents"):
            require(actor, "incidents.resolve_incident", "resolve incidents")
    require(make_user("cara", roles.COMMANDER), "incidents.resolve_incident", "resolve incidents")
