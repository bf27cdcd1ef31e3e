"""What the lead already has under way, shown on a related incident ("Part of #N"), so
nobody requests and approves the same fix twice. incidents does not know action runs:
ActionsConfig.ready() registers the function that lists the lead's (actions/related.py).
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class LeadWork:
    title: str  # e.g. "scale_lws llm-serving/vllm-chat"
    status: str  # as shown ("awaiting approval", "succeeded")
    url: str  # where it is (the lead's page)


LeadWorkLister = Callable[[int], list[LeadWork]]  # lead incident id -> its work

_LISTERS: list[LeadWorkLister] = []  # at most one


def lead_work_register(lister: LeadWorkLister) -> None:
    if _LISTERS and _LISTERS[0] is not lister:
        raise ImproperlyConfigured("A lead-work lister is already registered.")
    _LISTERS[:] = [lister]


def lead_work(lead_id: int) -> list[LeadWork]:
    return _LISTERS[0](lead_id) if _LISTERS else []
