"""Paging's reads shared by the pages and the API (pager/views, pager/api)."""

from __future__ import annotations

from dataclasses import dataclass

from pager.models import ContactMethod
from pager.paging.methods import EXAMPLES, address_masked


@dataclass(frozen=True)
class MethodRow:
    method: ContactMethod
    shown: str  # the address as it may be shown: scheme and host


def contact_methods_of(*, user_id: int) -> list[MethodRow]:
    """A person's methods in the order they are tried, each with its masked address."""
    rows = ContactMethod.objects.filter(user_id=user_id).order_by("position")
    return [MethodRow(m, address_masked(m.kind, m.address)) for m in rows]


def address_examples() -> dict[str, str]:
    """An example address per kind, for forms' help text."""
    return dict(EXAMPLES)
