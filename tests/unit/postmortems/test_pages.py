"""Postmortem console pages: who may see and do what, per role, on every page and form;
the document's sections, drafting states, stale edits, Markdown export, print view and a
query-count bound. Incidents come in through the webhook; postmortems through services."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console import roles
from incidents import services as incident_services
from incidents.models import Incident
from postmortems import services
from postmortems.models import SECTION_ORDER, Postmortem, PostmortemTimelineEntry
from tests.payloads import alert, notification
from tests.prometheus_standin import StandInPrometheus

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
HEADINGS = {
    "summary": "Summary",
    "impact": "Impact",
    "timeline": "Timeline",
    "root_cause": "Root cause",
    "contributing_factors": "Contributing factors",
    "action_items": "Action items",
    "lessons_learned": "Lessons learned",
}


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.fixture
def prom(settings):
    fake = StandInPrometheus(default=1.0)
    settings.PROMETHEUS_URL = fake.url
    settings.PROMETHEUS_TIMEOUT_SECONDS = 1
    yield fake
    fake.close()


@pytest.fixture
def people(make_user):
    return {
        "vic": make_user("vic", roles.VIEWER),
        "rita": make_user("rita", roles.RESPONDER, first_name="Rita", last_name="Ramos"),
        "cara": make_user("cara", roles.COMMANDER),
        "ada": make_user("ada", roles.ADMIN),
    }


def resolved_incident(post_webhook, people, *, key: str = "pm-pages") -> Incident:
    """ttft-spike on two pods, acknowledged, mitigated and resolved in the console."""
    response = post_webhook(
        notification([alert(pod="vllm-chat-0"), alert(pod="vllm-chat-1")], group_key=key)
    )
    assert response.status_code == 200, response.content
    incident = Incident.objects.get(pk=response.json()["incidents"][0])
    incident_services.incident_acknowledge(incident_id=incident.pk, actor=people["rita"])
    incident_services.incident_note_add(incident_id=incident.pk, actor=people["rita"], text="KV")
    # Its alerts still fire: each move is confirmed, with a reason.
    incident_services.incident_mitigate(
        incident_id=incident.pk, actor=people["rita"], reason="x", confirm=True
    )
    incident_services.incident_resolve(
        confirm_no_commander=True,
        incident_id=incident.pk,
        actor=people["cara"],
        reason="y",
        confirm=True,
    )
    return incident


@pytest.fixture
def incident(post_webhook, people, prom):
    return resolved_incident(post_webhook, people)


@pytest.fixture
def pm(incident, people):
    return services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])


def as_user(client, user):
    client.force_login(user)
    return client


def pages(pm) -> list[str]:
    return [
        "/postmortems/",
        "/postmortems/?status=draft",
        f"/postmortems/{pm.pk}/",
        f"/postmortems/{pm.pk}/history/",
        f"/postmortems/{pm.pk}/print/",
        f"/postmortems/{pm.pk}/export.md",
        f"/postmortems/incidents/{pm.incident_id}/panel/",
        "/postmortems/items/",
        "/postmortems/notifications/",
    ]


def posts(pm) -> list[tuple[str, dict]]:
    entry = pm.entries.first()
    item = services.action_item_create(
        incident_id=pm.incident_id,
        actor=pm.created_by,
        values={"title": "Alert on queue depth"},
        postmortem_id=pm.pk,
    )
    return [
        (f"/postmortems/incidents/{pm.incident_id}/draft/", {}),
        (f"/postmortems/{pm.pk}/sections/summary/", {"text": "x", "version": pm.version}),
        (f"/postmortems/timeline/{entry.pk}/", {"included": "0"}),
        (f"/postmortems/{pm.pk}/timeline/", {"occurred_at": "2026-11-29 08:05", "text": "x"}),
        (f"/postmortems/{pm.pk}/suggestions/accept/", {"source": pm.suggestions[0]["source"]}),
        (f"/postmortems/{pm.pk}/items/", {"title": "x"}),
        (f"/postmortems/items/{item.pk}/", {"title": "y", "status": "open"}),
        (f"/postmortems/{pm.pk}/review/request/", {"reviewers": "cara"}),
        (f"/postmortems/{pm.pk}/comments/", {"text": "x"}),
        (f"/postmortems/{pm.pk}/review/", {"decision": "approve"}),
        (f"/postmortems/{pm.pk}/publish/", {}),
    ]


# --- access -------------------------------------------------------------------------------
def test_anonymous_is_sent_to_log_in_everywhere(client, pm):
    for url in pages(pm):
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/login/" in response["Location"], url
    for url, data in posts(pm):
        response = client.post(url, data)
        assert response.status_code == 302, url
        assert "/login/" in response["Location"], url


def test_viewer_reads_every_page_and_every_post_is_refused(client, pm, people):
    as_user(client, people["vic"])
    for url in pages(pm):
        assert client.get(url).status_code == 200, url
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert "Edit summary" not in doc
    assert "Accept" not in doc
    assert "Request review" not in doc
    assert "editing needs the responder role" in doc
    version = pm.version
    for url, data in posts(pm):
        response = client.post(url, data)
        assert response.status_code == 403, url
        assert "Your role does not allow" in text(response) or "not a reviewer" in text(response)
    pm.refresh_from_db()
    assert pm.version == version
    assert pm.status == "draft"


def test_responder_drafts_from_the_incident_panel(client, incident, people):
    as_user(client, people["rita"])
    panel = text(client.get(f"/postmortems/incidents/{incident.pk}/panel/"))
    assert "Draft postmortem" in panel
    response = client.post(f"/postmortems/incidents/{incident.pk}/draft/")
    pm = Postmortem.objects.get(incident=incident)
    assert response.status_code == 302
    assert response["Location"] == f"/postmortems/{pm.pk}/"
    panel = text(client.get(f"/postmortems/incidents/{incident.pk}/panel/"))
    assert f'href="/postmortems/{pm.pk}/"' in panel
    assert "Draft" in panel
    incident_page = text(client.get(f"/incidents/{incident.pk}/"))
    assert f'hx-get="/postmortems/incidents/{incident.pk}/panel/"' in incident_page


def test_panel_says_when_drafting_is_possible(client, post_webhook, people, prom):
    response = post_webhook(notification([alert()], group_key="open-one"))
    incident_id = response.json()["incidents"][0]
    as_user(client, people["rita"])
    panel = text(client.get(f"/postmortems/incidents/{incident_id}/panel/"))
    assert "once the incident is mitigated or resolved" in panel
    assert "<button" not in panel
    refused = client.post(f"/postmortems/incidents/{incident_id}/draft/")
    assert refused.status_code == 302  # back to the incident, with the reason as a message
    assert "draft the postmortem once it is mitigated" in text(client.get(refused["Location"]))
    assert client.get("/postmortems/incidents/999999/panel/").status_code == 404


def test_responder_edits_but_cannot_publish_commander_publishes_admin_corrects(client, pm, people):
    as_user(client, people["rita"])
    r = client.post(f"/postmortems/{pm.pk}/sections/summary/", {"text": "**Queue**", "version": 1})
    assert r.status_code == 302
    assert r["Location"].endswith("#section-summary")
    assert "<strong>Queue</strong>" in text(client.get(f"/postmortems/{pm.pk}/"))
    source = pm.suggestions[0]["source"]
    client.post(f"/postmortems/{pm.pk}/suggestions/accept/", {"source": source})
    client.post(f"/postmortems/{pm.pk}/suggestions/accept/", {"source": source})  # once only
    assert pm.action_items.filter(source=source).count() == 1
    assert (
        client.post(f"/postmortems/{pm.pk}/review/request/", {"reviewers": "cara"}).status_code
        == 302
    )
    assert client.post(f"/postmortems/{pm.pk}/publish/").status_code == 403

    as_user(client, people["cara"])
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert "Approve" in doc
    assert "Request changes" in doc
    assert "disabled" in doc
    client.post(f"/postmortems/{pm.pk}/review/", {"decision": "approve", "note": "Good."})
    assert client.post(f"/postmortems/{pm.pk}/publish/").status_code == 302
    pm.refresh_from_db()
    assert pm.status == "published"

    as_user(client, people["rita"])
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert "read-only" in doc
    assert "Edit summary" not in doc
    assert "Leave out" not in doc
    v = pm.version
    assert (
        client.post(
            f"/postmortems/{pm.pk}/sections/summary/", {"text": "late", "version": v}
        ).status_code
        == 403
    )

    as_user(client, people["ada"])
    assert "Edit summary" in text(client.get(f"/postmortems/{pm.pk}/"))
    client.post(f"/postmortems/{pm.pk}/sections/summary/", {"text": "Corrected.", "version": v})
    pm.refresh_from_db()
    assert pm.summary == "Corrected."
    assert pm.status == "published"
    history = text(client.get(f"/postmortems/{pm.pk}/history/"))
    assert "Corrected." in history
    assert "ada" in history
    assert "Published" in history  # the status, worded


def test_a_stale_version_is_refused_and_the_typed_text_kept(client, pm, people):
    as_user(client, people["rita"])
    first = client.post(f"/postmortems/{pm.pk}/sections/summary/", {"text": "Mine", "version": 1})
    assert first.status_code == 302
    as_user(client, people["cara"])
    stale = client.post(
        f"/postmortems/{pm.pk}/sections/summary/", {"text": "Theirs, typed\nslowly", "version": 1}
    )
    assert stale.status_code == 409
    body = stale.content.decode()
    assert "Someone else saved this postmortem" in body
    assert "Theirs, typed\nslowly</textarea>" in body
    assert 'data-testid="section-error"' in body
    pm.refresh_from_db()
    assert pm.summary == "Mine"
    garbage = client.post(f"/postmortems/{pm.pk}/sections/summary/", {"text": "x", "version": "v"})
    assert garbage.status_code == 409


def test_document_shows_sections_in_order_with_impact_timeline_and_stored_charts(
    client, pm, people, prom
):
    as_user(client, people["vic"])
    calls = sum(prom.paths.values())
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert sum(prom.paths.values()) == calls  # the stored snapshot, not Prometheus now
    positions = [doc.index(f'id="section-{name}"') for name in SECTION_ORDER]
    assert positions == sorted(positions)
    assert "Time to acknowledge" in doc
    assert "Time to resolve" in doc
    assert 'data-testid="snapshot"' in doc
    assert "stored " in doc
    assert 'data-chart="pm-chart-' in doc
    assert "vendor/plotly.min.js" in doc
    assert 'aria-current="page">Postmortems</a>' in doc
    assert 'aria-current="page">Incidents</a>' not in doc
    moments = ["Impact started", "Detected", "Acknowledged", "Mitigated", "Resolved"]
    at = [doc.index(f"<td>{m}") for m in moments]
    assert at == sorted(at)  # in the order they happen, whatever jsonb does with the keys
    assert doc.count('data-testid="timeline-entry"') == pm.entries.count()
    assert "Scale earlier on queue depth" in doc  # a runbook suggestion


def test_blameless_wording_is_warned_next_to_the_section_not_blocked(client, pm, people):
    as_user(client, people["rita"])
    client.post(
        f"/postmortems/{pm.pk}/sections/root_cause/",
        {"text": "Rita Ramos forgot to scale; human error.", "version": pm.version},
    )
    pm.refresh_from_db()
    assert pm.root_cause.startswith("Rita Ramos forgot")  # saved anyway
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    section = doc[doc.index('id="section-root_cause"') : doc.index('id="section-contributing')]
    assert 'data-testid="blameless-warnings"' in section
    assert "Rita Ramos forgot" in section
    assert "human error" in section
    assert "Try:" in section


def test_timeline_lines_toggle_reword_and_add(client, pm, people):
    as_user(client, people["rita"])
    entry = pm.entries.first()
    r = client.post(f"/postmortems/timeline/{entry.pk}/", {"included": "0"}, **HTMX)
    assert r.status_code == 200
    assert f'id="entry-{entry.pk}"' in text(r)
    assert "Left out" in text(r)
    assert "Include" in text(r)
    r = client.post(f"/postmortems/timeline/{entry.pk}/", {"text": "Paged the on-call."}, **HTMX)
    assert "Paged the on-call." in text(r)
    assert "edited" in text(r)
    entry.refresh_from_db()
    assert (entry.included, entry.text, entry.occurred_at) == (
        False,
        "Paged the on-call.",
        PostmortemTimelineEntry.objects.get(pk=entry.pk).occurred_at,
    )
    r = client.post(f"/postmortems/{pm.pk}/timeline/", {"occurred_at": "tomorrow", "text": "x"})
    assert "use YYYY-MM-DD HH:MM (UTC)" in text(client.get(r["Location"]))
    client.post(
        f"/postmortems/{pm.pk}/timeline/", {"occurred_at": "2026-11-29 08:03", "text": "Bridge"}
    )
    added = pm.entries.get(source="manual")
    assert added.text == "Bridge"
    assert added.occurred_at.strftime("%H:%M %Z") == "08:03 UTC"


def test_being_drafted_polls_until_ready_and_failed_says_why(client, pm, people):
    as_user(client, people["vic"])
    Postmortem.objects.filter(pk=pm.pk).update(draft_state="pending")
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert "Being drafted" in doc
    assert f'hx-get="/postmortems/{pm.pk}/drafting/"' in doc
    assert "every 2s" in doc
    assert 'id="section-summary"' not in doc
    poll = client.get(f"/postmortems/{pm.pk}/drafting/", **HTMX)
    assert poll.status_code == 200
    assert "Being drafted" in text(poll)
    Postmortem.objects.filter(pk=pm.pk).update(draft_state="ready")
    assert client.get(f"/postmortems/{pm.pk}/drafting/", **HTMX)["HX-Refresh"] == "true"
    Postmortem.objects.filter(pk=pm.pk).update(
        draft_state="failed", draft_error="ConnectionError: Prometheus <down>"
    )
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert "Drafting failed" in doc
    assert "ConnectionError: Prometheus &lt;down&gt;" in doc
    assert 'data-testid="redraft"' not in doc  # a viewer cannot draft
    as_user(client, people["rita"])
    assert 'data-testid="redraft"' in text(client.get(f"/postmortems/{pm.pk}/"))
    client.post(f"/postmortems/incidents/{pm.incident_id}/draft/")
    pm.refresh_from_db()
    assert pm.draft_state == "ready"  # drafted again


def test_export_markdown_is_a_download_with_sections_in_order(client, pm, people):
    as_user(client, people["vic"])
    response = client.get(f"/postmortems/{pm.pk}/export.md")
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="postmortem-{pm.pk}.md"'
    body = response.content.decode()
    assert body.startswith(f"# {pm.title}")
    positions = [body.index(f"\n## {HEADINGS[name]}\n") for name in SECTION_ORDER]
    assert positions == sorted(positions)


def test_print_page_has_no_navigation_and_a_print_stylesheet(client, pm, people):
    as_user(client, people["vic"])
    body = text(client.get(f"/postmortems/{pm.pk}/print/"))
    assert 'class="mainnav"' not in body
    assert "Log out" not in body
    assert "css/postmortems.css" in body
    assert 'class="pm-print"' in body
    positions = [body.index(f'id="section-{name}"') for name in SECTION_ORDER]
    assert positions == sorted(positions)


def test_document_query_count_does_not_grow_with_entries_and_items(client, pm, people):
    as_user(client, people["rita"])
    url = f"/postmortems/{pm.pk}/"
    client.get(url)  # warm caches (catalogue, content types)

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    def grow(n: int) -> None:
        at = pm.incident.triggered_at
        for i in range(n):
            services.timeline_entry_add(
                postmortem_id=pm.pk, actor=people["rita"], occurred_at=at + timedelta(seconds=i),
                text=f"line {i}",
            )  # fmt: skip
            services.action_item_create(
                incident_id=pm.incident_id, actor=people["rita"], postmortem_id=pm.pk,
                values={"title": f"item {i}", "owner": "cara"},
            )  # fmt: skip
        services.postmortem_comment(postmortem_id=pm.pk, actor=people["rita"], text="c")

    grow(2)
    small = count()
    grow(20)
    assert count() == small
    assert small <= 20


def test_a_long_timeline_shows_its_first_lines_and_offers_the_rest(client, pm, people, monkeypatch):
    monkeypatch.setattr("postmortems.views.documents.TIMELINE_SHOWN", 2)
    as_user(client, people["vic"])
    total = pm.entries.count()
    assert total > 2
    doc = text(client.get(f"/postmortems/{pm.pk}/"))
    assert doc.count('data-testid="timeline-entry"') == 2
    assert f"Showing the first 2 of {total} lines." in doc
    everything = text(client.get(f"/postmortems/{pm.pk}/?timeline=all"))
    assert everything.count('data-testid="timeline-entry"') == total
    assert 'data-testid="timeline-cut"' not in everything
    printed = text(client.get(f"/postmortems/{pm.pk}/print/"))
    assert printed.count('<tr><td class="nowrap">') == total
