"""A draft is written in the language of whoever asks for it, stored as written: the worker,
a refresh by someone reading another language, and the pages never re-translate it."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone, translation

from console import roles
from postmortems import services
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"


@pytest.fixture
def rita(make_user):
    return make_user("rita", roles.RESPONDER)


@pytest.fixture
def incident():
    now = timezone.now()
    return IncidentFactory(
        title="TTFT p99 above 2s",
        status="resolved",
        runbook="",
        started_at=now - timedelta(minutes=30),
        triggered_at=now - timedelta(minutes=28),
        mitigated_at=now - timedelta(minutes=10),
        resolved_at=now - timedelta(minutes=5),
    )


def test_an_english_reader_gets_an_english_draft(rita, incident):
    with translation.override("en"):
        pm = services.postmortem_draft(incident_id=incident.pk, actor=rita)
    assert pm.language == "en"
    assert pm.title == "Postmortem: TTFT p99 above 2s"
    assert pm.summary.startswith("SEV2 incident: TTFT p99 above 2s. Detected after 2m 00s")


def test_the_draft_language_is_the_askers_and_survives_a_refresh(rita, incident):
    with translation.override("zh-hans"):
        pm = services.postmortem_draft(incident_id=incident.pk, actor=rita)
    assert pm.language == "zh-hans"
    drafted = (pm.title, pm.summary, pm.impact)
    with translation.override("en"):  # a colleague reading English refreshes it
        pm = services.postmortem_refresh(postmortem_id=pm.pk, actor=rita)
    assert (pm.title, pm.summary, pm.impact) == drafted
    assert pm.language == "zh-hans"
    if CATALOGUE.exists():
        assert pm.title == "复盘：TTFT p99 above 2s"
        assert "Detected after" not in pm.summary
