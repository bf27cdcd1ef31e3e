"""The webhook body parser: every field path, old and new Alertmanager shapes."""

import json
from datetime import UTC, datetime

import pytest

from incidents.ingest.parse import PayloadError, labels_fingerprint, parse_body, parse_payload
from tests.payloads import alert, notification


def body(**overrides) -> dict:
    b = notification([alert()])
    b.update(overrides)
    return b


def error_of(data) -> PayloadError:
    with pytest.raises(PayloadError) as info:
        parse_payload(data)
    return info.value


def test_current_payload_parses_every_field():
    p = parse_payload(notification([alert(pod="vllm-chat-3")], newest=True))
    assert p.group_key.startswith("{}/")
    assert p.receiver == "incident\\-console"
    assert p.group_labels == {"alertname": "VLLMHighTTFT", "lws": "vllm-chat"}
    assert p.external_url == "http://alertmanager:9093"
    a = p.alerts[0]
    assert a.status == "firing"
    assert a.labels["pod"] == "vllm-chat-3"
    assert a.annotations["summary"].startswith("TTFT")
    assert a.starts_at == datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    assert a.ends_at is None  # Go zero time means "no end known"
    assert a.generator_url.startswith("http://prometheus:9090/")
    assert a.fingerprint == labels_fingerprint(a.labels)


def test_legacy_payload_without_fingerprint_or_truncated_alerts_gets_the_same_key():
    new = parse_payload(notification([alert()]))
    old = parse_payload(notification([alert()], legacy=True))
    assert old.truncated_alerts == 0
    assert old.alerts[0].key == new.alerts[0].key


def test_fingerprint_matches_prometheus_for_known_label_sets():
    # Values Prometheus' model.LabelSet.Fingerprint() gives (FNV-1a 64).
    assert labels_fingerprint({}) == "cbf29ce484222325"
    assert labels_fingerprint({"alertname": "Fire"}) == "929dc82701ef5c04"
    # Order of keys in the JSON object must not matter.
    assert labels_fingerprint({"a": "1", "b": "2"}) == labels_fingerprint({"b": "2", "a": "1"})


def test_nanosecond_timestamps_and_offsets():
    a = alert()
    a["startsAt"] = "2026-11-29T09:00:00.123456789+01:00"
    a["endsAt"] = "2026-11-29T08:05:00Z"
    parsed = parse_payload(notification([a])).alerts[0]
    assert parsed.starts_at == datetime(2026, 11, 29, 8, 0, 0, 123456, tzinfo=UTC)
    assert parsed.ends_at == datetime(2026, 11, 29, 8, 5, tzinfo=UTC)


def test_unknown_keys_are_tolerated():
    b = body(notification_reason="repeat interval elapsed", routeLabels={"x": "y"}, extra=[1])
    b["alerts"][0]["somethingNew"] = True
    assert len(parse_payload(b).alerts) == 1


def test_missing_group_key_is_derived_from_group_labels():
    b = body()
    del b["groupKey"]
    assert 'alertname="VLLMHighTTFT"' in parse_payload(b).group_key


def test_empty_alert_list_is_valid():
    assert parse_payload(body(alerts=[])).alerts == []


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b.update(version="5"), "version"),
        (lambda b: b.pop("alerts"), "alerts"),
        (lambda b: b.update(alerts={"not": "a list"}), "alerts"),
        (lambda b: b.update(truncatedAlerts=-1), "truncatedAlerts"),
        (lambda b: b.update(truncatedAlerts="3"), "truncatedAlerts"),
        (lambda b: b.update(status="pending"), "status"),
        (lambda b: b.update(groupLabels=["x"]), "groupLabels"),
        (lambda b: b.update(commonLabels={"a": 1}), "commonLabels.a"),
        (lambda b: b.update(commonAnnotations="x"), "commonAnnotations"),
        (lambda b: b.update(groupKey=7), "groupKey"),
        (lambda b: b.update(receiver=["x"]), "receiver"),
        (lambda b: b.update(externalURL=1), "externalURL"),
        (lambda b: b["alerts"].append("nope"), "alerts[1]"),
        (lambda b: b["alerts"][0].update(status="FIRING"), "alerts[0].status"),
        (lambda b: b["alerts"][0].pop("status"), "alerts[0].status"),
        (lambda b: b["alerts"][0].pop("labels"), "alerts[0].labels"),
        (lambda b: b["alerts"][0].update(labels={}), "alerts[0].labels"),
        (lambda b: b["alerts"][0]["labels"].update(pod=3), "alerts[0].labels.pod"),
        (lambda b: b["alerts"][0].update(annotations={"x": None}), "alerts[0].annotations.x"),
        (lambda b: b["alerts"][0].pop("startsAt"), "alerts[0].startsAt"),
        (lambda b: b["alerts"][0].update(startsAt="yesterday"), "alerts[0].startsAt"),
        (lambda b: b["alerts"][0].update(startsAt="2026-11-29T08:00:00"), "alerts[0].startsAt"),
        (lambda b: b["alerts"][0].update(endsAt=12), "alerts[0].endsAt"),
        (lambda b: b["alerts"][0].update(fingerprint="not-hex!"), "alerts[0].fingerprint"),
        (lambda b: b["alerts"][0].update(generatorURL=5), "alerts[0].generatorURL"),
        (lambda b: b["alerts"][0]["labels"].update(big="x" * 10_001), "alerts[0].labels.big"),
    ],
)
def test_bad_fields_are_named(mutate, field):
    b = body()
    mutate(b)
    err = error_of(b)
    assert err.field == field
    assert str(err).startswith(field)


def test_not_json_and_not_an_object():
    with pytest.raises(PayloadError) as info:
        parse_body(b"{not json")
    assert info.value.field == "body"
    with pytest.raises(PayloadError) as info:
        parse_body(json.dumps([1, 2]).encode())
    assert "JSON object" in str(info.value)
    with pytest.raises(PayloadError):
        parse_body(b"\xff\xfe")


def test_unsafe_generator_url_is_dropped():
    a = alert()
    a["generatorURL"] = "javascript:alert(document.cookie)"
    assert parse_payload(notification([a])).alerts[0].generator_url == ""


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("1970-01-01T00:00:00Z", True),
        ("1970-01-01T01:00:00+01:00", True),  # the same instant
        ("1969-12-31T23:59:59.999999999Z", False),
        ("9998-12-31T23:59:59.999999999Z", True),
        ("9998-12-31T23:00:00-01:00", False),  # 9999-01-01 in UTC
    ],
)
def test_supported_time_range_edges(text, ok):
    b = notification([alert()])
    b["alerts"][0]["startsAt"] = text
    if ok:
        assert parse_payload(b).alerts[0].starts_at.tzinfo == UTC
    else:
        assert error_of(b).field == "alerts[0].startsAt"


def test_a_nul_deep_inside_an_ignored_key_is_named_by_its_path():
    raw = b'{"alerts": [], "routeLabels": {"a": [1, {"b": "x\\u0000"}]}}'
    with pytest.raises(PayloadError) as info:
        parse_body(raw)
    assert info.value.field == "routeLabels.a[1].b"
    assert "NUL character at position 1" in info.value.message
