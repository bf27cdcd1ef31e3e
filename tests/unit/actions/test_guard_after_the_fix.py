"""What the guard sees after a fix has worked (issue 25, item 1, found at real speed by
tests/realspeed): the next failure of a live outage began minutes after a router rollback
or a cordon whose signals had been healthy since settling, and the old guard blamed it on
the fix; its undo, refused on the resolved incident, paged with the refusal's words.

The first test requested an undo before (a breach on the late TTFT rise in three checks);
the resolved case tried the undo and paged with the request service's refusal."""

from datetime import timedelta

import pytest
from django.utils import timezone

from actions.guard.models import GuardWatch
from actions.models import ActionRun
from incidents.models import IncidentStatus, TimelineEvent
from tests.unit.actions import test_guard_evidence as ev
from tests.unit.actions.test_guard_evidence import (
    answer,
    check,
    incident_with,
    router_rollback,
    states,
)

# The evidence tests' fixtures: three confirming checks, the stand-in Prometheus, a responder.
_three_checks, prom, rita = ev._three_checks, ev.prom, ev.rita

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]


def test_a_regression_that_starts_after_a_healthy_stretch_is_not_blamed(rita, prom):
    incident = incident_with("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    answer(prom, ttft=1.0, errors=0.0, hits=0.1)
    run, watch = router_rollback(incident, rita)
    check(watch, settled=False)
    # Minutes have passed: the queries' [1m] windows hold only readings after the change.
    GuardWatch.objects.filter(pk=watch.pk).update(changed_at=timezone.now() - timedelta(minutes=3))
    for _ in range(2):  # the rollback worked: hit rate back
        answer(prom, ttft=1.0, hits=0.8)
        watch = check(watch)
    for ttft in (3.0, 4.0, 5.0, 6.0):  # the next failure of the outage, minutes later
        answer(prom, ttft=ttft, hits=0.8)
        watch = check(watch)
        assert watch.verdict == "watching", watch.verdict_reason
    assert states(watch)["ttft_p99"] == "late"
    watch = check(watch, end=True)
    assert watch.verdict == "unknown"
    assert "not attributed" in watch.verdict_reason
    assert "a person decides" in watch.verdict_reason
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_a_regression_right_after_settling_still_counts(rita, prom):
    """The late rule needs a healthy stretch: bad from the first check after settling
    is the change's doing (as the scale-down test in test_guard_evidence shows too)."""
    incident = incident_with("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    answer(prom, ttft=1.0, errors=0.0, hits=0.1)
    _run, watch = router_rollback(incident, rita)
    check(watch, settled=False)
    answer(prom, ttft=1.0, hits=0.8)
    watch = check(watch)  # one healthy check is not a stretch
    for ttft in (3.0, 4.0, 5.0):
        answer(prom, ttft=ttft, hits=0.8)
        watch = check(watch)
    assert watch.verdict == "breached"


def test_a_breach_after_the_incident_was_resolved_asks_a_person(rita, prom):
    """The watch goes on after people resolve the incident (a fix can still regress), but
    the guard does not change the fleet from a closed incident on its own: it pages and
    says why, instead of an undo that the request service would refuse anyway."""
    incident = incident_with("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    answer(prom, ttft=1.0, errors=0.0, hits=0.8)
    run, watch = router_rollback(incident, rita)
    check(watch, settled=False)
    type(incident).objects.filter(pk=incident.pk).update(status=IncidentStatus.RESOLVED)
    for hits in (0.2, 0.15, 0.1):  # the router change regresses right after settling
        answer(prom, hits=hits)
        watch = check(watch)
    assert watch.verdict == "breached", watch.signals
    assert watch.outcome == "paged"
    assert not ActionRun.objects.filter(undo_of=run).exists()
    page = TimelineEvent.objects.filter(incident=incident, payload__paged=True).get()
    assert f"incident #{incident.pk} is already resolved" in page.message
    assert "reopen it and undo the change" in page.message


def test_a_slow_signal_is_not_healthy_until_its_window_has_passed(rita, prom):
    """The router regression (tests/integration/actions/test_guard_rollback.py) in small:
    a rate over [1m] falls for a minute after the change, so the readings before that are
    not a healthy stretch and the breach that follows still counts."""
    incident = incident_with("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    answer(prom, ttft=1.0, errors=0.0, hits=0.8)
    _run, watch = router_rollback(incident, rita)
    check(watch, settled=False)
    for hits in (0.7, 0.5, 0.35):  # still above 0.3: ok, but the window is still mixing
        answer(prom, hits=hits)
        watch = check(watch)
    for hits in (0.2, 0.15, 0.1):
        answer(prom, hits=hits)
        watch = check(watch)
    assert watch.verdict == "breached", watch.signals


def load(prom, rps: float) -> None:
    """The request rate the TTFT signal's `load` query reads (matched last, so the error
    and format queries, which divide by the same counter, keep their own answers)."""
    prom.answers.pop("requests_total", None)
    prom.answers["requests_total"] = rps


def test_a_latency_rise_that_comes_with_the_traffic_is_not_blamed(rita, prom):
    """Found at real speed: a gateway change for long-context-kv was undone when the next
    scenario doubled the traffic two minutes later (TTFT 10 s -> 48 s)."""
    incident = incident_with("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    answer(prom, ttft=1.0, errors=0.0, hits=0.8)
    load(prom, 10.0)
    run, watch = router_rollback(incident, rita)
    check(watch, settled=False)
    for ttft in (2.5, 3.5, 4.8, 6.0):  # the traffic doubled: TTFT follows it
        answer(prom, ttft=ttft, hits=0.8)
        load(prom, 20.0)
        watch = check(watch)
        assert watch.verdict == "watching", watch.verdict_reason
    ttft_spec = next(s for s in watch.signals if s["id"] == "ttft_p99")
    assert ttft_spec["state"] == "explained"
    assert "the demand rose 2x since the change (10 -> 20 requests/s)" in ttft_spec["message"]
    assert not ActionRun.objects.filter(undo_of=run).exists()


def test_a_latency_rise_under_the_same_traffic_still_counts(rita, prom):
    incident = incident_with("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop")
    answer(prom, ttft=1.0, errors=0.0, hits=0.8)
    load(prom, 10.0)
    _run, watch = router_rollback(incident, rita)
    check(watch, settled=False)
    for ttft in (2.5, 3.5, 4.8):
        answer(prom, ttft=ttft, hits=0.8)
        load(prom, 11.0)  # a little more traffic does not explain 4.8x
        watch = check(watch)
    assert watch.verdict == "breached", watch.signals
