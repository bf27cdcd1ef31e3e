"""The incident page renders the panels other apps register, in order, and incidents'
own templates name no other app's URLs or templates."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from console import roles
from incidents import panels
from incidents.panels import incident_panel_register
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(panels.PANELS, "sections", dict(panels.PANELS.sections))


@pytest.fixture
def viewer_client(client, make_user):
    client.force_login(make_user("vic", roles.VIEWER))
    return client


def _page(client, incident) -> str:
    response = client.get(reverse("incidents:detail", args=[incident.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_registered_panels_render_in_order_with_their_urls(viewer_client):
    incident = IncidentFactory()
    body = _page(viewer_client, incident)
    expected = [
        ("runbook-triage", reverse("runbooks:incident-triage", args=[incident.pk])),
        ("runbook-actions", reverse("actions:incident-actions", args=[incident.pk])),
        ("runbook-signals", reverse("runbooks:incident-signals", args=[incident.pk])),
        ("incident-postmortem", reverse("postmortems:incident-panel", args=[incident.pk])),
    ]
    positions = []
    for section_id, url in expected:
        match = re.search(rf'<section id="{section_id}"[^>]* hx-get="{re.escape(url)}"', body)
        assert match, section_id
        positions.append(match.start())
    assert positions == sorted(positions)
    assert body.index('<div id="action-dialog"></div>') < body.index('id="runbook-signals"')
    # The state and timeline come first (the sticky left column), the panels beside them.
    assert body.index('id="timeline-h"') < body.index('id="runbook-triage"')


def test_a_panel_registered_at_runtime_gets_request_and_incident(registry, viewer_client):
    seen = []

    def context(request, incident):
        seen.append((request.user.get_username(), incident.pk))
        return {"flash_error": f"Chaos panel for #{incident.pk}"}

    # Any template will do: this one shows `flash_error`.
    incident_panel_register(
        key="chaos", order=15, template="incidents/_flash.html", context=context
    )
    incident = IncidentFactory()
    body = _page(viewer_client, incident)
    assert seen == [("vic", incident.pk)]
    panel = body.index(f"Chaos panel for #{incident.pk}")
    assert body.index('id="runbook-triage"') < panel < body.index('id="runbook-actions"')


def test_a_panel_key_is_registered_once(registry):
    incident_panel_register(key="chaos", order=15, template="incidents/_flash.html")
    incident_panel_register(key="chaos", order=15, template="incidents/_flash.html")  # no-op
    with pytest.raises(ImproperlyConfigured, match="'chaos' is already registered"):
        incident_panel_register(key="chaos", order=16, template="incidents/_flash.html")


OTHER_APPS = ("runbooks", "postmortems", "readiness")


def test_incidents_templates_name_no_other_app():
    offenders = []
    for path in sorted((Path(settings.BASE_DIR) / "templates" / "incidents").rglob("*.html")):
        text = path.read_text()
        for app in OTHER_APPS:
            # {% url 'runbooks:...' %}, {% include "postmortems/..." %}, or a path to them
            pattern = rf"""['"]{app}(_api)?:|['"]{app}/|/{app}/"""
            offenders += [f"{path.name}: {m.group(0)}" for m in re.finditer(pattern, text)]
    assert offenders == []
