"""The deliveries page: every notification sent or attempted, and what to do about the
ones that failed."""

from django.core.paginator import Paginator
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from console.http import AuthedRequest
from console.web import console_view, perform
from notifications import selectors, services
from notifications.models import DeliveryStatus, Event
from notifications.permissions import RETRY, VIEW

PER_PAGE = 50
# The console's existing outcome colours: green sent, blue on its way, orange not yet
# sent, red failed.
BADGE = {
    DeliveryStatus.SENT: "outcome-accepted",
    DeliveryStatus.QUEUED: "outcome-replayed",
    DeliveryStatus.RETRYING: "outcome-failed",
    DeliveryStatus.PENDING: "outcome-failed",
    DeliveryStatus.FAILED: "outcome-rejected",
}


@require_GET
@console_view(VIEW)
def delivery_list(request: AuthedRequest):
    filters = selectors.DeliveryFilters.from_params(request.GET)
    page = Paginator(selectors.delivery_list(filters=filters), PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "page": page,
        "rows": [(d, BADGE.get(DeliveryStatus(d.status), "")) for d in page.object_list],
        "filters": filters,
        "filtered": filters != selectors.DeliveryFilters(),
        "overview": selectors.delivery_overview(),
        "statuses": DeliveryStatus.choices,
        "events": Event.choices,
        "targets": selectors.target_choices(),
        "can_retry": request.user.has_perm(RETRY),
    }
    return render(request, "notifications/list.html", context)


@require_POST
@console_view(RETRY)
def delivery_retry(request: AuthedRequest, pk: int):
    return perform(
        request,
        lambda: services.delivery_retry(delivery_id=pk, actor=request.user),
        done=_("Delivery #%(id)s is queued again; its row shows the outcome.") % {"id": pk},
        back=reverse("notifications:list"),
    )
