"""Fuzz the webhook with hostile bodies (issue 11, finding 4).

Whatever arrives, the answer is 200 or a 4xx whose JSON names the problem (Alertmanager
retries 5xx for as long as its group lives), every request leaves exactly one receipt,
and the incidents and alerts stay consistent. Bodies are valid notifications with fields
replaced by hostile values (wrong types, deep nesting, giant numbers, NaN, NUL, lone
surrogates, extreme timestamps), arbitrary JSON, and arbitrary bytes. The database
state accumulates over the examples of a test, so later bodies meet earlier incidents.
"""

import json
import os
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db.models import Count, Q
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incidents.ingest.parse import EARLIEST, LATEST
from incidents.models import OPEN_STATUSES, Alert, Incident, IncidentStatus, WebhookReceipt
from tests.payloads import BASE, alert, notification

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100")),
    deadline=None,
    derandomize=True,  # the same examples every run: a failure is reproducible
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # state is meant to build up per test
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
RAW = "\x1araw-token\x1a"  # stands for a token json.dumps cannot write (huge int, nesting)
TOP_FIELDS = [
    "version", "groupKey", "truncatedAlerts", "status", "receiver", "groupLabels",
    "commonLabels", "commonAnnotations", "externalURL", "alerts",
]  # fmt: skip
ALERT_FIELDS = [
    "status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint",
]  # fmt: skip
CALENDAR_START = datetime.min.replace(tzinfo=UTC)
CALENDAR_END = datetime.max.replace(tzinfo=UTC)
GROUPS = ['{}:{lws="a"}', '{}:{lws="b"}', '{}:{lws="c"}']

# Every code point, surrogates and NUL included (json.dumps escapes them as \uXXXX).
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), any_text,
    st.integers(min_value=10**300, max_value=10**4000),
)  # fmt: skip
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def timestamps(draw) -> str:
    """RFC 3339-ish text at and beyond the edges of the calendar, in any offset."""
    when = draw(
        st.sampled_from([CALENDAR_START, CALENDAR_END]).map(lambda d: d.replace(tzinfo=None))
        | st.datetimes()
    )
    minutes = draw(st.sampled_from([0, 60, -60, 1439, -1439]) | st.integers(-1439, 1439))
    sign = "-" if minutes < 0 else "+"
    zone = draw(st.sampled_from(["Z", f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"]))
    return when.isoformat() + zone


raw_tokens = st.one_of(
    st.integers(4290, 6000).map(lambda n: "9" * n),  # around Python's 4300-digit limit
    st.integers(1, 200_000).map(lambda d: "[" * d + "]" * d),  # nesting
    st.integers(1, 3000).map(lambda d: '{"a":' * d + "1" + "}" * d),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-0", "1E-99999"]),
)
hostile = st.one_of(json_values, timestamps(), any_text, st.just(RAW))


@st.composite
def mutated_notifications(draw) -> bytes:
    """A realistic notification with one to three fields replaced, dropped or poisoned."""
    n = draw(st.integers(1, 3))
    alerts = [
        alert(
            pod=f"pod-{draw(st.integers(0, 3))}",
            status=draw(st.sampled_from(["firing", "resolved"])),
            starts_at=BASE + timedelta(minutes=draw(st.integers(0, 3))),
            ends_at=BASE + timedelta(hours=1),
        )
        for _ in range(n)
    ]
    body = notification(alerts, group_key=draw(st.sampled_from(GROUPS)))
    raw_token = draw(raw_tokens)
    for _ in range(draw(st.integers(1, 3))):
        value = draw(hostile)
        where = draw(st.sampled_from(["top", "alert", "label", "drop"]))
        items = body["alerts"] if isinstance(body.get("alerts"), list) else []
        target = draw(st.sampled_from(items)) if where != "top" and items else body
        if target is body or not isinstance(target, dict):
            body[draw(st.sampled_from(TOP_FIELDS))] = value
        elif where == "alert":
            target[draw(st.sampled_from(ALERT_FIELDS))] = value
        elif where == "label" and isinstance(target.get("labels"), dict):
            target["labels"][draw(st.sampled_from(["pod", "severity", "alertname"]))] = value
        else:
            target.pop(draw(st.sampled_from(ALERT_FIELDS)), None)
    text = json.dumps(body)  # allow_nan: NaN and Infinity become bare tokens
    return text.replace(json.dumps(RAW), raw_token).encode()


@st.composite
def valid_extremes(draw) -> bytes:
    """Bodies that must be accepted: timestamps at the supported edges, odd but valid
    Unicode (astral, RTL, combining) in labels."""
    starts = draw(st.sampled_from([EARLIEST, LATEST - timedelta(hours=1), BASE]))
    a = alert(
        pod=draw(st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"),
                         min_size=1, max_size=30)),
        status=draw(st.sampled_from(["firing", "resolved"])),
        starts_at=starts,
        ends_at=draw(st.sampled_from([None, starts + timedelta(minutes=5), LATEST])),
    )  # fmt: skip
    if draw(st.booleans()):
        a["endsAt"] = "0001-01-01T00:00:00" + draw(st.sampled_from(["Z", "+05:00", "-05:00"]))
    return json.dumps(notification([a], group_key=draw(st.sampled_from(GROUPS)))).encode()


def check(post_webhook, raw: bytes, *, must_accept: bool = False) -> None:
    before = WebhookReceipt.objects.count()
    r = post_webhook(None, raw=raw)
    assert r.status_code == 200 or 400 <= r.status_code < 500, r.content[:500]
    assert r.status_code != 413  # every body here is below WEBHOOK_MAX_BYTES
    data = r.json()
    if must_accept:
        assert r.status_code == 200, data
    if r.status_code != 200:
        assert isinstance(data["error"], str), data
        assert data["error"], data
    assert WebhookReceipt.objects.count() == before + 1
    receipt = WebhookReceipt.objects.get(pk=data["receipt"])
    assert receipt.raw_bytes == raw  # kept exactly, text or not
    assert_consistent()


def assert_consistent() -> None:
    twice_open = (
        Incident.objects.filter(status__in=OPEN_STATUSES)
        .values("grouping_key")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    assert not twice_open.exists()
    assert not Alert.objects.filter(status="firing", incident__isnull=True).exists()
    incidents = Incident.objects.annotate(
        alerts_n=Count("alerts", distinct=True),
        firing=Count("alerts", filter=Q(alerts__status="firing"), distinct=True),
        opened=Count("events", filter=Q(events__kind="incident_opened"), distinct=True),
    )
    for inc in incidents:
        assert inc.alerts_n >= 1, inc
        assert inc.opened == 1, inc
        if inc.status in (IncidentStatus.TRIGGERED, IncidentStatus.ACKNOWLEDGED):
            assert inc.firing >= 1, inc  # all resolved would have mitigated it
    out_of_range = Q(starts_at__lt=EARLIEST) | Q(starts_at__gt=LATEST) | Q(ends_at__gt=LATEST)
    assert not Alert.objects.filter(out_of_range | Q(ends_at__lt=EARLIEST)).exists()


@FUZZ
@given(raw=mutated_notifications())
def test_mutated_notifications(post_webhook, raw):
    check(post_webhook, raw)


@FUZZ
@given(value=json_values)
def test_arbitrary_json(post_webhook, value):
    check(post_webhook, json.dumps(value).encode())


@FUZZ
@given(raw=st.binary(max_size=300) | st.binary(max_size=40).map(lambda b: b'{"alerts": "' + b))
def test_arbitrary_bytes(post_webhook, raw):
    check(post_webhook, raw)


@FUZZ
@given(raw=valid_extremes())
def test_valid_extremes_are_accepted_and_shown(post_webhook, client, make_user, raw):
    check(post_webhook, raw, must_accept=True)
    user = User.objects.filter(username="fuzz-cmd").first()
    client.force_login(user or make_user("fuzz-cmd", role="commander"))
    incident = Incident.objects.order_by("-pk").first()
    if incident is not None:
        for name in ("incidents:detail", "incidents:alerts", "incidents:timeline"):
            assert client.get(reverse(name, args=[incident.pk])).status_code == 200, name
    receipt = WebhookReceipt.objects.order_by("-pk").first()
    assert client.get(reverse("incidents:receipt-detail", args=[receipt.pk])).status_code == 200
