"""Stage 2, parse: the body's bytes -> what its receipt keeps (ReceiptMeta) and the typed
payload (ParsedPayload: Alertmanager webhook v4, every field checked). No database access.

Tolerant of every shape Alertmanager has sent: before v0.19 alerts had no `fingerprint`
(we compute the same one Alertmanager would), before v0.21 there was no
`truncatedAlerts`, and newer releases add keys (`notification_reason`, `routeLabels`)
that we keep in the raw body but otherwise ignore. Anything we cannot use raises
PayloadError naming the field, e.g. `alerts[3].startsAt`.

Hostile bodies are refused here too, never left to fail later as a 5xx that
Alertmanager would retry forever: bytes that are not UTF-8, NUL characters and lone
surrogates (PostgreSQL cannot store either), NaN/Infinity (not JSON), numbers beyond
Python's 4300-digit limit, nesting deeper than the parser's stack, and timestamps
outside 1970..9998 (a page showing year 1 or 9999 in a zone off UTC would overflow).
"""

import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NoReturn, overload

MAX_LABEL_VALUE = 10_000
_FRACTION = re.compile(r"\.(\d+)")
_HEX = re.compile(r"^[0-9a-fA-F]{1,64}$")
# Go's zero time: Alertmanager's endsAt for a firing alert with no known end.
_GO_ZERO_YEAR = 1
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
# Only a body with one of these escapes can hold a NUL or a surrogate once parsed
# (raw control characters and non-UTF-8 bytes are refused before parsing).
_RISKY_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


class PayloadError(ValueError):
    """The body is not a usable Alertmanager webhook; `field` names where."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}" if field_path else message)
        self.field = field_path
        self.message = message


@dataclass
class ReceiptMeta:
    """The request as its receipt keeps it (incidents.models.WebhookReceipt)."""

    body: str
    body_bytes: int
    remote_addr: str | None = None
    user_agent: str = ""
    source: str = "alertmanager"
    replay_of_id: int | None = None
    body_raw: bytes | None = None  # set when the bytes are not storable text

    @classmethod
    def for_bytes(cls, raw: bytes, **kw: Any) -> "ReceiptMeta":
        """Valid UTF-8 without NUL is kept as text; anything else as the exact bytes."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            return cls(body="", body_raw=raw, body_bytes=len(raw), **kw)
        return cls(body=text, body_bytes=len(raw), **kw)


@dataclass(frozen=True)
class ParsedAlert:
    fingerprint: str
    status: str
    labels: dict[str, str]
    annotations: dict[str, str]
    starts_at: datetime
    ends_at: datetime | None
    generator_url: str

    @property
    def alertname(self) -> str:
        return self.labels.get("alertname", "")

    @property
    def key(self) -> tuple[str, datetime]:
        return (self.fingerprint, self.starts_at)


@dataclass(frozen=True)
class ParsedPayload:
    group_key: str
    status: str
    receiver: str
    group_labels: dict[str, str]
    common_labels: dict[str, str]
    common_annotations: dict[str, str]
    external_url: str
    truncated_alerts: int
    alerts: list[ParsedAlert] = field(default_factory=list)


# --- fingerprints ----------------------------------------------------------------------
_FNV_OFFSET64 = 14695981039346656037
_FNV_PRIME64 = 1099511628211
_MASK64 = (1 << 64) - 1
_SEPARATOR = 0xFF


def labels_fingerprint(labels: dict[str, str]) -> str:
    """Prometheus' LabelSet fingerprint (FNV-1a 64 over sorted name/value pairs, each
    followed by a 0xFF byte), as 16 hex digits: the value Alertmanager puts in
    `fingerprint`, so old payloads without it key the same rows as new ones."""
    h = _FNV_OFFSET64
    for name in sorted(labels):
        for part in (name, labels[name]):
            for byte in part.encode("utf-8"):
                h ^= byte
                h = (h * _FNV_PRIME64) & _MASK64
            h ^= _SEPARATOR
            h = (h * _FNV_PRIME64) & _MASK64
    return f"{h:016x}"


# --- field parsers ----------------------------------------------------------------------
@overload
def parse_rfc3339(value: object, path: str, *, zero_ok: Literal[False] = False) -> datetime: ...
@overload
def parse_rfc3339(value: object, path: str, *, zero_ok: bool) -> datetime | None: ...
def parse_rfc3339(value: object, path: str, *, zero_ok: bool = False) -> datetime | None:
    """A timestamp in the supported range, as UTC; with zero_ok, Go's zero time (year 1,
    any zone) is None."""
    if not isinstance(value, str) or not value:
        raise PayloadError(path, f"expected an RFC 3339 timestamp string, got {value!r:.80}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Go writes up to nine fractional digits; Python keeps six.
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text, count=1)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise PayloadError(path, f"not an RFC 3339 timestamp: {value!r:.80}") from None
    if parsed.tzinfo is None:
        raise PayloadError(path, f"timestamp has no time zone: {value!r:.80}")
    if parsed.year == _GO_ZERO_YEAR and zero_ok:
        return None  # Go's zero time, written in whatever zone
    try:
        utc = parsed.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 shifted past the end of the calendar
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise PayloadError(
            path,
            f"{value!r:.80} is outside the supported range "
            f"{EARLIEST:%Y-%m-%d} to {LATEST:%Y-%m-%d} (UTC)",
        )
    return utc


def _string_map(value: object, path: str, *, required: bool) -> dict[str, str]:
    if value is None:
        if required:
            raise PayloadError(path, "is required")
        return {}
    if not isinstance(value, dict):
        raise PayloadError(path, f"expected an object of strings, got {type(value).__name__}")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(v, str):
            raise PayloadError(f"{path}.{k}", f"expected a string, got {type(v).__name__}")
        if len(v) > MAX_LABEL_VALUE:
            raise PayloadError(f"{path}.{k}", f"longer than {MAX_LABEL_VALUE} characters")
        out[k] = v
    return out


def _optional_str(obj: dict[str, Any], key: str, path: str, *, max_len: int = 2000) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PayloadError(path, f"expected a string, got {type(value).__name__}")
    if len(value) > max_len:
        raise PayloadError(path, f"longer than {max_len} characters")
    return value


def _status(value: object, path: str) -> str:
    if value not in ("firing", "resolved"):
        raise PayloadError(path, f"expected 'firing' or 'resolved', got {value!r:.40}")
    return value


def _parse_alert(raw: object, i: int) -> ParsedAlert:
    path = f"alerts[{i}]"
    if not isinstance(raw, dict):
        raise PayloadError(path, f"expected an object, got {type(raw).__name__}")
    status = _status(raw.get("status"), f"{path}.status")
    labels = _string_map(raw.get("labels"), f"{path}.labels", required=True)
    if not labels:
        raise PayloadError(f"{path}.labels", "must not be empty")
    annotations = _string_map(raw.get("annotations"), f"{path}.annotations", required=False)
    starts_at = parse_rfc3339(raw.get("startsAt"), f"{path}.startsAt")
    ends_at = None
    if raw.get("endsAt") not in (None, ""):
        ends_at = parse_rfc3339(raw["endsAt"], f"{path}.endsAt", zero_ok=True)
    fingerprint = raw.get("fingerprint")
    if fingerprint in (None, ""):
        fingerprint = labels_fingerprint(labels)
    elif not isinstance(fingerprint, str) or not _HEX.match(fingerprint):
        raise PayloadError(f"{path}.fingerprint", f"expected hex digits, got {fingerprint!r:.80}")
    generator_url = _optional_str(raw, "generatorURL", f"{path}.generatorURL")
    if generator_url and not generator_url.startswith(("http://", "https://")):
        generator_url = ""  # never render a javascript: or relative link
    return ParsedAlert(
        fingerprint=fingerprint.lower(),
        status=status,
        labels=labels,
        annotations=annotations,
        starts_at=starts_at,
        ends_at=ends_at,
        generator_url=generator_url,
    )


def parse_body(body: bytes) -> ParsedPayload:
    return parse_payload(load_json(body))


def load_json(body: bytes) -> object:
    """Strict JSON (RFC 8259: UTF-8, no NaN) whose strings PostgreSQL can store."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(
            "body", f"not UTF-8: byte 0x{body[exc.start]:02x} at byte {exc.start}"
        ) from None
    nul = body.find(b"\x00")
    if nul >= 0:
        raise PayloadError("body", f"NUL character at byte {nul}; PostgreSQL cannot store it")
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_int=_int)
    except json.JSONDecodeError as exc:
        raise PayloadError("body", f"not valid JSON ({exc})") from None
    except RecursionError:
        raise PayloadError("body", "JSON nested too deeply to parse") from None
    if _RISKY_ESCAPE.search(text):
        _refuse_unstorable(data)
    return data


def _no_constant(token: str) -> NoReturn:
    raise PayloadError("body", f"{token} is not a JSON value (RFC 8259)")


def _int(digits: str) -> int:
    n = len(digits.lstrip("-"))
    if n > MAX_INT_DIGITS:
        raise PayloadError("body", f"a number with {n} digits; at most {MAX_INT_DIGITS}")
    return int(digits)


def _refuse_unstorable(data: object) -> None:
    """Find the first string (key or value) holding a NUL or a lone surrogate.
    Iterative: the document may be nested as deep as the parser allowed."""
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            _check_string(value, path or "body")
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_string(key, path or "body", " of a key")
                stack.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(value))


def _check_string(value: str, path: str, where: str = "") -> None:
    found = _UNSTORABLE.search(value)
    if found is None:
        return
    at = found.start()
    if found.group() == "\x00":
        problem = f"NUL character at position {at}"
    else:
        problem = f"lone surrogate \\u{ord(found.group()):04x} at position {at}"
    raise PayloadError(path, f"{problem}{where}; PostgreSQL cannot store it")


def parse_payload(data: object) -> ParsedPayload:
    if not isinstance(data, dict):
        raise PayloadError("body", f"expected a JSON object, got {type(data).__name__}")
    version = data.get("version")
    if version is not None and str(version) != "4":
        raise PayloadError("version", f"only webhook version 4 is supported, got {version!r:.20}")
    alerts_raw = data.get("alerts")
    if not isinstance(alerts_raw, list):
        raise PayloadError("alerts", "is required and must be a list")
    truncated = data.get("truncatedAlerts", 0) or 0
    if not isinstance(truncated, int) or isinstance(truncated, bool) or truncated < 0:
        raise PayloadError("truncatedAlerts", f"expected a count, got {truncated!r:.20}")
    group_labels = _string_map(data.get("groupLabels"), "groupLabels", required=False)
    receiver = _optional_str(data, "receiver", "receiver", max_len=500)
    group_key = _optional_str(data, "groupKey", "groupKey", max_len=1000)
    if not group_key:
        # Never seen from a real Alertmanager, but a hand-made body may omit it: derive
        # one the same shape as Alertmanager's `<route>:<group labels>`.
        pairs = ",".join(f'{k}="{v}"' for k, v in sorted(group_labels.items()))
        group_key = f"{{receiver={receiver!r}}}:{{{pairs}}}"
    return ParsedPayload(
        group_key=group_key,
        status=_status(data.get("status", "firing"), "status"),
        receiver=receiver,
        group_labels=group_labels,
        common_labels=_string_map(data.get("commonLabels"), "commonLabels", required=False),
        common_annotations=_string_map(
            data.get("commonAnnotations"), "commonAnnotations", required=False
        ),
        external_url=_optional_str(data, "externalURL", "externalURL"),
        truncated_alerts=truncated,
        alerts=[_parse_alert(a, i) for i, a in enumerate(alerts_raw)],
    )
