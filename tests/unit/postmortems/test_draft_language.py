"""The draft is written in the language its author chooses (page form and API), stored in
draft_language, whatever language the author reads: its headings, generated sentences and
the timeline lines copied from the incident. The postmortems app's own lines on the
incident timeline are stored as parts and worded in each reader's language."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from console.texts import render, template_for
from incidents.models import TimelineEvent
from incidents.timeline_text import timeline_text
from postmortems import services
from postmortems.markdown.document import postmortem_markdown
from postmortems.models import Postmortem
from postmortems.timeline_kinds import ACTION_ITEM, POSTMORTEM
from tests.english_words import english_words
from tests.unit.postmortems.test_pages import incident, people, prom  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"
needs_catalogue = pytest.mark.skipif(
    not CATALOGUE.exists(), reason="locale/zh_Hans/LC_MESSAGES/django.mo is not compiled yet"
)
# Names the draft copies as they are: people, alerts, pods, the incident's title, the
# reasons and notes people typed (tests/unit/postmortems/test_pages.resolved_incident).
NAMES = ("rita", "cara", "ada", "vllm-chat-0", "vllm-chat-1", "KV", "x", "y", "ttft-spike")


def merged(msgid: str) -> bool:
    """Whether the compiled catalogue has this slice's new Chinese yet (the lead merges
    /tmp/po at the end)."""
    with translation.override("zh-hans"):
        return gettext(msgid) != msgid


def unmerged(parts: list) -> set[str]:
    """The ids among `parts` (nested ones too) whose Chinese is not compiled yet."""
    missing = set()
    for key, params in parts:
        template = template_for(key)
        if isinstance(template, str) and not merged(template):
            missing.add(key)
        for value in (params or {}).values():
            if isinstance(value, list):
                missing |= unmerged(value)
    return missing


def allowed(pm: Postmortem) -> list[str]:
    alertnames = set(pm.incident.alerts.values_list("alertname", flat=True))
    return [*NAMES, *pm.incident.title.split(), *alertnames]


def draft(incident, people, language=None, reading="en"):  # noqa: F811
    with translation.override(reading):
        return services.postmortem_draft(
            incident_id=incident.pk, actor=people["rita"], language=language
        )


@needs_catalogue
def test_a_draft_asked_in_chinese_is_chinese_whatever_the_author_reads(incident, people):  # noqa: F811
    pm = draft(incident, people, language="zh-hans", reading="en")
    assert (pm.draft_language, pm.language) == ("zh-hans", "zh-hans")
    assert pm.title.startswith("复盘：")
    assert "- 告警：" in pm.impact
    names = allowed(pm)
    assert english_words(pm.summary, names) == []
    entries = list(pm.entries.all())
    assert {e.source for e in entries} >= {"alert", "event"}
    events = TimelineEvent.objects.in_bulk([e.source_id for e in entries if e.source == "event"])
    waiting: set[str] = set()
    for entry in entries:
        event = events.get(entry.source_id) if entry.source == "event" else None
        if event is not None and not event.payload.get("msg"):
            # A line incidents still writes as text only: worded as the incident page
            # words it (incidents.timeline_text), nothing more.
            with translation.override("zh-hans"):
                said = timeline_text(event.kind, event.message, event.payload)
            assert entry.text.endswith(said), entry.text
            continue
        if event is not None and (missing := unmerged(event.payload["msg"])):
            waiting.update(missing)
            continue
        assert english_words(entry.text, names) == [], entry.text
    # The exported document's section headings are in the draft's language too.
    with translation.override("en"):
        exported = postmortem_markdown(pm)
    assert "## Summary" not in exported
    assert "## Timeline" not in exported
    if waiting:
        pytest.skip(f"other apps' Chinese is not in the compiled catalogue yet: {waiting}")


def test_a_draft_in_english_stays_english(incident, people):  # noqa: F811
    pm = draft(incident, people, language="en", reading="zh-hans")
    assert (pm.draft_language, pm.language) == ("en", "en")
    assert pm.title == f"Postmortem: {pm.incident.title}"
    for entry in pm.entries.all():
        assert not any("\u4e00" <= ch <= "\u9fff" for ch in entry.text), entry.text
    with translation.override("zh-hans"):
        exported = postmortem_markdown(pm)
    assert "## Summary" in exported
    assert "## Timeline" in exported


def test_the_default_is_the_authors_language(incident, people):  # noqa: F811
    pm = draft(incident, people, reading="zh-hans")
    assert pm.draft_language == "zh-hans"


def test_a_refresh_keeps_the_draft_language(incident, people):  # noqa: F811
    pm = draft(incident, people, language="zh-hans", reading="en")
    before = {e.pk: e.text for e in pm.entries.all()}
    with translation.override("en"):
        pm = services.postmortem_refresh(postmortem_id=pm.pk, actor=people["rita"])
    assert pm.draft_language == "zh-hans"
    assert {e.pk: e.text for e in pm.entries.filter(pk__in=before)} == before


def test_the_page_form_takes_the_language_and_the_page_shows_it(client, incident, people):  # noqa: F811
    client.force_login(people["rita"])
    panel = client.get(reverse("postmortems:incident-panel", args=[incident.pk]))
    assert b'name="language"' in panel.content
    response = client.post(reverse("postmortems:draft", args=[incident.pk]), {"language": "en"})
    assert response.status_code == 302
    pm = Postmortem.objects.get(incident=incident)
    assert pm.draft_language == "en"
    page = client.get(reverse("postmortems:detail", args=[pm.pk])).content.decode()
    assert 'data-testid="pm-draft-language" lang="en"' in page


def test_the_api_takes_the_language_and_refuses_an_unknown_one(client, incident, people):  # noqa: F811
    client.force_login(people["rita"])
    url = f"/api/v1/incidents/{incident.pk}/postmortem/"
    refused = client.post(url, {"language": "xx"}, content_type="application/json")
    assert refused.status_code == 400, refused.content
    assert "language" in refused.json()
    assert not Postmortem.objects.filter(incident=incident).exists()
    made = client.post(url, {"language": "zh-hans"}, content_type="application/json")
    assert made.status_code == 201, made.content
    assert made.json()["draft_language"] == "zh-hans"


def test_the_service_refuses_an_unknown_language_naming_the_field(incident, people):  # noqa: F811
    from console.errors import DomainError

    with pytest.raises(DomainError) as refused:
        draft(incident, people, language="klingon")
    assert str(refused.value).startswith("language:")


def test_postmortem_and_action_item_lines_are_stored_as_parts(incident, people):  # noqa: F811
    pm = draft(incident, people, language="en")
    item = services.action_item_create(
        incident_id=incident.pk, actor=people["rita"], values={"title": "Alert on KV cache"},
        postmortem_id=pm.pk,
    )  # fmt: skip
    services.action_item_set_status(item_id=item.pk, actor=people["rita"], status="in_progress")
    services.action_item_update(
        item_id=item.pk, actor=people["rita"], values={"priority": "P1", "owner": "cara"}
    )
    services.postmortem_request_review(
        postmortem_id=pm.pk, actor=people["rita"], reviewers=["cara"]
    )
    events = TimelineEvent.objects.filter(incident=incident, kind__in=[POSTMORTEM, ACTION_ITEM])
    assert events.count() >= 5
    for event in events:
        parts = event.payload.get("msg")
        assert parts, event.message
        assert render(parts, language="en") == event.message
    said = [e.message for e in events.order_by("pk")]
    assert f"Postmortem #{pm.pk}: drafted" in said
    assert f"Action item #{item.pk} “Alert on KV cache”: Open → In progress" in said
    assert f"Action item #{item.pk} “Alert on KV cache”: priority → P1; owner → cara" in said
    if not merged("review requested from %(names)s"):
        pytest.skip("this slice's Chinese is not in the compiled catalogue yet")
    names = [*NAMES, "Alert", "on", "KV", "cache", "P1", "P2", "process"]
    for event in events:
        zh = render(event.payload["msg"], language="zh-hans")
        assert english_words(zh, names) == [], zh
