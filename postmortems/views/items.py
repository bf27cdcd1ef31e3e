"""Action items (accept a suggestion, add one, edit a row inline; the list across
incidents) and the user's notifications."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from console.bounds import parse_id
from console.errors import DomainError
from console.http import AuthedRequest
from console.web import FLASH_CLEARED, console_view, perform, refused
from postmortems import selectors, services
from postmortems.models import (
    ActionItem,
    ItemCategory,
    ItemStatus,
    Postmortem,
    Priority,
)
from postmortems.permissions import MANAGE, VIEW_ITEMS
from postmortems.views.common import active_users

ITEMS_PER_PAGE = 50
READ_SHOWN = 20
ITEM_FIELDS = ("title", "description", "owner", "due_date", "priority", "category", "external_url")
STATUS_FILTERS = (
    ("", gettext_lazy("All")),
    ("open", gettext_lazy("Open (open + in progress)")),
    *ItemStatus.choices,
)


def _choices() -> dict:
    return {
        "priorities": Priority.choices,
        "categories": ItemCategory.choices,
        "item_statuses": ItemStatus.choices,
    }


def _doc(pk: int, anchor: str = "section-action_items") -> str:
    return reverse("postmortems:detail", args=[pk]) + f"#{anchor}"


@require_POST
@console_view()
def suggestion_accept(request: AuthedRequest, pk: int):
    source = request.POST.get("source", "")

    def call():
        services.action_item_accept_suggestion(postmortem_id=pk, actor=request.user, source=source)

    return perform(request, call, done=_("Action item added."), back=_doc(pk))


@require_POST
@console_view()
def item_add(request: AuthedRequest, pk: int):
    """A new item on this postmortem's incident (fields left empty take the defaults)."""
    values = {k: request.POST[k] for k in ITEM_FIELDS if request.POST.get(k)}
    incident_id = Postmortem.objects.filter(pk=pk).values_list("incident_id", flat=True).first()
    if incident_id is None:
        raise Http404(f"Postmortem #{pk} does not exist.")

    def call():
        services.action_item_create(
            incident_id=incident_id, actor=request.user, values=values, postmortem_id=pk
        )

    return perform(request, call, done=_("Action item added."), back=_doc(pk))


def _row(request: AuthedRequest, item_id: int, *, show_incident: bool):
    item = selectors.action_item_list().filter(pk=item_id).first()
    context = {
        "item": item,
        "users": active_users(),
        "can_manage": request.user.has_perm(MANAGE),
        "show_incident": show_incident,
        "today": timezone.localdate(),
        **_choices(),
    }
    return render(request, "postmortems/_item_row.html", context)


@require_POST
@console_view()
def item_save(request: AuthedRequest, item_id: int):
    """The inline row form: fields and status in one save (all or nothing)."""
    item = ActionItem.objects.filter(pk=item_id).only("id", "postmortem_id", "status").first()
    if item is None:
        raise Http404(f"Action item #{item_id} does not exist.")
    show_incident = request.POST.get("context") == "list"
    back = (
        reverse("postmortems:items") + f"?item={item.pk}"
        if show_incident or item.postmortem_id is None
        else _doc(item.postmortem_id, f"item-{item.pk}")
    )
    values = {k: request.POST[k] for k in ITEM_FIELDS if k in request.POST}
    try:
        services.action_item_save(
            item_id=item.pk,
            actor=request.user,
            values=values,
            status=request.POST.get("status") or None,
            reason=request.POST.get("reason", ""),
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    if request.htmx:
        response = _row(request, item.pk, show_incident=show_incident)
        response.write(FLASH_CLEARED)
        return response
    return redirect(back)


@require_GET
@console_view(VIEW_ITEMS)
def item_list(request: AuthedRequest):
    today = timezone.localdate()
    status = request.GET.get("status", "")
    if status not in dict(STATUS_FILTERS):
        status = ""
    category = request.GET.get("category", "")
    if category not in ItemCategory.values:
        category = ""
    owner = request.GET.get("owner", "").strip()
    overdue = request.GET.get("overdue") == "1"
    items = selectors.action_item_list(
        status=status, owner=owner, category=category, overdue=overdue, today=today
    )
    focus = parse_id(request.GET.get("item"))
    if focus is not None:  # a notification's link: just that item
        items = items.filter(pk=focus)
    page = Paginator(items, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "status": status,
        "statuses": STATUS_FILTERS,
        "category": category,
        "owner": owner,
        "overdue": overdue,
        "focus": focus or "",
        "filtered": bool(status or category or owner or overdue or focus),
        "users": active_users(),
        "can_manage": request.user.has_perm(MANAGE),
        "today": today,
        **_choices(),
    }
    return render(request, "postmortems/items.html", context)


@require_GET
@console_view()
def notification_list(request: AuthedRequest):
    unread = list(selectors.notifications_unread(user=request.user))
    read = selectors.notifications_read(user=request.user, limit=READ_SHOWN)
    context = {"unread": unread, "read": read}
    return render(request, "postmortems/notifications.html", context)


@require_POST
@console_view()
def notification_read(request: AuthedRequest, notification_id: int):
    def call():
        services.notification_read(notification_id=notification_id, actor=request.user)

    return perform(
        request, call, done=_("Marked as read."), back=reverse("postmortems:notifications")
    )
