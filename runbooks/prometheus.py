"""A small client for Prometheus' HTTP API (/api/v1/query, /api/v1/query_range).

Every call has an overall deadline (settings.PROMETHEUS_TIMEOUT_SECONDS, connect and
answer together: console/outgoing). Every failure
becomes `PrometheusUnavailable` with a message a responder can act on ("Prometheus at
http://127.0.0.1:9090 did not answer in 3 s"). Answers are kept in Django's cache for
settings.TRIAGE_CACHE_SECONDS, keyed by (query, time rounded to that step), so ten people
looking at one incident cost one query each; a failure is remembered for a couple of
seconds so a dead Prometheus is not hammered.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

import requests
from django.conf import settings
from django.core.cache import cache

from console.outgoing import service_request
from console.texts import Msg, msg
from runbooks import prometheus_texts  # noqa: F401  (registry: the ids below)

FAILURE_CACHE_SECONDS = 2
_CACHE_PREFIX = "runbooks:prom:"


class PrometheusUnavailable(Exception):
    """Prometheus could not answer; the message says why, in English words of a shape
    runbooks/prometheus_texts.py words again in the reader's language where shown."""

    def __init__(self, message: str | Msg) -> None:
        text = message.english if isinstance(message, Msg) else message
        super().__init__(text)
        self.message = text


def base_url() -> str:
    return str(settings.PROMETHEUS_URL).rstrip("/")


def _timeout() -> float:
    return float(settings.PROMETHEUS_TIMEOUT_SECONDS)


def _seconds(value: float) -> str:
    return f"{value:g}"


def _key(*parts: Any) -> str:
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()
    return _CACHE_PREFIX + digest


def _get(path: str, params: dict[str, Any]) -> Any:
    """GET an API path; the `data` member of a successful answer."""
    url = base_url()
    timeout = _timeout()
    timed_out = msg("runbooks.prometheus.timeout", url=url, seconds=_seconds(timeout))
    try:
        response = service_request("GET", url + path, params=params, deadline=timeout)
    except requests.Timeout as exc:
        raise PrometheusUnavailable(timed_out) from exc
    except requests.ConnectionError as exc:
        text = str(exc)
        if "timed out" in text.lower():
            raise PrometheusUnavailable(timed_out) from exc
        if "refused" in text.lower():
            raise PrometheusUnavailable(msg("runbooks.prometheus.refused", url=url)) from exc
        said = msg("runbooks.prometheus.unreachable", url=url, detail=text)
        raise PrometheusUnavailable(said) from exc
    except requests.RequestException as exc:
        said = msg("runbooks.prometheus.failed", url=url, detail=str(exc))
        raise PrometheusUnavailable(said) from exc
    try:
        body = response.json()
    except ValueError:
        body = None
    status = response.status_code
    if not isinstance(body, dict):
        raise PrometheusUnavailable(msg("runbooks.prometheus.not_json", url=url, status=status))
    if status != 200 or body.get("status") != "success":
        error = body.get("error") or body.get("errorType")
        said = msg(
            "runbooks.prometheus.answered",
            url=url,
            status=status,
            error=str(error) if error else msg("runbooks.prometheus.no_error"),
        )
        raise PrometheusUnavailable(said)
    return body.get("data")


def _cached(kind: str, params: dict[str, Any]) -> Any:
    url = base_url()
    failure_key = _key("failure", url)
    failure = cache.get(failure_key)
    if failure:
        raise PrometheusUnavailable(failure)
    key = _key(kind, url, sorted(params.items()))
    hit = cache.get(key)
    if hit is not None:
        if "error" in hit:
            raise PrometheusUnavailable(hit["error"])
        return hit["data"]
    try:
        data = _get(f"/api/v1/{kind}", params)
    except PrometheusUnavailable as exc:
        # A 400 is about this query; anything else is about Prometheus itself.
        if " answered 4" in exc.message:
            cache.set(key, {"error": exc.message}, settings.TRIAGE_CACHE_SECONDS)
        else:
            cache.set(failure_key, exc.message, FAILURE_CACHE_SECONDS)
        raise
    cache.set(key, {"data": data}, settings.TRIAGE_CACHE_SECONDS)
    return data


def _rounded_now() -> float:
    step = max(int(settings.TRIAGE_CACHE_SECONDS), 1)
    return float(math.floor(time.time() / step) * step)


def query(promql: str, *, at: float | None = None) -> dict[str, Any]:
    """An instant query: Prometheus' `data` ({"resultType", "result"})."""
    return _cached("query", {"query": promql, "time": at if at is not None else _rounded_now()})


def query_range(promql: str, *, start: float, end: float, step: float) -> dict[str, Any]:
    """A range query: Prometheus' `data` ({"resultType": "matrix", "result"})."""
    return _cached("query_range", {"query": promql, "start": start, "end": end, "step": step})


def single_value(data: dict[str, Any]) -> tuple[float | None, str]:
    """One number from an instant query's `data`, and a note when there was more than one
    series (the largest is taken). None when the result is empty."""
    kind = data.get("resultType")
    result = data.get("result")
    if kind == "scalar" and isinstance(result, list) and len(result) == 2:
        return _number(result[1]), ""
    if kind == "vector" and isinstance(result, list):
        read = [_number(s.get("value", [None, None])[1]) for s in result]
        values = [v for v in read if v is not None]
        if not values:
            return None, ""
        numbers = [v for v in values if not math.isnan(v)]
        if len(values) == 1:
            return values[0], ""
        if not numbers:
            return math.nan, ""
        return max(numbers), msg("runbooks.prometheus.series", count=len(values)).english
    return None, msg("runbooks.prometheus.result_type", kind=repr(kind)).english


def _number(text: Any) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None
