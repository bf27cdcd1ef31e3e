"""Paging's writes: sending pages (pages.py) and a person's contact methods (contacts.py)."""

from pager.paging.services.contacts import (
    contact_method_create,
    contact_method_delete,
    contact_method_move,
    contact_method_test,
    contact_method_update,
)
from pager.paging.services.pages import page_send, pages_requeue

__all__ = [
    "contact_method_create",
    "contact_method_delete",
    "contact_method_move",
    "contact_method_test",
    "contact_method_update",
    "page_send",
    "pages_requeue",
]
