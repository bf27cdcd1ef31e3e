"""The archive's page (/archive/), its forms, the archived incident's banner and the two
queued tasks: what an admin sees and may do, and what the others may not."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from console import roles
from incidents import tasks
from incidents.archive.services import incidents_archive, incidents_restore
from incidents.models import Alert, ArchiveBatch, Incident, IncidentArchive
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory

pytestmark = pytest.mark.django_db

ARCHIVE = reverse("incidents:archive")
OLD = timezone.now() - timedelta(days=120)


def _old_incident(title="VLLMHighTTFT: TTFT p99 above 2s", n_alerts=2, n_events=3):
    inc = IncidentFactory(status="resolved", resolved_at=OLD, triggered_at=OLD, title=title)
    for k in range(n_alerts):
        AlertFactory(incident=inc, status="resolved", labels={"pod": f"p{k}"})
    for k in range(n_events):
        TimelineEventFactory(incident=inc, kind="note", message=f"note {k}")
    return inc


def _archived(*titles):
    incidents = [_old_incident(title) for title in titles]
    batch = incidents_archive(older_than_days=90, actor=None, method="command")
    return batch, incidents


@pytest.fixture
def admin(client, make_user):
    user = make_user("ada", roles.ADMIN)
    client.force_login(user)
    return user


@pytest.fixture
def queued(monkeypatch):
    """The tasks sent (name, args), instead of a broker."""
    sent = []
    for task in (tasks.archive_run, tasks.restore_run):
        monkeypatch.setattr(
            task,
            "apply_async",
            lambda args, task_id, _name=task.name: sent.append((_name, tuple(args))),
        )
    return sent


def _flash(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


# --- access ---------------------------------------------------------------------------
def test_only_those_who_may_see_the_archive_get_the_page_and_the_link(client, make_user):
    client.force_login(make_user("cmd", roles.COMMANDER))
    assert client.get(ARCHIVE).status_code == 403
    assert ARCHIVE not in client.get(reverse("incidents:list")).content.decode()
    client.force_login(make_user("ada", roles.ADMIN))
    assert f'href="{ARCHIVE}"' in client.get(reverse("incidents:list")).content.decode()
    page = client.get(ARCHIVE)
    assert page.status_code == 200
    assert 'aria-current="page">Archive</a>' in page.content.decode()


def test_posts_need_the_csrf_token(make_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("ada", roles.ADMIN))
    response = client.post(reverse("incidents:archive-run"), {"older_than_days": "90"})
    assert response.status_code == 403


# --- empty state and retention in words ------------------------------------------------
def test_empty_archive_says_what_to_do(client, admin, settings):
    settings.RETENTION_RESOLVED_DAYS = 0
    body = client.get(ARCHIVE).content.decode()
    assert "Nothing is archived yet." in body
    assert "RETENTION_RESOLVED_DAYS" in body
    assert "Off: nothing is archived unless someone archives now" in body
    assert 'name="older_than_days" value="90"' in body  # the default offered


def test_retention_on_is_said_and_offered(client, admin, settings):
    settings.RETENTION_RESOLVED_DAYS = 30
    body = client.get(ARCHIVE).content.decode()
    assert "On: every night, the incidents resolved more than 30 days ago are archived" in body
    assert 'name="older_than_days" value="30"' in body


# --- archive now ------------------------------------------------------------------------
def test_archive_now_queues_the_run_and_says_so(
    client, admin, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("incidents:archive-run"), {"older_than_days": "60"}, follow=True
        )
    assert response.redirect_chain[-1][0] == ARCHIVE
    assert queued == [("incidents.tasks.archive_run", (60, admin.pk, "page"))]
    said = _flash(response)
    assert "Archive run queued" in said
    assert "hundreds of thousands" in said


@pytest.mark.parametrize(
    ("days", "said"),
    [("3", "at least 7"), ("abc", "whole number"), ("99999999", "at most 36500")],
)
def test_archive_now_refuses_bad_days(client, admin, queued, days, said):
    response = client.post(reverse("incidents:archive-run"), {"older_than_days": days}, follow=True)
    assert said in _flash(response)
    assert queued == []


def test_archive_now_needs_the_archive_permission(client, make_user, queued):
    user = make_user("vic", roles.COMMANDER)
    user.user_permissions.add(*_perms("view_archivebatch"))
    client.force_login(user)
    body = client.get(ARCHIVE).content.decode()
    assert 'data-testid="archive-now"' not in body
    response = client.post(reverse("incidents:archive-run"), {"older_than_days": "90"})
    assert response.status_code == 403
    assert queued == []


def _perms(*codenames):
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(content_type__app_label="incidents", codename__in=codenames)


# --- batches and the search ---------------------------------------------------------------
def test_batches_and_archived_incidents_are_listed_and_searched(client, admin):
    batch, (ttft, kv) = _archived("VLLMHighTTFT: TTFT p99", "VLLMKVCacheFull: KV cache full")
    body = client.get(ARCHIVE).content.decode()
    assert f'data-batch="{batch.pk}" data-state="finished"' in body
    assert "resolved before" in body
    assert "the console" in body
    assert "Management command" in body
    assert body.count('data-testid="archived-incident"') == 2

    by_id = client.get(ARCHIVE, {"q": f"#{kv.pk}"}).content.decode()
    assert by_id.count('data-testid="archived-incident"') == 1
    assert f'data-incident="{kv.pk}"' in by_id
    by_words = client.get(ARCHIVE, {"q": "ttft"}).content.decode()
    assert f'data-incident="{ttft.pk}"' in by_words
    assert f'data-incident="{kv.pk}"' not in by_words
    none = client.get(ARCHIVE, {"q": "nothing like it"}).content.decode()
    assert "No archived incident matches." in none
    other = client.get(ARCHIVE, {"batch": batch.pk + 1}).content.decode()
    assert "No archived incident matches." in other


def test_an_unfinished_batch_is_running_then_interrupted(client, admin):
    now = timezone.now()
    ArchiveBatch.objects.create(created_at=now, method="page", older_than_days=90, cutoff=now)
    ArchiveBatch.objects.create(
        created_at=now - timedelta(hours=7), method="page", older_than_days=90, cutoff=now
    )
    body = client.get(ARCHIVE).content.decode()
    assert 'data-state="running"' in body
    assert 'data-state="interrupted"' in body


def test_the_lists_are_paginated(client, admin):
    for _ in range(26):
        _old_incident(n_alerts=0, n_events=0)
    incidents_archive(older_than_days=90, actor=None, method="command")
    first = client.get(ARCHIVE).content.decode()
    assert first.count('data-testid="archived-incident"') == 25
    second = client.get(ARCHIVE, {"page": 2}).content.decode()
    assert second.count('data-testid="archived-incident"') == 1


def test_page_cost_does_not_grow_with_the_archive(client, admin, django_assert_num_queries):
    _archived("one")
    with CaptureQueriesContext(connection) as small:
        client.get(ARCHIVE)
    for n in range(5):
        _archived(f"more {n}", f"and more {n}")
    with django_assert_num_queries(len(small)):
        client.get(ARCHIVE)


# --- restore --------------------------------------------------------------------------
def test_restore_one_from_the_search_keeps_the_search(client, admin):
    _, (inc, other) = _archived("first", "second")
    response = client.post(
        reverse("incidents:archive-restore"), {"incident": inc.pk, "q": "first"}, follow=True
    )
    assert response.redirect_chain[-1][0] == f"{ARCHIVE}?q=first"
    assert f"Incident #{inc.pk} restored: 2 alerts and 3 timeline entries are back." in _flash(
        response
    )
    assert Alert.objects.filter(incident=inc).count() == 2
    assert IncidentArchive.objects.filter(incident=other).exists()


def test_restore_refused_says_why(client, admin):
    inc = _old_incident()
    response = client.post(reverse("incidents:archive-restore"), {"incident": inc.pk}, follow=True)
    assert f"These incidents are not archived: #{inc.pk}." in _flash(response)


def test_restore_batch_queues_the_run(client, admin, queued, django_capture_on_commit_callbacks):
    batch, _ = _archived("a", "b")
    assert 'data-testid="restore-batch"' in client.get(ARCHIVE).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("incidents:archive-batch-restore", args=[batch.pk]), follow=True
        )
    assert queued == [("incidents.tasks.restore_run", (batch.pk, admin.pk, "page"))]
    assert f"Restore of archive batch {batch.pk} queued" in _flash(response)

    incidents_restore(actor=None, method="command", batch_id=batch.pk)
    again = client.post(reverse("incidents:archive-batch-restore", args=[batch.pk]), follow=True)
    assert "is restored already" in _flash(again)
    assert 'data-testid="restore-batch"' not in again.content.decode()
    assert (
        client.post(reverse("incidents:archive-batch-restore", args=[batch.pk + 9])).status_code
        == 404
    )


# --- the banner on an archived incident's page ----------------------------------------------
def test_banner_names_the_batch_and_counts_and_restores(client, admin):
    batch, (inc,) = _archived("gone")
    url = reverse("incidents:detail", args=[inc.pk])
    body = client.get(url).content.decode()
    assert 'data-testid="archived-banner"' in body
    assert f"batch {batch.pk}</a>): 2 alerts, 3 timeline entries." in body
    assert 'data-testid="restore-incident"' in body

    response = client.post(reverse("incidents:restore", args=[inc.pk]), follow=True)
    assert response.redirect_chain[-1][0] == url
    assert "restored" in _flash(response)
    assert 'data-testid="archived-banner"' not in response.content.decode()
    inc.refresh_from_db()
    assert inc.archived_at is None


def test_banner_without_the_restore_permission_has_no_button(client, make_user):
    _, (inc,) = _archived("gone")
    client.force_login(make_user("cmd", roles.COMMANDER))
    body = client.get(reverse("incidents:detail", args=[inc.pk])).content.decode()
    assert "Its alerts and timeline were archived on" in body
    assert 'data-testid="restore-incident"' not in body
    assert client.post(reverse("incidents:restore", args=[inc.pk])).status_code == 403
    assert Incident.objects.get(pk=inc.pk).archived_at is not None


def test_no_banner_and_no_archive_query_for_an_incident_never_archived(client, admin):
    inc = _old_incident()
    with CaptureQueriesContext(connection) as queries:
        body = client.get(reverse("incidents:detail", args=[inc.pk])).content.decode()
    assert 'data-testid="archived-banner"' not in body
    assert not [q for q in queries if "incidentarchive" in q["sql"]]


# --- the tasks ----------------------------------------------------------------------------
def test_tasks_run_the_services_as_the_actor(admin):
    inc = _old_incident()
    batch_id = tasks.archive_run.run(90, admin.pk, "api")
    batch = ArchiveBatch.objects.get(pk=batch_id)
    assert (batch.method, batch.created_by, batch.incidents) == ("api", admin, 1)
    assert tasks.restore_run.run(batch_id, admin.pk, "page") == 1
    assert Incident.objects.get(pk=inc.pk).archived_at is None


# --- the Django admin -----------------------------------------------------------------------
def test_admin_lists_batches_read_only(client, make_user):
    batch, _ = _archived("gone")
    client.force_login(make_user("root", None, is_staff=True, is_superuser=True))
    listing = client.get("/admin/incidents/archivebatch/")
    assert listing.status_code == 200
    assert f"/admin/incidents/archivebatch/{batch.pk}/change/" in listing.content.decode()
    assert client.get("/admin/incidents/archivebatch/add/").status_code == 403
    one = client.get(f"/admin/incidents/archivebatch/{batch.pk}/change/")
    assert one.status_code == 200
    assert 'name="older_than_days"' not in one.content.decode()  # shown, not editable
    deleted = client.post(f"/admin/incidents/archivebatch/{batch.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    assert ArchiveBatch.objects.filter(pk=batch.pk).exists()
