"""REST API of notifications: the deliveries, read-only, as the page shows them."""

from drf_spectacular.utils import extend_schema

from console.api.base import LIST_ERRORS, ConsoleApi
from console.http import AuthedApiRequest
from console.permissions import HasConsoleRole, require_perm
from notifications import selectors
from notifications.permissions import VIEW
from notifications.serializers import DeliveryListQuerySerializer, DeliverySerializer

TAG = "notifications"


@extend_schema(tags=[TAG])
class DeliveryListApi(ConsoleApi):
    """Every notification the console tried to send, newest first, with its status,
    attempts and last error (commander and admin roles). Paginated (`?page=`)."""

    noun = "delivery"
    permission_classes = [HasConsoleRole, require_perm(VIEW)]

    @extend_schema(
        operation_id="notifications_deliveries_list",
        summary="List notification deliveries",
        parameters=[DeliveryListQuerySerializer],
        responses={200: DeliverySerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        query = DeliveryListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = selectors.DeliveryFilters.from_params(query.validated_data)
        page = self.paginate_queryset(selectors.delivery_list(filters=filters))
        return self.get_paginated_response(DeliverySerializer(page, many=True).data)
