"""Every HTTP call the console makes goes through here.

- `url_check(url)`: validation when a URL is saved (form, then every resolved address).
- `user_request(...)`: a URL a user supplied (notification targets, the guard's paging
  webhook, the reminder webhook): checked, pinned to the checked address, redirects
  re-checked, bounded by an overall deadline.
- `service_request(...)`: an operator's own service (Prometheus, Alertmanager, the
  identity provider): no address filter, the same overall deadline.
- `deadline(seconds)`: bounds every connection opened in the block, for clients that do
  not go through requests here (the kubernetes client, apprise).

Refusals are `OutgoingRefused`; a passed deadline is `DeadlineExceeded` (a
requests.Timeout). OUTGOING_URL_ALLOWLIST (settings) admits internal receivers.
"""

from console.outgoing.calls import service_request, user_request
from console.outgoing.connect import guarded, install
from console.outgoing.deadline import deadline
from console.outgoing.errors import DeadlineExceeded, OutgoingRefused, failure_reason
from console.outgoing.policy import check_url_form, url_check

install()

__all__ = [
    "DeadlineExceeded",
    "OutgoingRefused",
    "check_url_form",
    "deadline",
    "failure_reason",
    "guarded",
    "service_request",
    "url_check",
    "user_request",
]
