"""Property: any interleaving of duplicated and reordered firing/resolved deliveries ends
in the same state, with no alert lost.

The expected end state is computed independently of order (an oracle):
- every alert episode ever delivered exists once; it is resolved iff any delivery said so;
- a group has exactly one incident iff any of its alerts was ever delivered firing, and
  then every alert of the group belongs to it;
- that incident is mitigated iff all its alerts are resolved, else triggered.
"""

from datetime import timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incidents.ingest.apply import alerts_ingest
from incidents.ingest.parse import ReceiptMeta, parse_payload
from incidents.models import Alert, Incident
from tests.payloads import BASE, alert, notification, resolved

pytestmark = pytest.mark.django_db

GROUPS = ('{}:{lws="vllm-chat"}', '{}:{lws="vllm-long"}')


class _Rollback(Exception):
    pass


def _alert(group: int, idx: int, status: str) -> dict:
    a = alert(pod=f"g{group}-pod{idx}", starts_at=BASE + timedelta(seconds=idx))
    return resolved(a) if status == "resolved" else a


# A delivery: one group, a non-empty set of (alert index, status).
delivery = st.tuples(
    st.integers(0, len(GROUPS) - 1),
    st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["firing", "resolved"])),
        min_size=1,
        max_size=4,
    ),
)


def apply(deliveries) -> tuple:
    """Ingest deliveries in order inside a savepoint; return the end state; roll back."""
    state = None
    try:
        with transaction.atomic():
            for group, items in deliveries:
                body = notification(
                    [_alert(group, i, s) for i, s in items], group_key=GROUPS[group]
                )
                alerts_ingest(
                    payload=parse_payload(body), meta=ReceiptMeta(body="{}", body_bytes=2)
                )
            state = end_state()
            raise _Rollback
    except _Rollback:
        pass
    return state


def end_state() -> tuple:
    incidents = {i.pk: (i.grouping_key, i.status) for i in Incident.objects.all()}
    alerts = sorted(
        (a.labels["pod"], a.status, a.ends_at, incidents.get(a.incident_id, (None,))[0])
        for a in Alert.objects.all()
    )
    return sorted(incidents.values()), alerts


def oracle(deliveries) -> tuple:
    seen: dict[tuple[int, int], str] = {}
    fired_groups = set()
    for group, items in deliveries:
        for idx, status in items:
            key = (group, idx)
            if status == "resolved" or key not in seen:
                seen[key] = status if seen.get(key) != "resolved" else "resolved"
            if status == "firing":
                fired_groups.add(group)
    incidents = []
    for g in sorted(fired_groups):
        statuses = [s for (grp, _), s in seen.items() if grp == g]
        incidents.append((GROUPS[g], "mitigated" if "firing" not in statuses else "triggered"))
    alerts = []
    for (g, idx), status in seen.items():
        ends = (
            (BASE + timedelta(seconds=idx) + timedelta(minutes=5)) if status == "resolved" else None
        )
        alerts.append((f"g{g}-pod{idx}", status, ends, GROUPS[g] if g in fired_groups else None))
    return sorted(incidents), sorted(alerts)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    deliveries=st.lists(delivery, min_size=1, max_size=8),
    data=st.data(),
)
def test_any_order_with_duplicates_converges(deliveries, data):
    # Duplicate some deliveries (Alertmanager re-sends) and shuffle (retries reorder).
    dupes = data.draw(st.lists(st.sampled_from(deliveries), max_size=4), label="dupes")
    shuffled = data.draw(st.permutations(deliveries + dupes), label="order")
    expected = oracle(deliveries)
    assert apply(deliveries) == expected
    assert apply(shuffled) == expected
