"""The archive's REST API: the lists, archiving now (queued), restoring (at once or
queued), the answers when the body is bad or the role does not allow it, and the
incident detail's `archived_at`."""

from datetime import timedelta

import pytest
from django.utils import timezone

from console import roles
from incidents import tasks
from incidents.archive.services import incidents_archive
from incidents.models import Alert, Incident, IncidentArchive
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory

pytestmark = pytest.mark.django_db

OLD = timezone.now() - timedelta(days=120)
BASE = "/api/v1/archive/"


def _old_incident(title="VLLMHighTTFT: TTFT p99 above 2s"):
    inc = IncidentFactory(status="resolved", resolved_at=OLD, triggered_at=OLD, title=title)
    AlertFactory(incident=inc, status="resolved")
    TimelineEventFactory(incident=inc, kind="note", message="a note")
    return inc


@pytest.fixture
def admin(client, make_user):
    user = make_user("ada", roles.ADMIN)
    client.force_login(user)
    return user


@pytest.fixture
def queued(monkeypatch):
    sent = []
    for task in (tasks.archive_run, tasks.restore_run):
        monkeypatch.setattr(
            task,
            "apply_async",
            lambda args, task_id, _name=task.name: sent.append((_name, tuple(args), task_id)),
        )
    return sent


def post(client, path, body):
    return client.post(BASE + path, body, content_type="application/json")


def test_lists_batches_and_archived_incidents_with_search(client, admin):
    ttft, kv = _old_incident("TTFT p99 above 2s"), _old_incident("KV cache full")
    batch = incidents_archive(older_than_days=90, actor=None, method="command")

    batches = client.get(BASE + "batches/").json()
    assert batches["count"] == 1
    assert batches["count_capped"] is False
    row = batches["results"][0]
    assert row["id"] == batch.pk
    assert (row["incidents"], row["alerts"], row["events"], row["restored"]) == (2, 2, 2, 0)
    assert (row["state"], row["method"], row["created_by"]) == ("finished", "command", None)

    found = client.get(BASE + "incidents/", {"batch": batch.pk}).json()
    assert {r["id"] for r in found["results"]} == {ttft.pk, kv.pk}
    one = client.get(BASE + "incidents/", {"q": "kv cache"}).json()["results"]
    assert [(r["id"], r["batch"], r["alerts"], r["events"]) for r in one] == [
        (kv.pk, batch.pk, 1, 1)
    ]
    assert one[0]["url"].endswith(f"/incidents/{kv.pk}/")
    assert client.get(BASE + "incidents/", {"q": f"#{ttft.pk}"}).json()["count"] == 1
    bad = client.get(BASE + "incidents/", {"batch": "x"})
    assert bad.status_code == 400
    assert "batch" in bad.json()


def test_archive_now_is_queued(client, admin, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, "", {"older_than_days": 60})
    assert response.status_code == 202
    body = response.json()
    assert body["task"] == "incidents.tasks.archive_run"
    assert body["older_than_days"] == 60
    assert queued == [("incidents.tasks.archive_run", (60, admin.pk, "api"), body["task_id"])]


@pytest.mark.parametrize("body", [{}, {"older_than_days": 3}, {"older_than_days": "x"}])
def test_archive_now_names_the_bad_field(client, admin, queued, body):
    response = post(client, "", body)
    assert response.status_code == 400
    assert "older_than_days" in response.json()
    assert queued == []


def test_without_permission_403(client, make_user, queued):
    client.force_login(make_user("cmd", roles.COMMANDER))
    assert client.get(BASE + "batches/").status_code == 403
    assert client.get(BASE + "incidents/").status_code == 403
    assert post(client, "", {"older_than_days": 90}).status_code == 403
    assert post(client, "restore/", {"batch": 1}).status_code == 403
    assert queued == []


def test_restore_named_incidents_at_once(client, admin):
    inc, other = _old_incident(), _old_incident()
    incidents_archive(older_than_days=90, actor=None, method="command")
    response = post(client, "restore/", {"incidents": [inc.pk]})
    assert response.status_code == 200
    assert response.json() == {"incidents": 1, "alerts": 1, "events": 1, "alerts_kept": 0}
    assert Alert.objects.filter(incident=inc).exists()
    assert IncidentArchive.objects.filter(incident=other).exists()

    again = post(client, "restore/", {"incidents": [inc.pk]})
    assert again.status_code == 409
    assert again.json()["code"] == "not_archived"
    assert f"#{inc.pk}" in again.json()["detail"]


def test_restore_a_batch_is_queued(client, admin, queued, django_capture_on_commit_callbacks):
    _old_incident()
    batch = incidents_archive(older_than_days=90, actor=None, method="command")
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, "restore/", {"batch": batch.pk})
    assert response.status_code == 202
    assert response.json()["batch"] == batch.pk
    assert queued[0][:2] == ("incidents.tasks.restore_run", (batch.pk, admin.pk, "api"))
    missing = post(client, "restore/", {"batch": batch.pk + 5})
    assert missing.status_code == 404
    assert "no archive batch" in missing.json()["detail"]


@pytest.mark.parametrize(
    "body", [{}, {"incidents": [1], "batch": 1}, {"incidents": []}, {"incidents": ["x"]}]
)
def test_restore_bad_body_400(client, admin, body):
    response = post(client, "restore/", body)
    assert response.status_code == 400
    assert "incidents" in response.json()


def test_incident_detail_says_archived_at(client, admin):
    inc = _old_incident()
    url = f"/api/v1/incidents/{inc.pk}/"
    assert client.get(url).json()["archived_at"] is None
    incidents_archive(older_than_days=90, actor=None, method="command")
    archived = client.get(url).json()
    assert archived["archived_at"] is not None
    assert archived["alerts"] == []
    assert Incident.objects.get(pk=inc.pk).archived_at is not None


def test_schema_documents_the_archive(client, admin):
    schema = client.get("/api/schema/?format=json").json()
    for path in ("batches/", "incidents/", "", "restore/"):
        assert f"/api/v1/archive/{path}" in schema["paths"]
    run = schema["paths"]["/api/v1/archive/"]["post"]
    assert {"202", "400", "403"} <= set(run["responses"])
    detail = schema["components"]["schemas"]["IncidentDetail"]["properties"]
    assert detail["archived_at"]["readOnly"] is True
