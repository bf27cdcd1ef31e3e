"""Content-Security-Policy: every HTML response carries a strict policy, and no template
needs inline script, inline event handlers or inline styles to work."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from console import roles
from postmortems import services as pm_services
from tests.prometheus_standin import StandInPrometheus
from tests.unit.postmortems.test_pages import resolved_incident

pytestmark = pytest.mark.django_db

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def policy(response) -> dict[str, list[str]]:
    header = response.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def assert_strict(response) -> None:
    p = policy(response)
    where = response.request["PATH_INFO"]
    assert p["default-src"] == ["'self'"], where
    assert p["script-src"] == ["'self'"], where  # no 'unsafe-inline', no 'unsafe-eval'
    assert "'unsafe-inline'" not in p["style-src"], where  # plotly's two blocks by hash
    assert p["object-src"] == ["'none'"], where
    assert p["base-uri"] == ["'self'"], where
    assert p["frame-ancestors"] == ["'none'"], where
    assert p["form-action"] == ["'self'"], where


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(default=1.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    yield fake
    fake.close()


@pytest.fixture
def people(make_user):
    return {
        "rita": make_user("rita", roles.RESPONDER),
        "cara": make_user("cara", roles.COMMANDER),
        "ada": make_user("ada", roles.ADMIN, is_staff=True, is_superuser=True),
    }


def test_every_html_page_carries_the_policy(client, post_webhook, people, prom):
    incident = resolved_incident(post_webhook, people, key="csp-pages")
    pm = pm_services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])
    anonymous = Client()
    for url in ("/login/", "/admin/login/"):
        response = anonymous.get(url)
        assert response.status_code == 200, url
        assert_strict(response)
    client.force_login(people["ada"])
    pages = [
        "/",
        f"/incidents/{incident.pk}/",
        "/receipts/",
        "/runbooks/",
        "/runbooks/categories/",
        "/runbooks/ttft-spike/",
        f"/runbooks/incidents/{incident.pk}/triage/",
        f"/runbooks/incidents/{incident.pk}/signals/",
        "/runbooks/actions/",
        "/postmortems/",
        f"/postmortems/{pm.pk}/",
        f"/postmortems/{pm.pk}/print/",
        f"/postmortems/{pm.pk}/history/",
        "/postmortems/items/",
        "/postmortems/reports/",
        "/api/docs/",
        "/admin/",
        "/admin/axes/accessattempt/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("text/html"), url
        assert_strict(response)
    missing = client.get("/incidents/999999/")
    assert missing.status_code == 404
    assert_strict(missing)
    no_role = Client()
    no_role.force_login(pm.created_by.__class__.objects.create_user("nobody", password="x"))
    refused = no_role.get("/")
    assert refused.status_code == 403
    assert_strict(refused)


def test_api_docs_page_runs_no_inline_script(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    page = client.get("/api/docs/").content.decode()
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert scripts, "the Swagger page loads its scripts"
    assert all("src=" in tag for tag in scripts), scripts
    assert "<style" not in page
    assert "style=" not in page


INLINE = [
    (re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>"), "inline <script>"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "on* event handler attribute"),
    (re.compile(r"\bhx-on[:\-]"), "hx-on attribute (inline script)"),
    (re.compile(r"\sstyle\s*=", re.I), "inline style attribute"),
    (re.compile(r"<style\b"), "inline <style> block"),
]


def test_templates_need_no_inline_script_or_style():
    found = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = path.read_text()
        for pattern, what in INLINE:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(TEMPLATES)}:{line}: {what}")
    assert not found, "\n".join(found)
