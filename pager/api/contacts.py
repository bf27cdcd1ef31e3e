"""My contact methods: how the pager reaches me, in the order it tries them. The
address is write-only; answers show it masked."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from console.api.base import LIST_ERRORS, parse_body
from console.http import AuthedApiRequest
from console.outgoing.errors import OutgoingRefused
from pager.api import selectors
from pager.api.base import E400_REFUSED, ITEM_CHANGE_ERRORS, TAG, OwnApi
from pager.api.serializers.contacts import (
    ContactMethodInputSerializer,
    ContactMethodMoveSerializer,
    ContactMethodPatchSerializer,
    ContactMethodSerializer,
    ContactMethodTestResultSerializer,
)
from pager.paging import services

CREATE_ERRORS = {k: v for k, v in ITEM_CHANGE_ERRORS.items() if k not in (404, 409)}


@contextmanager
def _address_refused() -> Iterator[None]:
    """The outgoing guard refusing an address (not http(s), an internal host) is the
    request's fault: 400 naming the field."""
    try:
        yield
    except OutgoingRefused as exc:
        raise serializers.ValidationError({"address": [str(exc)]}) from None


class _ContactApi(OwnApi):
    noun = "contact method"

    def mine(self, request: AuthedApiRequest, pk: int):
        """One of the caller's own methods; anyone else's is a 404 at this address."""
        method = selectors.contact_method_mine(user_id=request.user.pk, method_id=pk)
        return self.found(method, pk)


@extend_schema(tags=[TAG])
class ContactMethodListApi(_ContactApi):
    """Your contact methods in the order a page tries them (a failed one falls through
    to the next). Responder. Paginated (`?page=`)."""

    @extend_schema(
        operation_id="pager_me_contact_methods_list",
        summary="List my contact methods",
        responses={200: ContactMethodSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request: AuthedApiRequest):
        page = self.paginate_queryset(selectors.contact_methods_mine(user_id=request.user.pk))
        return self.get_paginated_response(ContactMethodSerializer(page, many=True).data)

    @extend_schema(
        operation_id="pager_me_contact_methods_create",
        summary="Add a contact method (tried last)",
        description="The address is checked for its kind (a push service's URL, an "
        "email address, a webhook URL with its signing secret) and is never shown back.",
        request=ContactMethodInputSerializer,
        responses={
            201: ContactMethodSerializer,
            **CREATE_ERRORS,
            400: OpenApiResponse(
                E400_REFUSED.response,
                description=f"{E400_REFUSED.description} Code `invalid` also for an "
                "address its kind cannot use; `detail` shows an example.",
            ),
        },
    )
    def post(self, request: AuthedApiRequest):
        data = parse_body(ContactMethodInputSerializer, request)
        with _address_refused():
            method = services.contact_method_create(
                actor=request.user, user_id=request.user.pk, **data
            )
        return Response(ContactMethodSerializer(method).data, status=201)


@extend_schema(tags=[TAG])
class ContactMethodDetailApi(_ContactApi):
    """Change or remove one of your contact methods."""

    @extend_schema(
        operation_id="pager_me_contact_methods_update",
        summary="Change a contact method",
        request=ContactMethodPatchSerializer,
        responses={200: ContactMethodSerializer, **ITEM_CHANGE_ERRORS},
    )
    def patch(self, request: AuthedApiRequest, pk: int):
        data = parse_body(ContactMethodPatchSerializer, request)
        self.mine(request, pk)
        with _address_refused():
            method = services.contact_method_update(actor=request.user, method_id=pk, **data)
        return Response(ContactMethodSerializer(method).data)

    @extend_schema(
        operation_id="pager_me_contact_methods_destroy",
        summary="Remove a contact method",
        request=None,
        responses={204: None, **ITEM_CHANGE_ERRORS},
    )
    def delete(self, request: AuthedApiRequest, pk: int):
        self.mine(request, pk)
        services.contact_method_delete(actor=request.user, method_id=pk)
        return Response(status=204)


@extend_schema(tags=[TAG])
class ContactMethodTestApi(_ContactApi):
    """Send a test message through this one method now; `result` says how it went (it
    is also kept on the method). No body."""

    @extend_schema(
        operation_id="pager_me_contact_methods_test",
        summary="Send a test message",
        request=None,
        responses={200: ContactMethodTestResultSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        self.mine(request, pk)
        result = services.contact_method_test(method_id=pk, actor=request.user)
        method = self.mine(request, pk)
        return Response(
            ContactMethodTestResultSerializer({"result": result, "method": method}).data
        )


@extend_schema(tags=[TAG])
class ContactMethodMoveApi(_ContactApi):
    """Put the method at `position` (1: tried first); the others keep their order.
    Answers all your methods in their new order."""

    pagination_class = None  # the answer is the whole order, never a page of it

    @extend_schema(
        operation_id="pager_me_contact_methods_move",
        summary="Reorder a contact method",
        request=ContactMethodMoveSerializer,
        responses={200: ContactMethodSerializer(many=True), **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        data = parse_body(ContactMethodMoveSerializer, request)
        self.mine(request, pk)
        methods = services.contact_method_move(
            actor=request.user, method_id=pk, position=data["position"]
        )
        return Response(ContactMethodSerializer(methods, many=True).data)
