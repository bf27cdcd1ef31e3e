"""The year generator (postmortems/fleet_year/, issue 29): what it writes holds together,
the pages open on it, the console carries on after it, and a seed gives the same year."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.db.models import Count
from django.urls import reverse

from console import roles
from console.texts import english
from incidents.models import Alert, Incident, TimelineEvent, WebhookReceipt
from incidents.timeline_kinds import timeline_kind_known
from postmortems.fleet_year import YearRefused, generate_year, texts
from postmortems.fleet_year.documents import people_ensure
from postmortems.models import ActionItem, Postmortem
from tests.payloads import alert, notification

pytestmark = pytest.mark.django_db
postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the year is written with COPY, PostgreSQL's"
)

END = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SMALL = 300


def _year(**kw):
    return generate_year(incidents=SMALL, seed=7, end=END, **kw)


@pytest.fixture
def year():
    return _year()


@postgres
def test_counts_and_ratios(year):
    assert Incident.objects.count() == SMALL
    alerts, events = Alert.objects.count(), TimelineEvent.objects.count()
    assert 20 * SMALL < alerts < 40 * SMALL  # ~30 per incident
    assert 45 * SMALL < events < 75 * SMALL  # ~60 per incident
    assert year.counts["incidents_alert"] == alerts
    assert year.counts["incidents_timelineevent"] == events
    statuses = dict(Incident.objects.values_list("status").annotate(n=Count("id")))
    assert statuses["resolved"] >= 0.95 * SMALL
    assert sum(n for s, n in statuses.items() if s != "resolved") == SMALL // 50
    severities = Incident.objects.values_list("severity", flat=True)
    assert sum(s in ("SEV3", "SEV4") for s in severities) > 0.75 * SMALL
    assert Incident.objects.filter(is_drill=True).exists()
    assert Incident.objects.filter(triggered_at__gte=END - timedelta(days=365)).count() == SMALL
    assert not Incident.objects.filter(triggered_at__gt=END).exists()
    assert Incident.objects.values("namespace").distinct().count() > 30
    assert Postmortem.objects.count() == SMALL // 50
    items = ActionItem.objects.filter(postmortem__isnull=False)
    assert Postmortem.objects.count() <= items.count() <= 5 * Postmortem.objects.count()
    receipts = WebhookReceipt.objects.all()
    assert (
        receipts.count()
        == Incident.objects.filter(triggered_at__gte=END - timedelta(days=7)).count()
    )
    for receipt in receipts:
        assert len(receipt.body.encode()) == receipt.body_bytes
        assert json.loads(receipt.body)["alerts"]


@postgres
def test_rows_hold_together(year):
    for inc in Incident.objects.all():
        assert inc.started_at < inc.triggered_at
        if inc.status == "resolved":
            assert inc.triggered_at <= inc.acknowledged_at <= inc.resolved_at
            assert inc.mitigated_at <= inc.resolved_at <= END
        if inc.reopen_count:
            assert inc.reopened_at is not None
    with connection.cursor() as cursor:
        # One open incident per group and unique alerts: the constraints are in place.
        cursor.execute(
            "SELECT count(*) FROM (SELECT grouping_key FROM incidents_incident "
            "WHERE status <> 'resolved' GROUP BY 1 HAVING count(*) > 1) x"
        )
        assert cursor.fetchone()[0] == 0
        # Each incident's timeline starts with its opening, in time order, kinds registered.
        cursor.execute(
            "SELECT DISTINCT ON (incident_id) kind FROM incidents_timelineevent "
            "ORDER BY incident_id, occurred_at, id"
        )
        assert {r[0] for r in cursor.fetchall()} == {"incident_opened"}
    assert all(
        timeline_kind_known(k)
        for k in TimelineEvent.objects.values_list("kind", flat=True).distinct()
    )
    # The stored parts word the same English as the message.
    for event in TimelineEvent.objects.exclude(kind="note").order_by("?")[:300]:
        assert english(event.payload["msg"]) == event.message, event.kind
    alerts = Alert.objects.order_by("?")[:200]
    for a in alerts:
        assert {"alertname", "namespace", "lws", "pod", "cluster", "severity", "team"} <= set(
            a.labels
        )
        assert a.incident_id is not None
        assert a.first_received_at <= a.last_received_at


def test_english_matches_the_catalogue():
    for key, forms in texts.PLURAL.items():
        for count in (1, 2):
            said = english([[key, {"count": count, "names": "X"}]])
            assert said == forms[count != 1] % {"count": count, "names": "X"}
    for key, template in texts.EN.items():
        names = ("title", "reason", "alert", "minutes", "actor", "to", "from", "lead")
        params = dict.fromkeys((*names, "runbook", "why", "id", "other", "higher", "lower"), "X")
        assert english([[key, params]]) == template % params, key


@postgres
def test_pages_open(year, client, make_user):
    client.force_login(make_user("root", roles.ADMIN, is_superuser=True, is_staff=True))
    inc = (
        Incident.objects.filter(status="resolved", reopen_count__gt=0).first()
        or Incident.objects.first()
    )
    pm = Postmortem.objects.first()
    for url in (
        reverse("incidents:list"),
        reverse("incidents:list") + "?status=open",
        reverse("incidents:detail", args=[inc.pk]),
        reverse("incidents:detail", args=[pm.incident_id]),
        reverse("postmortems:detail", args=[pm.pk]),
        reverse("incidents:receipts"),
    ):
        response = client.get(url)
        assert response.status_code == 200, url


@postgres
def test_the_console_carries_on(year, post_webhook):
    last = Incident.objects.order_by("-id").first().pk
    body = notification([alert(pod="vllm-chat-9", starts_at=END + timedelta(hours=1))])
    response = post_webhook(body)
    assert response.status_code == 200, response.content
    new = Incident.objects.get(pk=response.json()["incidents"][0])
    assert new.pk == last + 1
    assert new.events.filter(kind="incident_opened").exists()


@postgres
def test_refused_with_incidents(year):
    with pytest.raises(YearRefused, match="already holds incidents"):
        _year()


def test_refused_on_sqlite(monkeypatch):
    monkeypatch.setattr(connection, "vendor", "sqlite")
    with pytest.raises(CommandError, match="PostgreSQL"):
        call_command("fleet_year", incidents=10)


@postgres
def test_same_seed_same_year():
    people_ensure("default")  # the same people for both runs (their ids are in the rows)
    tables = (
        "incidents_incident",
        "incidents_alert",
        "incidents_timelineevent",
        "incidents_webhookreceipt",
        "postmortems_postmortem",
        "postmortems_actionitem",
    )

    def digests() -> dict[str, str]:
        with connection.cursor() as cursor:
            out = {}
            for table in tables:
                cursor.execute(f"SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM {table} t")  # noqa: S608
                out[table] = cursor.fetchone()[0]
            return out

    class Again(Exception):
        pass

    first: dict[str, str] = {}

    def once_then_undo() -> None:
        with transaction.atomic():
            _year(postmortems=4)
            first.update(digests())
            raise Again

    with pytest.raises(Again):
        once_then_undo()
    assert not Incident.objects.exists()
    _year(postmortems=4)
    assert digests() == first
