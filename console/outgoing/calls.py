"""HTTP calls with requests: `user_request` for URLs a user supplied (guarded, pinned,
redirects re-checked), `service_request` for the operator's own services (Prometheus,
Alertmanager, the identity provider: private networks by design, so no address filter).
Both are bounded by an overall deadline and read the whole answer inside it."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import requests

from console.outgoing.connect import guarded
from console.outgoing.deadline import deadline as bounded
from console.outgoing.policy import check_url_form

MAX_REDIRECTS = 5
# What is kept of a user-supplied URL's answer (callers read its status, not its body);
# the rest is not read. An operator's service answers in full (a range query can be big).
MAX_ANSWER_BYTES = 1024 * 1024


class _Session(requests.Session):
    """Checks each redirect target's form (scheme, user info) before following it; its
    address is checked when its connection is made."""

    follow = False

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        target = super().get_redirect_target(resp)
        if target and self.follow:
            check_url_form(urljoin(resp.url, target))
        return target


def user_request(
    method: str,
    url: str,
    *,
    deadline: float,
    allow_redirects: bool = False,
    max_bytes: int = MAX_ANSWER_BYTES,
    **kwargs: Any,
) -> requests.Response:
    """Call a URL a user supplied. Raises OutgoingRefused (the URL, a redirect or an
    address it resolves to is not allowed), DeadlineExceeded, or requests' errors. At
    most `max_bytes` of the answer are read (a caller that expects more says so)."""
    check_url_form(url)
    with guarded():
        # No environment proxies: the guard would check the proxy, not the receiver.
        return _send(
            method,
            url,
            deadline,
            allow_redirects=allow_redirects,
            trust_env=False,
            max_bytes=max_bytes,
            **kwargs,
        )


def service_request(method: str, url: str, *, deadline: float, **kwargs: Any) -> requests.Response:
    """Call an operator-configured service. Raises DeadlineExceeded or requests' errors."""
    return _send(method, url, deadline, **kwargs)


def _send(
    method: str,
    url: str,
    seconds: float,
    *,
    allow_redirects: bool = True,
    trust_env: bool = True,
    max_bytes: int | None = None,
    **kwargs: Any,
) -> requests.Response:
    if kwargs.pop("stream", False):
        raise TypeError("the answer is read within the deadline; stream=True is not supported")
    kwargs.setdefault("timeout", seconds)  # per read too, as requests understands it
    with bounded(seconds), _Session() as session:
        session.trust_env = trust_env
        session.max_redirects = MAX_REDIRECTS
        session.follow = allow_redirects
        response = session.request(
            method, url, allow_redirects=allow_redirects, stream=True, **kwargs
        )
        _read(response, max_bytes)
    return response


def _read(response: requests.Response, max_bytes: int | None) -> None:
    """The body (at most `max_bytes` of it), read now: inside the deadline."""
    chunks, size = [], 0
    for chunk in response.iter_content(64 * 1024):
        chunks.append(chunk)
        size += len(chunk)
        if max_bytes is not None and size >= max_bytes:
            break
    response._content = b"".join(chunks)[:max_bytes]
    response._content_consumed = True  # type: ignore[attr-defined]  # requests keeps it untyped
    response.close()
