"""A declared incident (no alert: incidents/services/declare.py) named by its own team
label says so: "the incident's label", not "the alert's" (issue 28)."""

import pytest
from django.utils import translation

from console.texts import render
from incidents.services.declare import GROUPING_PREFIX
from pager.models import Team
from pager.routing import route
from tests.english_words import english_words
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


def test_a_declared_incidents_team_label_is_the_incidents():
    gpu = Team.objects.create(slug="gpu", name="GPU fleet")
    declared = IncidentFactory(grouping_key=f"{GROUPING_PREFIX}abc", group_labels={"team": "gpu"})
    found = route(declared)
    assert found.team == gpu
    assert found.why.startswith("the incident's label team=gpu names it")
    said = found.why_parts()
    assert said.english.startswith("the incident's label team=gpu names it")
    text = render(said.stored, language="zh-hans")
    assert "team=gpu" in text
    assert english_words(text, allowed=["team=gpu"]) == [], text
    with translation.override("zh-hans"):
        assert found.why == text
    # An incident an alert opened keeps the alert's wording.
    alerted = route(IncidentFactory(grouping_key="alertname=X", group_labels={"team": "gpu"}))
    assert alerted.why.startswith("the alert's label team=gpu names it")
