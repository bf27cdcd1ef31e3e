"""What is published is what was approved: every content change bumps the postmortem's
revision and withdraws the approvals given so far; publishing needs approvals of the
current revision (and refuses if its own refresh from the incident changed the content);
nobody approves only their own writing; an admin's correction of a published postmortem
stays published but says so on the incident timeline. Services, pages and the API."""

import re

import pytest
from django.core.exceptions import PermissionDenied
from rest_framework.test import APIClient

from console.api_tokens.models import ApiToken
from console.errors import DomainError
from incidents import services as incident_services
from incidents.models import TimelineEvent
from postmortems import services
from postmortems.models import Notification, Postmortem, PostmortemEdit, Reviewer
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm(people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    incident = IncidentFactory(status="resolved", severity="SEV2", runbook="nccl-hang")
    incident_services.incident_note_add(incident_id=incident.pk, actor=people["rita"], text="KV")
    return services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])


def said(pm) -> list[str]:
    """The postmortem's lines on the incident timeline, without the "Postmortem #N: "."""
    messages = TimelineEvent.objects.filter(incident=pm.incident, kind="postmortem")
    return [m.split(": ", 1)[1] for m in messages.order_by("id").values_list("message", flat=True)]


def write(pm, actor, text: str) -> None:
    version = Postmortem.objects.get(pk=pm.pk).version
    services.postmortem_update(
        postmortem_id=pm.pk, actor=actor, version=version, changes={"summary": text}
    )


def approved(pm, people, *names: str) -> None:
    services.postmortem_request_review(postmortem_id=pm.pk, actor=people["rita"], reviewers=names)
    for name in names:
        services.postmortem_review(postmortem_id=pm.pk, actor=people[name], approve=True)


def state(pm) -> tuple[str, dict]:
    pm.refresh_from_db()
    reviewers = Reviewer.objects.filter(postmortem=pm).select_related("user")
    return pm.status, {r.user.username: r.state for r in reviewers}


# Every kind of write that changes what would be published.
EDITS = {
    "summary": lambda pm, who: write(pm, who, "Edited after the approval."),
    "title": lambda pm, who: services.postmortem_update(
        postmortem_id=pm.pk,
        actor=who,
        version=Postmortem.objects.get(pk=pm.pk).version,
        changes={"title": "A new title"},
    ),
    "timeline text": lambda pm, who: services.timeline_entry_update(
        entry_id=pm.entries.first().pk, actor=who, text="Reworded."
    ),
    "timeline left out": lambda pm, who: services.timeline_entry_update(
        entry_id=pm.entries.first().pk, actor=who, included=False
    ),
    "timeline line added": lambda pm, who: services.timeline_entry_add(
        postmortem_id=pm.pk, actor=who, occurred_at=pm.incident.triggered_at, text="Paged."
    ),
    "suggestion accepted": lambda pm, who: services.action_item_accept_suggestion(
        postmortem_id=pm.pk, actor=who, source=pm.suggestions[0]["source"]
    ),
    "item attached": lambda pm, who: services.action_item_create(
        incident_id=pm.incident_id, actor=who, values={"title": "Drill"}, postmortem_id=pm.pk
    ),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_any_edit_after_approval_sends_it_back_to_review(pm, people, edit):
    write(pm, people["rita"], "Group 3 hung.")
    approved(pm, people, "cara")
    EDITS[edit](pm, people["rita"])

    assert state(pm) == ("in_review", {"cara": "requested"})
    with pytest.raises(DomainError, match="Waiting for approval of revision"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm)[0] == "in_review"
    assert said(pm)[-1].startswith("edited after approval by rita (")
    assert said(pm)[-1].endswith("back in review; needs approval again from cara")
    assert Notification.objects.filter(user=people["cara"], kind="review").count() == 2

    services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    assert Reviewer.objects.get(user=people["cara"]).approved_revision == pm.revision
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm) == ("published", {"cara": "approved"})
    assert pm.published_revision == pm.revision
    assert said(pm)[-2:] == ["approved", "published"]


def test_edits_without_an_approval_do_not_touch_the_review(pm, people):
    write(pm, people["rita"], "First words.")
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cara"]
    )
    write(pm, people["rita"], "Better words.")  # nobody approved yet: nothing withdrawn
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm) == ("published", {"cara": "approved"})
    assert said(pm) == ["drafted", "review requested from cara", "approved", "published"]


def test_an_approval_from_an_earlier_round_is_withdrawn_by_edits_in_between(pm, people):
    approved(pm, people, "cara")
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cole"]
    )
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cole"], approve=False)
    write(pm, people["rita"], "Added the NVLink counters.")  # while back in draft
    assert state(pm) == ("draft", {"cara": "requested", "cole": "changes"})
    assert said(pm)[-1] == (
        "edited after approval by rita (summary); needs approval again from cara"
    )
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cole"]
    )
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cole"], approve=True)
    with pytest.raises(DomainError, match="from cara"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cole"])


def test_publish_refuses_when_its_refresh_changed_what_was_approved(pm, people):
    approved(pm, people, "cara")
    incident_services.incident_note_add(
        incident_id=pm.incident_id, actor=people["cole"], text="Found a second cause"
    )
    with pytest.raises(DomainError, match="changed since it was approved") as exc:
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert "cara" in str(exc.value)
    assert state(pm) == ("in_review", {"cara": "requested"})
    assert pm.entries.filter(text="cole: Found a second cause").exists()
    assert said(pm)[-1].startswith("refreshed from the incident after approval by cara (")
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])  # nothing new
    assert state(pm)[0] == "published"


def test_a_refresh_that_changes_nothing_keeps_the_approval(pm, people):
    approved(pm, people, "cara")
    revision = Postmortem.objects.get(pk=pm.pk).revision
    services.postmortem_refresh(postmortem_id=pm.pk, actor=people["rita"])
    assert state(pm) == ("in_review", {"cara": "approved"})
    assert pm.revision == revision


# --- who may approve ---------------------------------------------------------------------
def test_the_only_author_cannot_approve_alone(pm, people):
    write(pm, people["cara"], "All mine.")
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["cara"], reviewers=["cara"]
    )
    with pytest.raises(DomainError, match="another reviewer has to approve"):
        services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    with pytest.raises(DomainError, match="cara wrote all of it"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm) == ("in_review", {"cara": "requested"})
    # Another reviewer approves: the author's own approval is not needed.
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["cara"], reviewers=["cole"]
    )
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cole"], approve=True)
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm)[0] == "published"


def test_an_author_may_approve_once_someone_else_wrote_too(pm, people):
    write(pm, people["cara"], "Mostly mine.")
    write(pm, people["rita"], "Mostly mine, and a line from Rita.")
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["cara"], reviewers=["cara"]
    )
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm) == ("published", {"cara": "approved"})


def test_an_unedited_draft_may_be_approved_by_whoever_drafted_it(people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    incident = IncidentFactory(status="resolved")
    pm = services.postmortem_draft(incident_id=incident.pk, actor=people["cara"])
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["cara"], reviewers=["cara"]
    )
    services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=True)
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    assert state(pm)[0] == "published"


# --- after publication ---------------------------------------------------------------------
def test_an_admin_correction_stays_published_and_says_so(pm, people):
    approved(pm, people, "cara")
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    published = Postmortem.objects.get(pk=pm.pk).revision
    with pytest.raises(PermissionDenied):
        services.action_item_create(
            incident_id=pm.incident_id, actor=people["rita"], values={"title": "Late"},
            postmortem_id=pm.pk,
        )  # fmt: skip
    write(pm, people["ada"], "Redacted a token.")
    assert state(pm) == ("published", {"cara": "approved"})
    assert (pm.revision, pm.published_revision) == (published + 1, published)
    assert said(pm)[-1] == (
        f"edited after publication by ada (summary); revision {published + 1}, "
        f"published as revision {published}"
    )
    assert PostmortemEdit.objects.filter(postmortem=pm, field="summary", editor=people["ada"])


# --- the pages and the API go through the same rules ----------------------------------------
def page_text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_page_edit_after_approval_then_publish_is_refused(client, pm, people):
    write(pm, people["rita"], "Group 3 hung.")
    approved(pm, people, "cara")
    client.force_login(people["rita"])
    version = Postmortem.objects.get(pk=pm.pk).version
    r = client.post(f"/postmortems/{pm.pk}/sections/summary/", {"text": "x", "version": version})
    assert r.status_code == 302
    client.force_login(people["cara"])
    r = client.post(f"/postmortems/{pm.pk}/publish/", follow=True)
    doc = page_text(r)
    assert "Waiting for approval of revision" in doc
    assert "edited after approval by rita" in page_text(client.get(f"/incidents/{pm.incident_id}/"))
    assert state(pm) == ("in_review", {"cara": "requested"})
    assert "another reviewer" in doc  # the rule is on the page


def test_page_sole_author_sees_why_they_cannot_approve(client, pm, people):
    write(pm, people["cara"], "All mine.")
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["cara"], reviewers=["cara"]
    )
    client.force_login(people["cara"])
    r = client.post(f"/postmortems/{pm.pk}/review/", {"decision": "approve"}, follow=True)
    assert "another reviewer has to approve" in page_text(r)
    assert state(pm) == ("in_review", {"cara": "requested"})


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.create(user=user)[1]}")
    return client


def test_api_item_attached_after_approval_needs_a_new_approval(pm, people):
    approved(pm, people, "cara")
    rita = api(people["rita"])
    body = {"incident": pm.incident_id, "postmortem": pm.pk, "title": "Alert on NVLink CRC"}
    assert rita.post("/api/v1/action-items/", body, format="json").status_code == 201
    doc = rita.get(f"/api/v1/postmortems/{pm.pk}/").json()
    assert doc["status"] == "in_review"
    assert doc["reviewers"] == [{"user": "cara", "state": "requested", "approved_revision": None}]
    assert doc["revision"] == Postmortem.objects.get(pk=pm.pk).revision
    with pytest.raises(DomainError, match="Waiting for approval"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])


def test_api_item_on_someone_elses_or_a_missing_postmortem_is_a_4xx(pm, people):
    rita = api(people["rita"])
    other = IncidentFactory(status="resolved")
    body = {"incident": other.pk, "postmortem": pm.pk, "title": "Wrong document"}
    r = rita.post("/api/v1/action-items/", body, format="json")
    assert r.status_code == 400
    assert "not the postmortem of incident" in r.json()["detail"]
    r = rita.post("/api/v1/action-items/", {**body, "postmortem": 99999}, format="json")
    assert r.status_code == 404
    assert "Postmortem #99999" in r.json()["detail"]
    approved(pm, people, "cara")
    services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])
    body = {"incident": pm.incident_id, "postmortem": pm.pk, "title": "Late"}
    r = rita.post("/api/v1/action-items/", body, format="json")
    assert r.status_code == 403
    assert "published" in r.json()["detail"]
