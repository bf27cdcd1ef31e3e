"""Script in every text a person can type into a postmortem comes out inert: escaped in
plain-text places, sanitised where Markdown is rendered, on the document, the print view,
the list, the action items page and the history."""

import re

import pytest

from postmortems import services
from tests.unit.postmortems.test_pages import as_user, incident, people, pm, prom  # noqa: F401

pytestmark = pytest.mark.django_db
SCRIPT = '<script>alert("pm-xss")</script>'
IMG = "<img src=x onerror=alert(1)>"
PAYLOAD = f"{SCRIPT}{IMG}[click](javascript:alert(2)) <a href=javascript:alert(3)>a</a>"


def assert_inert(body: str, where: str) -> None:
    assert SCRIPT not in body, where
    assert "<img" not in body, where
    # A real tag with a javascript: target (the same text escaped, "&lt;a href=...", is inert).
    assert not re.search(r"""<a\s[^>]*href\s*=\s*["']?\s*javascript:""", body, re.I), where


@pytest.fixture
def filled(pm, people):  # noqa: F811
    rita, cara = people["rita"], people["cara"]
    changes = {"title": f"T {PAYLOAD}"[:300]}
    changes.update({name: f"{name} {PAYLOAD}" for name in (
        "summary", "impact", "root_cause", "contributing_factors", "lessons_learned"
    )})  # fmt: skip
    services.postmortem_update(postmortem_id=pm.pk, actor=rita, version=pm.version, changes=changes)
    entry = pm.entries.first()
    services.timeline_entry_update(entry_id=entry.pk, actor=rita, text=f"edited {PAYLOAD}")
    services.timeline_entry_add(
        postmortem_id=pm.pk, actor=rita, occurred_at=entry.occurred_at, text=f"added {PAYLOAD}"
    )
    services.postmortem_comment(postmortem_id=pm.pk, actor=rita, text=f"comment {PAYLOAD}")
    services.action_item_create(
        incident_id=pm.incident_id, actor=rita, postmortem_id=pm.pk,
        values={"title": f"item {PAYLOAD}"[:300], "description": f"desc {PAYLOAD}"},
    )  # fmt: skip
    services.postmortem_request_review(postmortem_id=pm.pk, actor=rita, reviewers=["cara"])
    services.postmortem_review(
        postmortem_id=pm.pk, actor=cara, approve=False, note=f"note {PAYLOAD}"
    )
    return pm


def test_every_text_field_is_escaped_or_sanitised_everywhere(client, filled, people):  # noqa: F811
    as_user(client, people["vic"])
    pk = filled.pk
    doc = client.get(f"/postmortems/{pk}/").content.decode()
    for url in (
        f"/postmortems/{pk}/",
        f"/postmortems/{pk}/print/",
        f"/postmortems/{pk}/history/",
        "/postmortems/",
        "/postmortems/items/",
        f"/postmortems/incidents/{filled.incident_id}/panel/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_inert(response.content.decode(), url)
    # The text is there, shown as text, in every field (Markdown ones leave quotes as is).
    escaped = "&lt;script&gt;alert("
    for label in ("T ", "summary ", "root_cause ", "lessons_learned ", "edited ", "added ",
                  "comment ", "item ", "desc ", "note "):  # fmt: skip
        assert f"{label}{escaped}" in doc, label
    as_user(client, people["cara"])  # her review request names the title
    notes = client.get("/postmortems/notifications/").content.decode()
    assert_inert(notes, "notifications")
    assert f"Review requested: T {escaped}" in notes
    listing = client.get("/postmortems/").content.decode()
    assert f"T {escaped}" in listing
    items = client.get("/postmortems/items/").content.decode()
    assert f"item {escaped}" in items
    assert f"desc {escaped}" in items


def test_a_markdown_link_keeps_only_safe_targets(client, pm, people):  # noqa: F811
    services.postmortem_update(
        postmortem_id=pm.pk, actor=people["rita"], version=pm.version,
        changes={"summary": "[runbook](https://example.org/rb) and [x](javascript:alert(1))"},
    )  # fmt: skip
    as_user(client, people["vic"])
    body = client.get(f"/postmortems/{pm.pk}/").content.decode()
    assert 'href="https://example.org/rb"' in body
    assert_inert(body, "summary link")
