"""The postmortem's and the action items' transition tables, walked through the services:
each allowed move is made by the service the table names; every other move is refused
naming it (or, for the drafting worker, left as it is).

The EXPECTED_* lists are written out here on purpose, apart from postmortems/transitions.py:
a move added to or dropped from a table fails these tests until its list agrees."""

from itertools import product

import pytest

from incidents.transitions import TransitionError
from postmortems import services
from postmortems.models import (
    ActionItem,
    DraftState,
    ItemStatus,
    Postmortem,
    PostmortemEdit,
    PostmortemStatus,
    Reviewer,
    ReviewerState,
)
from postmortems.services import drafting
from postmortems.transitions import DRAFTING, INITIAL, ITEM, STATUS, check_drafting
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

EXPECTED_STATUS = {
    ("draft", "in_review"): "postmortem_request_review",
    ("in_review", "in_review"): "postmortem_request_review",
    ("in_review", "draft"): "postmortem_review",
    ("in_review", "published"): "postmortem_publish",
}
EXPECTED_DRAFTING = {
    ("pending", "ready"): "postmortem_draft_build",
    ("pending", "failed"): "postmortem_draft_build",
    ("failed", "pending"): "postmortem_draft",
}
EXPECTED_ITEM = dict.fromkeys(
    [
        ("open", "in_progress"), ("open", "done"), ("open", "wont_do"),
        ("in_progress", "open"), ("in_progress", "done"), ("in_progress", "wont_do"),
        ("done", "open"), ("done", "in_progress"), ("done", "wont_do"),
        ("wont_do", "open"), ("wont_do", "in_progress"), ("wont_do", "done"),
        ("wont_do", "wont_do"),
    ],
    "action_item_set_status",
)  # fmt: skip
STATUSES = ["draft", "in_review", "published"]
DRAFT_STATES = ["pending", "ready", "failed"]
ITEM_STATUSES = ["open", "in_progress", "done", "wont_do"]


def pairs(states: list[str], allowed: dict) -> list[tuple[str, str]]:
    return [p for p in product(states, states) if p not in allowed]


@pytest.fixture
def pm(people, settings):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"  # nothing listens: recorded, not fatal
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.3
    incident = IncidentFactory(status="resolved", severity="SEV2", runbook="nccl-hang")
    return services.postmortem_draft(incident_id=incident.pk, actor=people["rita"])


def put(pm: Postmortem, status: str, people) -> None:
    """`pm` in `status`, with cara a reviewer who approved the current revision."""
    Postmortem.objects.filter(pk=pm.pk).update(status=status)
    Reviewer.objects.create(
        postmortem=pm, user=people["cara"], state=ReviewerState.APPROVED,
        approved_revision=Postmortem.objects.get(pk=pm.pk).revision,
    )  # fmt: skip


def call(service: str, pm: Postmortem, people):
    """Each status service as a person with the right to call it: an admin asks for the
    review (so a published postmortem gets past "only an admin can change it")."""
    if service == "postmortem_request_review":
        return services.postmortem_request_review(
            postmortem_id=pm.pk, actor=people["ada"], reviewers=["cara"]
        )
    if service == "postmortem_review":
        return services.postmortem_review(postmortem_id=pm.pk, actor=people["cara"], approve=False)
    return services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])


def history(pm: Postmortem) -> list[tuple[str, str]]:
    rows = PostmortemEdit.objects.filter(postmortem=pm, field="status").order_by("id")
    return list(rows.values_list("old", "new"))


def test_the_tables_are_the_expected_ones():
    assert {(str(a), str(b)): s for (a, b), s in STATUS.items()} == EXPECTED_STATUS
    assert {(str(a), str(b)): s for (a, b), s in DRAFTING.items()} == EXPECTED_DRAFTING
    assert {(str(a), str(b)): s for (a, b), s in ITEM.items()} == EXPECTED_ITEM
    assert {str(k): v for k, v in INITIAL.items()} == {
        "draft": "postmortem_draft",
        "pending": "postmortem_draft",
        "open": "action_item_create",
    }
    assert (PostmortemStatus.values, DraftState.values) == (STATUSES, DRAFT_STATES)
    assert ItemStatus.values == ITEM_STATUSES


def test_new_rows_start_where_the_tables_say(pm, people):
    assert (pm.status, INITIAL[pm.status]) == ("draft", "postmortem_draft")
    item = services.action_item_create(
        incident_id=pm.incident_id, actor=people["rita"], values={"title": "Alert on NCCL"}
    )
    assert (item.status, INITIAL[item.status]) == ("open", "action_item_create")


# --- the review status -----------------------------------------------------------------
@pytest.mark.parametrize(("move", "service"), sorted(STATUS.items()))
def test_each_allowed_status_move_is_made_by_the_service_the_table_names(pm, people, move, service):
    start, to = move
    put(pm, start, people)
    call(service, pm, people)
    pm.refresh_from_db()
    assert pm.status == to
    assert history(pm) == [(start, to)]
    if to == "published":
        assert (pm.published_by, pm.published_revision) == (people["cara"], pm.revision)
    if to == "in_review":
        assert pm.review_requested_at is not None


# The service that moves a postmortem to each status (the table has one per target).
SERVICE_TO = {"in_review": "postmortem_request_review", "draft": "postmortem_review",
              "published": "postmortem_publish"}  # fmt: skip


@pytest.mark.parametrize(("start", "to"), pairs(STATUSES, EXPECTED_STATUS))
def test_each_forbidden_status_move_is_refused_naming_it(pm, people, start, to):
    put(pm, start, people)
    with pytest.raises(TransitionError) as refused:
        call(SERVICE_TO[to], pm, people)
    label = {"draft": "draft", "in_review": "in review", "published": "published"}
    assert f"Cannot move postmortem #{pm.pk} from {label[start]} to {label[to]}:" in str(
        refused.value
    )
    pm.refresh_from_db()
    assert pm.status == start
    assert history(pm) == []


def test_publishing_a_draft_says_to_send_it_for_review(pm, people):
    with pytest.raises(TransitionError, match="send it for review before publishing it"):
        services.postmortem_publish(postmortem_id=pm.pk, actor=people["cara"])


# --- the drafting state ----------------------------------------------------------------
def test_pending_to_ready_by_the_build(pm):
    Postmortem.objects.filter(pk=pm.pk).update(draft_state="pending", drafted_at=None)
    built = services.postmortem_draft_build(postmortem_id=pm.pk)
    assert (built.draft_state, built.draft_error) == ("ready", "")
    assert Postmortem.objects.get(pk=pm.pk).drafted_at is not None


def test_pending_to_failed_by_the_build_with_the_reason(pm, monkeypatch):
    Postmortem.objects.filter(pk=pm.pk).update(draft_state="pending")

    def down(incident):
        raise ConnectionError("Prometheus went away")

    monkeypatch.setattr(drafting, "_snapshots", down)
    with pytest.raises(ConnectionError):
        services.postmortem_draft_build(postmortem_id=pm.pk)
    pm.refresh_from_db()
    assert pm.draft_state == "failed"
    assert pm.draft_error == "ConnectionError: Prometheus went away"


def test_failed_to_pending_by_a_person_drafting_again(
    pm, people, settings, django_capture_on_commit_callbacks
):
    Postmortem.objects.filter(pk=pm.pk).update(draft_state="failed", draft_error="boom")
    settings.POSTMORTEM_ASYNC_THRESHOLD = 0  # on the worker: the retry stops at pending
    with django_capture_on_commit_callbacks(execute=False) as enqueued:
        again = services.postmortem_draft(incident_id=pm.incident_id, actor=people["cara"])
    assert (again.pk, again.draft_state, again.draft_error) == (pm.pk, "pending", "")
    assert len(enqueued) == 1


@pytest.mark.parametrize(("start", "to"), pairs(DRAFT_STATES, EXPECTED_DRAFTING))
def test_each_forbidden_drafting_move_is_refused_naming_it(pm, start, to):
    label = {"pending": "being drafted", "ready": "ready", "failed": "drafting failed"}
    with pytest.raises(TransitionError) as refused:
        check_drafting(pm, start, to)
    assert (
        f"Cannot move the draft of postmortem #{pm.pk} from {label[start]} to {label[to]}:"
        in str(refused.value)
    )


@pytest.mark.parametrize("start", ["ready", "failed"])
def test_the_build_leaves_a_draft_that_is_not_pending_as_it_is(pm, start):
    """A redelivered task: a ready draft stays ready, a failed one waits for a person."""
    Postmortem.objects.filter(pk=pm.pk).update(draft_state=start, draft_error="was")
    lines = pm.entries.count()
    assert services.postmortem_draft_build(postmortem_id=pm.pk).draft_state == start
    pm.refresh_from_db()
    assert (pm.draft_state, pm.draft_error, pm.entries.count()) == (start, "was", lines)


@pytest.mark.parametrize("start", ["pending", "ready"])
def test_drafting_again_answers_a_draft_that_has_not_failed_as_it_is(pm, people, start):
    Postmortem.objects.filter(pk=pm.pk).update(draft_state=start)
    again = services.postmortem_draft(incident_id=pm.incident_id, actor=people["cara"])
    assert (again.pk, again.draft_state) == (pm.pk, start)


# --- action items ----------------------------------------------------------------------
@pytest.fixture
def item(pm, people) -> ActionItem:
    return services.action_item_create(
        incident_id=pm.incident_id, actor=people["rita"], values={"title": "Alert on NCCL"}
    )


def item_events(item: ActionItem) -> int:
    return item.incident.events.filter(kind="action_item").count()


@pytest.mark.parametrize(("start", "to"), sorted(EXPECTED_ITEM))
def test_each_allowed_item_move_is_made_by_set_status(item, people, start, to):
    ActionItem.objects.filter(pk=item.pk).update(status=start)
    before = item_events(item)
    moved = services.action_item_set_status(
        item_id=item.pk, actor=people["rita"], status=to, reason="covered elsewhere"
    )
    assert ITEM[(start, to)] == "action_item_set_status"
    moved.refresh_from_db()
    assert moved.status == to
    assert (moved.closed_at is not None) == (to in ("done", "wont_do"))
    assert moved.wont_do_reason == ("covered elsewhere" if to == "wont_do" else "")
    # Every move says so on the incident's timeline; a new reason for won't do is no move.
    assert item_events(item) == before + (1 if start != to else 0)


@pytest.mark.parametrize(("start", "to"), pairs(ITEM_STATUSES, EXPECTED_ITEM))
def test_each_forbidden_item_move_is_refused_naming_it(item, people, start, to):
    ActionItem.objects.filter(pk=item.pk).update(status=start)
    before = item_events(item)
    with pytest.raises(TransitionError) as refused:
        services.action_item_set_status(
            item_id=item.pk, actor=people["rita"], status=to, reason="covered elsewhere"
        )
    label = {"open": "open", "in_progress": "in progress", "done": "done", "wont_do": "won't do"}
    assert f"Cannot move action item #{item.pk} from {label[start]} to {label[to]}:" in str(
        refused.value
    )
    item.refresh_from_db()
    assert item.status == start
    assert item_events(item) == before
