"""Action items across incidents (filters, inline edit, won't do with a reason) and the
notifications page."""

import re
from datetime import date, timedelta

import pytest
from django.utils import timezone

from postmortems import services
from postmortems.models import ActionItem, Notification
from tests.unit.postmortems.test_pages import as_user, incident, people, pm, prom  # noqa: F401

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.fixture
def items(pm, people):  # noqa: F811
    rita = people["rita"]

    def make(title, **values):
        return services.action_item_create(
            incident_id=pm.incident_id, actor=rita, postmortem_id=pm.pk,
            values={"title": title, **values},
        )  # fmt: skip

    late = make("Late alert rule", owner="rita", category="monitoring",
                due_date=timezone.localdate() - timedelta(days=3))  # fmt: skip
    drill = make("Run a failover drill", owner="cara", category="drill")
    done = make("Fix the runbook", category="process")
    services.action_item_set_status(item_id=done.pk, actor=rita, status="done")
    return late, drill, done


def titles(response) -> list[str]:
    return re.findall(r'data-testid="item-title">([^<]+)<', response.content.decode())


def test_filters_status_owner_category_overdue(client, items, people):  # noqa: F811
    as_user(client, people["vic"])
    assert sorted(titles(client.get("/postmortems/items/"))) == sorted(i.title for i in items)
    assert titles(client.get("/postmortems/items/?status=open")) == [
        "Late alert rule",
        "Run a failover drill",
    ]
    assert titles(client.get("/postmortems/items/?status=done")) == ["Fix the runbook"]
    assert titles(client.get("/postmortems/items/?owner=cara")) == ["Run a failover drill"]
    assert titles(client.get("/postmortems/items/?category=monitoring")) == ["Late alert rule"]
    overdue = client.get("/postmortems/items/?overdue=1")
    assert titles(overdue) == ["Late alert rule"]
    assert "overdue" in text(overdue)
    empty = text(client.get("/postmortems/items/?owner=ada"))
    assert "No action items match these filters." in empty
    assert "Clear the filters" in empty
    page = text(client.get("/postmortems/items/"))
    assert "Edit item" not in page  # a viewer reads only


def test_items_page_empty_state(client, people):  # noqa: F811
    as_user(client, people["vic"])
    assert "No action items yet." in text(client.get("/postmortems/items/"))


def test_inline_edit_saves_fields_and_status_with_a_reason(client, items, people):  # noqa: F811
    late, drill, _ = items
    as_user(client, people["rita"])
    form = {
        "context": "list",
        "title": "Alert on queue depth",
        "owner": "cara",
        "due_date": "2027-01-15",
        "priority": "P1",
        "category": "monitoring",
        "status": "in_progress",
        "external_url": "https://tracker.example/OPS-1",
        "description": "Page at waiting > 3.",
    }
    r = client.post(f"/postmortems/items/{late.pk}/", form, **HTMX)
    assert r.status_code == 200
    row = text(r)
    assert f'id="item-{late.pk}"' in row
    assert "Alert on queue depth" in row
    assert "In progress" in row
    late.refresh_from_db()
    assert (late.owner.username, late.due_date, late.priority, late.status) == (
        "cara", date(2027, 1, 15), "P1", "in_progress",
    )  # fmt: skip
    assert late.external_url == "https://tracker.example/OPS-1"

    refused = client.post(
        f"/postmortems/items/{drill.pk}/", {"status": "wont_do", "title": "Changed"}, **HTMX
    )
    assert refused.status_code == 409
    assert "say why this will not be done" in text(refused)
    drill.refresh_from_db()
    assert (drill.status, drill.title) == ("open", "Run a failover drill")  # all or nothing
    ok = client.post(
        f"/postmortems/items/{drill.pk}/", {"status": "wont_do", "reason": "Covered by chaos day"}
    )
    assert ok.status_code == 302
    drill.refresh_from_db()
    assert (drill.status, drill.wont_do_reason) == ("wont_do", "Covered by chaos day")
    assert drill.closed_at is not None
    bad = client.post(f"/postmortems/items/{drill.pk}/", {"external_url": "ftp://x"}, **HTMX)
    assert bad.status_code == 409
    assert "external_url" in text(bad)
    assert client.post("/postmortems/items/999999/", {"title": "x"}).status_code == 404


def test_add_an_item_by_hand_takes_defaults(client, pm, people):  # noqa: F811
    as_user(client, people["rita"])
    r = client.post(f"/postmortems/{pm.pk}/items/", {"title": "Write the drill", "priority": "P1"})
    assert r.status_code == 302
    assert r["Location"].endswith("#section-action_items")
    item = ActionItem.objects.get(title="Write the drill")
    assert item.due_date == timezone.localdate() + timedelta(days=7)
    assert "Write the drill" in text(client.get(f"/postmortems/{pm.pk}/"))
    r = client.post(f"/postmortems/{pm.pk}/items/", {"title": ""})
    assert "title" in text(client.get(r["Location"]))


def test_notifications_list_and_mark_read(client, pm, people):  # noqa: F811
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cara"]
    )
    note = Notification.objects.get(user=people["cara"])
    as_user(client, people["rita"])
    assert "Nothing new." in text(client.get("/postmortems/notifications/"))
    client.post(f"/postmortems/notifications/{note.pk}/read/")  # not hers: nothing happens
    note.refresh_from_db()
    assert note.read_at is None

    as_user(client, people["cara"])
    page = text(client.get("/postmortems/notifications/"))
    assert "Review requested" in page
    assert f'href="/postmortems/{pm.pk}/"' in page
    assert '<span class="badge small pm-unread">1</span>' in text(client.get("/postmortems/"))
    client.post(f"/postmortems/notifications/{note.pk}/read/")
    page = text(client.get("/postmortems/notifications/"))
    assert "Nothing new." in page
    assert "Recently read" in page


def test_list_filters_by_status_and_has_an_empty_state(client, pm, people):  # noqa: F811
    as_user(client, people["vic"])
    assert pm.title in text(client.get("/postmortems/"))
    assert pm.title in text(client.get("/postmortems/?status=draft"))
    published = text(client.get("/postmortems/?status=published"))
    assert pm.title not in published
    assert "No postmortems with this status." in published


def test_list_empty(client, people):  # noqa: F811
    as_user(client, people["vic"])
    body = text(client.get("/postmortems/"))
    assert "No postmortems yet." in body
    assert "Draft postmortem" in body
    assert 'href="/postmortems/"' in body
    assert ">Postmortems</a>" in body
