"""The incident page's runbook partials refresh live without disturbing the responder:
the triage poll answers 204 when nothing it shows changed (so open <details> and the
runbook picker survive), and the charts get new data as JSON to redraw in place."""

import re

import pytest
from django.core.cache import cache

from console import roles
from incidents.models import Incident
from runbooks.catalog import load_catalog
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus
from tests.unit.runbooks.test_pages import TTFT_ALL_RED

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def _clear_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(TTFT_ALL_RED, default=1.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    settings.TRIAGE_CACHE_SECONDS = 10
    yield fake
    fake.close()


@pytest.fixture
def viewer(client, make_user):
    client.force_login(make_user("vera", roles.VIEWER))
    return client


@pytest.fixture
def incident(post_webhook) -> Incident:
    response = post_webhook(notification([alert()]))
    assert response.status_code == 200, response.content
    return Incident.objects.get(pk=response.json()["incidents"][0])


def version_of(response) -> str:
    match = re.search(r'data-triage-version="([0-9a-f]+)"', response.content.decode())
    assert match, "the partial carries the version of what it shows"
    return match.group(1)


def test_triage_poll_is_204_while_nothing_shown_changes(viewer, incident, prom):
    url = f"/runbooks/incidents/{incident.pk}/triage/"
    first = viewer.get(url, **HTMX)
    assert first.status_code == 200
    version = version_of(first)
    cache.clear()  # a fresh evaluation (new evaluated_at), same values
    again = viewer.get(url, {"v": version}, **HTMX)
    assert again.status_code == 204
    assert again.content == b""
    assert re.fullmatch(r"\d\d:\d\d:\d\d \S+", again["X-Triage-Evaluated"])


def test_triage_poll_is_200_when_a_check_value_changes(viewer, incident, prom):
    url = f"/runbooks/incidents/{incident.pk}/triage/"
    version = version_of(viewer.get(url, **HTMX))
    prom.answers["num_requests_waiting"] = 31  # still firing, but the page shows 31 now
    cache.clear()
    changed = viewer.get(url, {"v": version}, **HTMX)
    assert changed.status_code == 200
    assert '31 <span class="muted">count</span>' in changed.content.decode()
    assert version_of(changed) != version


def test_triage_poll_is_200_when_a_step_is_checked_off(client, make_user, incident, prom):
    client.force_login(make_user("rosa", roles.RESPONDER))
    url = f"/runbooks/incidents/{incident.pk}/triage/"
    version = version_of(client.get(url, **HTMX))
    done = client.post(f"/runbooks/incidents/{incident.pk}/steps/symptom/", **HTMX)
    assert done.status_code == 200
    assert version_of(done) != version  # the action's own render carries the new version
    assert client.get(url, {"v": version}, **HTMX).status_code == 200
    assert client.get(url, {"v": version_of(done)}, **HTMX).status_code == 204


def test_a_stale_or_missing_version_gets_the_partial(viewer, incident, prom):
    url = f"/runbooks/incidents/{incident.pk}/triage/"
    assert viewer.get(url, {"v": "0000"}, **HTMX).status_code == 200
    assert viewer.get(url, **HTMX).status_code == 200


def test_signals_answer_json_for_the_live_refresh(viewer, incident, prom):
    url = f"/runbooks/incidents/{incident.pk}/signals/"
    page = viewer.get(url, **HTMX).content.decode()
    assert f'data-refresh-url="{url}"' in page
    assert 'data-refresh-seconds="10"' in page
    answer = viewer.get(url, {"format": "json"}).json()
    signals = load_catalog().get("ttft-spike").golden_signals
    assert set(answer["charts"]) == {f"chart-{incident.pk}-{s.id}" for s in signals}
    for dom_id in answer["charts"]:
        assert f'data-chart="{dom_id}"' in page  # the refresh finds every plot it redraws
        series = answer["charts"][dom_id]["series"][0]
        assert len(series["x"]) == len(series["y"]) > 2
    assert answer["prometheus_error"] == ""
    assert "step" in answer["range"]


def test_signals_json_says_when_prometheus_is_down(viewer, incident, settings):
    from tests.helpers import free_port

    settings.PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    answer = viewer.get(f"/runbooks/incidents/{incident.pk}/signals/", {"format": "json"}).json()
    assert "Prometheus at" in answer["prometheus_error"]
