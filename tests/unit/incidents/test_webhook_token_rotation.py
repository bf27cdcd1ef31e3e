"""Rotating the webhook's bearer token without dropping alerts: during a rotation the
console accepts ALERTMANAGER_TOKEN (the new one) and ALERTMANAGER_TOKEN_PREVIOUS (the one
Alertmanager may still send), and its log says which one a delivery used."""

import logging

import pytest

from incidents.models import WebhookReceipt
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db
NEW, OLD = "new-alertmanager-token", "old-alertmanager-token"


@pytest.fixture
def rotating(settings):
    settings.ALERTMANAGER_TOKEN = NEW
    settings.ALERTMANAGER_TOKEN_PREVIOUS = OLD


def test_both_tokens_are_accepted_during_a_rotation(rotating, post_webhook, caplog):
    with caplog.at_level(logging.INFO, logger="incidents.webhook"):
        assert post_webhook(notification([alert(pod="p0")]), token=NEW).status_code == 200
        assert post_webhook(notification([alert(pod="p1")]), token=OLD).status_code == 200
    assert WebhookReceipt.objects.count() == 2
    # The operator sees when the old token stops being used.
    assert [r.token for r in caplog.records if hasattr(r, "token")] == ["current", "previous"]
    assert "ALERTMANAGER_TOKEN_PREVIOUS" in caplog.text


@pytest.mark.parametrize("token", ["a-third-token", "", NEW + OLD, OLD[:-1]])
def test_any_other_token_is_refused(rotating, post_webhook, token):
    r = post_webhook(notification([alert()]), token=token)
    assert r.status_code == 401
    assert not WebhookReceipt.objects.exists()


def test_an_empty_previous_token_never_matches_an_empty_header(settings, client):
    settings.ALERTMANAGER_TOKEN = NEW
    settings.ALERTMANAGER_TOKEN_PREVIOUS = ""
    for header in ("Bearer ", "Bearer", "Bearer    "):
        r = client.post(
            "/api/v1/alerts/alertmanager",
            data="{}",
            content_type="application/json",
            HTTP_AUTHORIZATION=header,
        )
        assert r.status_code == 401, header


def test_the_previous_token_alone_opens_nothing(settings, post_webhook):
    """An empty ALERTMANAGER_TOKEN refuses every webhook, whatever the previous one is."""
    settings.ALERTMANAGER_TOKEN = ""
    settings.ALERTMANAGER_TOKEN_PREVIOUS = OLD
    assert post_webhook(notification([alert()]), token=OLD).status_code == 401
