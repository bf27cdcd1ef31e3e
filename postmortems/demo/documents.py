"""Postmortems and action items of the demo history, written through the postmortems
services (draft, edit, accept suggestions, review, publish; items created and closed),
so each document is exactly what the console makes, with the real checks. Run at the
historical moment of each step (clock.py), outside any enclosing transaction: drafting
asks Prometheus for the charts, and no call is made inside a transaction."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from postmortems.demo.clock import clock_at
from postmortems.demo.plan import Story
from postmortems.models import ItemStatus, Postmortem
from postmortems.services import (
    action_item_accept_suggestion,
    action_item_set_status,
    action_item_update,
    postmortem_draft,
    postmortem_publish,
    postmortem_request_review,
    postmortem_review,
    postmortem_update,
)

DEMO_LANGUAGE = "en"

# What the team wrote once they knew (the drafted root cause is the runbook's generic
# one): the line each postmortem's root cause starts with, per runbook.
FOUND = {
    "ttft-spike": "Traffic doubled after a customer launch while the autoscaler was in "
    "its cooldown; the queue grew until TTFT breached the SLO.",
    "nccl-hang": "One rank of the group stopped in an all-reduce after an NVLink error; "
    "the group served nothing until it was restarted.",
    "prefix-cache-drop": "A router config push changed routing_logic to roundrobin, so "
    "sessions stopped landing on the pods holding their prefixes.",
    "retry-storm": "A pod restart returned a burst of 503s; clients retried without a "
    "budget and multiplied the load five-fold.",
    "garbage-output": "The v2 canary's tokenizer config did not match its weights; it "
    "answered HTTP 200 with malformed text.",
    "ecc-errors": "A GPU developed uncorrectable ECC errors; its group kept serving "
    "subtly wrong answers until the node was cordoned.",
    "cuda-graph-capture": "The new vLLM release crashed in CUDA graph capture on this "
    "driver; every leader restarted in a loop.",
    "long-context-kv": "A batch job sent 50k-100k-token prompts to the shared pool, "
    "which starved short requests of KV cache.",
}
LESSONS = (
    "- The runbook's first branch matched; the recommended action fixed it.\n"
    "- The second approval took longer than the fix itself: keep a commander on call."
)


def postmortems_write(story_incidents: list[tuple[Story, int]], admin, commander) -> dict:
    counts = {"postmortems": 0, "published": 0, "action items": 0}
    for story, incident_id in story_incidents:
        if not story.postmortem:
            continue
        pm, items = _document(story, incident_id, admin, commander)
        counts["postmortems"] += 1
        counts["published"] += pm.status == "published"
        counts["action items"] += len(items)
        _close(story, items, admin)
    return counts


def _document(story: Story, incident_id: int, admin, commander) -> tuple[Postmortem, list[int]]:
    """Drafted the day after, the root cause written, the runbook's first two long-term
    improvements accepted as items (owned by the two people), then reviewed and
    published as far as `story.postmortem` says."""
    day = story.resolved + timedelta(hours=16)
    with clock_at(day):
        # Drafted in English, whoever seeds: the team's words below (FOUND, LESSONS) are
        # English, and a document is written in one language (its page marks it `lang`).
        pm = postmortem_draft(incident_id=incident_id, actor=admin, language=DEMO_LANGUAGE)
    with clock_at(day + timedelta(hours=1)):
        pm = postmortem_update(
            postmortem_id=pm.pk, actor=admin, version=pm.version,
            changes={"root_cause": f"{FOUND[story.runbook]}\n\n{pm.root_cause}",
                     "lessons_learned": LESSONS},
        )  # fmt: skip
    items = []
    for i, suggestion in enumerate(pm.suggestions[:2]):
        with clock_at(day + timedelta(hours=2, minutes=i)):
            item = action_item_accept_suggestion(
                postmortem_id=pm.pk, actor=admin, source=suggestion["source"]
            )
            action_item_update(
                item_id=item.pk, actor=admin, values={"owner": commander if i == 0 else admin}
            )
        items.append(item.pk)
    if story.postmortem != "draft":
        with clock_at(day + timedelta(hours=3)):
            pm = postmortem_request_review(
                postmortem_id=pm.pk, actor=admin, reviewers=["commander"]
            )
    if story.postmortem == "published":
        with clock_at(day + timedelta(days=1, hours=1)):
            postmortem_review(postmortem_id=pm.pk, actor=commander, approve=True, note="LGTM.")
        with clock_at(day + timedelta(days=1, hours=2)):
            pm = postmortem_publish(postmortem_id=pm.pk, actor=admin)
    return pm, items


def _close(story: Story, items: list[int], admin) -> None:
    """Most items are done within weeks; the second item of every third story stays open
    (past its due date when the story is old: the overdue report has something to say)."""
    now = timezone.now()
    for n, item_id in enumerate(items):
        if n == 1 and story.started.toordinal() % 3 == 0:
            continue
        closes = story.resolved + timedelta(days=6 + 10 * n)
        if closes < now:
            with clock_at(closes):
                action_item_set_status(item_id=item_id, actor=admin, status=ItemStatus.DONE)
