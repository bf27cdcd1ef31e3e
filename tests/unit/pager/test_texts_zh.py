"""The pager's texts are stored as ids and parameters (payload["msg"]) and read in the
reader's language: the escalation's lines, the pages' outcomes, the one-tap link, the
API's generated fields. Lines written before that (payload["text"], short keys) are
still worded."""

from __future__ import annotations

import pytest
from django.utils import translation

from console import roles
from console.texts import english, render
from incidents.models import TimelineEvent
from incidents.services.lifecycle import incident_acknowledge
from incidents.timeline_text import timeline_text
from pager import timeline_kinds
from pager.escalation import services
from pager.models import ContactKind, StepAction
from pager.paging.methods import contact_test_words
from pager.paging.services import page_send
from pager.texts import REMOVED_ERROR, delivery_error
from tests.english_words import english_words
from tests.pager_receivers import contact, ntfy_url, page_for
from tests.unit.pager.test_api import api_as, incident_for, make_team, people  # noqa: F401
from tests.unit.pager.test_escalation_engine import (
    MIN,
    T0,
    default_team,
    opened,
    person,
    policy_with,
)

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.pager_receivers"]
NAMES = ("alice", "bob", "SRE", "primary")


def zh(event: TimelineEvent) -> str:
    with translation.override("zh-hans"):
        return timeline_text(event.kind, event.message, event.payload)


def pager_lines(incident) -> list[TimelineEvent]:
    return list(TimelineEvent.objects.filter(incident=incident, source="pager").order_by("pk"))


def test_the_escalation_writes_its_lines_as_parts_worded_in_chinese():
    alice, bob = person("alice", "ntfy"), person("bob", "email")
    policy_with(
        {"action": StepAction.PAGE_USER, "user": alice, "wait_minutes": 5},
        {"action": StepAction.PAGE_USER, "user": bob},
        team=default_team(),
    )
    incident = opened()
    services.escalation_start(incident_id=incident.pk, now=T0)
    incident_acknowledge(incident_id=incident.pk, actor=alice)
    services.escalation_on_ack(incident_id=incident.pk, actor_id=alice.pk, now=T0 + MIN)

    lines = pager_lines(incident)
    assert [e.payload["what"] for e in lines] == ["started", "paged", "wait", "acknowledged"]
    for event in lines:
        assert "text" not in event.payload  # only rows written before keep the old shape
        assert all(key.startswith("pager.") for key, _params in event.payload["msg"])
        assert english(event.payload["msg"]) == event.message
        shown = zh(event)
        assert shown != event.message
        assert english_words(shown, NAMES) == [], shown


def test_a_line_written_before_the_core_is_still_worded():
    incident = opened()
    old = TimelineEvent.objects.create(
        incident=incident,
        kind=timeline_kinds.ESCALATION,
        occurred_at=T0,
        source="pager",
        message="Escalation stopped: acknowledged by alice.",
        payload={"what": "acknowledged", "text": [["acknowledged", {"user": "alice"}]]},
    )
    shown = zh(old)
    assert shown != old.message
    assert "alice" in shown
    assert english_words(shown, NAMES) == [], shown
    # An old line of a shape nobody knows any more is shown as stored.
    old.payload = {"text": [["gone_key", {}]]}
    assert zh(old) == old.message


def test_a_page_delivered_after_a_failure_says_so_in_chinese(make_user, ntfy, smtp):
    alice = make_user("alice")
    contact(alice, ContactKind.NTFY, ntfy_url(ntfy, "alice-pages"))
    contact(alice, ContactKind.EMAIL, "alice@example.com")
    ntfy.answer(500, 500)
    incident = incident_for("nobody-owns-it")
    page_send(page_id=page_for(alice, incident).pk)

    [line] = incident.events.filter(kind="page")
    assert line.message == "Paged alice by email after ntfy failed."
    assert [key for key, _ in line.payload["msg"]] == ["pager.page.delivered_after"]
    shown = zh(line)
    assert english_words(shown, ("alice",)) == [], shown


def test_the_pagers_own_errors_and_test_outcomes_are_worded():
    with translation.override("zh-hans"):
        removed = str(delivery_error(REMOVED_ERROR))
    assert english_words(removed) == [], removed
    assert delivery_error("ntfy answered HTTP 500") == "ntfy answered HTTP 500"  # the service's
    stored = "Sent through voice call (twilio://…) at 2026-01-01 10:00 UTC; check that it arrived."
    found = contact_test_words(stored)
    assert found is not None
    assert found.english == stored
    shown = render(found.stored, language="zh-hans")
    assert english_words(shown) == [], shown
    assert contact_test_words("something else") is None


def test_the_incident_oncall_api_words_why_and_gives_the_ids(api_as, people):  # noqa: F811
    make_team("inference", people)
    incident = incident_for()
    services.escalation_start(incident_id=incident.pk)
    client = api_as(roles.VIEWER)
    body = client.get(f"/api/v1/pager/incidents/{incident.pk}/oncall/").json()
    assert "team=inference" in body["why"]
    assert body["why_i18n"] == [{"id": "pager.route.named", "params": {"slug": "inference"}}]
    assert body["escalation"]["stop_reason_i18n"] is None  # still paging: no reason
    zh_body = client.get(f"/api/v1/pager/incidents/{incident.pk}/oncall/?lang=zh-hans").json()
    assert zh_body["why"] != body["why"]
    assert english_words(zh_body["why"], ("inference",)) == [], zh_body["why"]
