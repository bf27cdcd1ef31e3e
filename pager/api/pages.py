"""Pages: who was paged for what, how each contact method fared, and acknowledging."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from console.api.base import ITEM_READ_ERRORS, ITEM_WRITE_ERRORS, LIST_ERRORS
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from incidents import permissions as incident_perms
from incidents.models import IncidentStatus
from incidents.services.lifecycle import incident_acknowledge
from pager.api import selectors
from pager.api.base import TAG, PagerApi
from pager.api.serializers.pages import PageListQuerySerializer, PageSerializer
from pager.escalation.services import escalation_on_ack
from pager.models import PageStatus


class _PageApi(PagerApi):
    noun = "page"


@extend_schema(tags=[TAG])
class PageListApi(_PageApi):
    """Pages, newest first, each with its deliveries (one per contact method tried, in
    order). Filter by team (slug), user (username), status and incident. Paginated
    (`?page=`)."""

    @extend_schema(
        operation_id="pager_pages_list",
        summary="List pages",
        parameters=[PageListQuerySerializer],
        responses={200: PageSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = PageListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = selectors.PageFilters(**query.validated_data)
        page = self.paginate_queryset(selectors.page_list(filters=filters))
        data = PageSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)


@extend_schema(tags=[TAG])
class PageDetailApi(_PageApi):
    """One page with its deliveries."""

    @extend_schema(
        operation_id="pager_pages_retrieve",
        summary="One page",
        responses={200: PageSerializer, **ITEM_READ_ERRORS},
    )
    def get(self, request: AuthedApiRequest, pk: int):
        page = self.found(selectors.page_get(page_id=pk), pk)
        return Response(PageSerializer(page, context={"request": request}).data)


@extend_schema(tags=[TAG])
class PageAcknowledgeApi(_PageApi):
    """Acknowledge the page's incident as yourself (responder), as the incident's own
    acknowledge does: paging stops, its open pages are marked acknowledged, and when
    nobody commands the incident you take command. A page sent again after an
    acknowledgement expired acknowledges that re-page. 409 when there is nothing to
    acknowledge (already acknowledged, mitigated or resolved). No body. Answers the page."""

    permission_classes = [HasConsoleRole, require_perm(incident_perms.ACKNOWLEDGE)]

    @extend_schema(
        operation_id="pager_pages_acknowledge",
        summary="Acknowledge the page's incident (responder)",
        request=None,
        responses={200: PageSerializer, **ITEM_WRITE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        page = self.found(selectors.page_get(page_id=pk), pk)
        repage = (
            page.repage_round > 0
            and page.status != PageStatus.ACKNOWLEDGED
            and page.incident.status == IncidentStatus.ACKNOWLEDGED
        )
        if not repage:  # a re-page (acknowledgement expired) leaves the incident as it is
            incident_acknowledge(incident_id=page.incident_id, actor=request.user)
        # The escalation receiver does this too, from a task; doing it now answers the
        # page as it stands (the task then finds nothing left to do).
        escalation_on_ack(incident_id=page.incident_id, actor_id=request.user.pk)
        page = self.found(selectors.page_get(page_id=pk), pk)
        return Response(PageSerializer(page, context={"request": request}).data)
