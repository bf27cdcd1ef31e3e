"""Review workflow and editing rules: draft -> in review -> published, who may do what,
stale edits refused, the edit history; action items, suggestions accepted once. Overdue
reminders are the notifications app's (tests/unit/notifications/test_overdue.py)."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied

from console.errors import DomainError
from incidents.models import TimelineEvent
from postmortems import services
from postmortems.models import ActionItem, Notification, PostmortemEdit
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm(people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    incident = IncidentFactory(status="resolved", severity="SEV2", runbook="nccl-hang")
    return services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])


def test_edit_with_version_and_history(pm, people):
    v = pm.version
    services.postmortem_update(
        postmortem_id=pm.pk, actor=people["rita"], version=v, changes={"summary": "Group 3 hung."}
    )
    with pytest.raises(DomainError, match="Someone else saved") as exc:
        services.postmortem_update(
            postmortem_id=pm.pk, actor=people["cara"], version=v, changes={"summary": "x"}
        )
    assert exc.value.code == "conflict"
    with pytest.raises(PermissionDenied):
        services.postmortem_update(
            postmortem_id=pm.pk, actor=people["vic"], version=v + 1, changes={"summary": "x"}
        )
    (edit,) = PostmortemEdit.objects.filter(postmortem=pm, field="summary")
    assert edit.new == "Group 3 hung."
    assert edit.editor == people["rita"]
    entry = services.timeline_entry_add(
        postmortem_id=pm.pk, actor=people["rita"], occurred_at=pm.incident.triggered_at,
        text="On-call paged",
    )  # fmt: skip
    services.timeline_entry_update(
        entry_id=entry.pk, actor=people["rita"], text="Paged.", included=False
    )
    entry.refresh_from_db()
    assert (entry.text, entry.included) == ("Paged.", False)
    assert entry.original_text != "Paged."


def test_review_and_publish(pm, people):
    with pytest.raises(DomainError, match="for review before publishing"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    with pytest.raises(DomainError, match="cannot review"):
        services.postmortem_request_review(
            postmortem_id=pm.pk, actor=people["rita"], reviewers=["rita"]
        )
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cara", "cole"]
    )
    assert Notification.objects.filter(user=people["cara"], kind="review").count() == 1
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    with pytest.raises(DomainError, match="Waiting for approval of revision 1 from cole"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    services.postmortem_review(
        postmortem_id=pm.pk, actor=people["cole"], approve=False, note="Add the NVLink counters."
    )
    pm.refresh_from_db()
    assert pm.status == "draft"  # changes requested: back to the author
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cole"]
    )
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cole"], approve=True)
    with pytest.raises(PermissionDenied):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["rita"])
    # cara approved the earlier round; cole approved this one: both approvals stand.
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    pm.refresh_from_db()
    assert pm.status == "published"
    assert pm.published_by == people["cara"]
    with pytest.raises(PermissionDenied, match="only an admin"):
        services.postmortem_update(
            postmortem_id=pm.pk,
            actor=people["rita"],
            version=pm.version,
            changes={"summary": "late"},
        )
    services.postmortem_update(
        postmortem_id=pm.pk,
        actor=people["ada"],
        version=pm.version,
        changes={"summary": "fixed typo"},
    )
    assert PostmortemEdit.objects.filter(postmortem=pm, field="status").count() >= 3
    # The incident's own timeline tells the after-story too.
    said = list(
        TimelineEvent.objects.filter(incident=pm.incident, kind="postmortem")
        .order_by("id")
        .values_list("message", flat=True)
    )
    assert [m.split(": ", 1)[1] for m in said] == [
        "drafted",
        "review requested from cara, cole",
        "approved",
        "changes requested",
        "review requested from cole",
        "approved",
        "published",
        "edited after publication by ada (summary); revision 2, published as revision 1",
    ]


def test_suggestions_become_items_once_with_default_due_dates(pm, people):
    source = pm.suggestions[0]["source"]
    first = services.action_item_accept_suggestion(
        postmortem_id=pm.pk, actor=people["rita"], source=source
    )
    again = services.action_item_accept_suggestion(
        postmortem_id=pm.pk, actor=people["rita"], source=source
    )
    assert first.pk == again.pk
    assert ActionItem.objects.count() == 1
    days = {"P1": 7, "P2": 30, "P3": 90, "P4": 180}[first.priority]
    assert first.due_date - first.created_at.date() == timedelta(days=days)
    assert first.namespace == pm.incident.namespace
    assert first.runbook == "nccl-hang"
    with pytest.raises(DomainError, match="reason"):
        services.action_item_set_status(item_id=first.pk, actor=people["rita"], status="wont_do")
    item = services.action_item_set_status(item_id=first.pk, actor=people["rita"], status="done")
    assert item.closed_at is not None
    with pytest.raises(PermissionDenied):
        services.action_item_update(item_id=first.pk, actor=people["vic"], values={"title": "x"})
    said = list(
        TimelineEvent.objects.filter(incident=pm.incident, kind="action_item")
        .order_by("id")
        .values_list("message", flat=True)
    )
    assert len(said) == 2
    category = first.get_category_display()
    expected = f"added ({first.priority}, {category}, owner nobody, due {first.due_date})"
    assert said[0].endswith(expected)
    assert said[1].endswith("Open → Done")
    with pytest.raises(DomainError, match="owner: no active user"):
        services.action_item_update(
            item_id=first.pk, actor=people["rita"], values={"owner": "nobody"}
        )
