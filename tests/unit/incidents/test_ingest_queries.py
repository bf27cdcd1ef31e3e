"""Ingestion costs the same number of queries for 1 alert as for 100."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.payloads import alert, notification, resolved

pytestmark = pytest.mark.django_db

MAX_QUERIES = 14  # savepoints + 2 locking reads + bulk writes + receipt


def queries_for(post_webhook, body) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert post_webhook(body).status_code == 200
    return len(ctx.captured_queries)


def group(n: int, tag: str) -> list[dict]:
    return [alert(pod=f"{tag}-{i}") for i in range(n)]


@pytest.mark.parametrize("phase", ["new", "repeat", "resolve"])
def test_query_count_does_not_grow_with_alerts(post_webhook, phase):
    counts = {}
    for n, key in ((1, "g1"), (100, "g100")):
        alerts = group(n, key)
        gk = f'{{}}:{{alertname="VLLMHighTTFT", group="{key}"}}'
        if phase != "new":
            post_webhook(notification(alerts, group_key=gk))
        body_alerts = [resolved(a) for a in alerts] if phase == "resolve" else alerts
        counts[n] = queries_for(post_webhook, notification(body_alerts, group_key=gk))
    assert counts[1] == counts[100], counts
    assert counts[100] <= MAX_QUERIES


def test_a_storm_over_many_groups_is_still_constant(post_webhook):
    few = queries_for(post_webhook, notification(group(2, "a"), group_key='{}:{g="a"}'))
    # 100 alerts, and with label grouping every alert its own new incident.
    from django.test import override_settings

    with override_settings(INCIDENT_GROUP_BY=["pod"]):
        many = queries_for(post_webhook, notification(group(100, "b"), group_key='{}:{g="b"}'))
    assert few == many
