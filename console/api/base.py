"""What every REST API view shares: the `ConsoleApi` base class, the documented error
answers (E400, READ_ERRORS, ...) and the request body check.

Each view names its noun ("incident", "action run", ...), the thing its path `{id}`
identifies; the schema documents the id parameter, the 404 and the 409 with it, and
`found()` words the 404's detail. A service's refusal (DomainError) becomes its HTTP
answer in console/api/errors.py.
"""

from django.core.exceptions import ImproperlyConfigured
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser

from console.errors import NotFound

NOUN = "{noun}"  # in an error description: the view's noun, filled in by ConsoleSchema


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, for a person to read.")


class DomainErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="Why the change was refused, for a person to read.")
    code = serializers.CharField(
        help_text=(
            "Machine-readable reason, e.g. invalid_transition, invalid_state, conflict, "
            "unchanged, invalid."
        )
    )


# --- documented error answers ---------------------------------------------------------
_VALIDATION_EXAMPLE = OpenApiExample(
    "Field errors", value={"text": ["This field may not be blank."]}, response_only=True
)
E400 = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description='The body or a query parameter is invalid: {"<field>": ["<message>", …]}.',
    examples=[_VALIDATION_EXAMPLE],
)
E401 = OpenApiResponse(
    ErrorSerializer,
    description="Not authenticated: send a session cookie or `Authorization: Token <key>`. "
    "(DRF answers 403 instead when the session scheme is tried first.)",
)
E403 = OpenApiResponse(
    ErrorSerializer,
    description="Authenticated, but without a console role, or the role does not allow this.",
)
E404 = OpenApiResponse(ErrorSerializer, description=f"No {NOUN} with this id.")
E409 = OpenApiResponse(
    DomainErrorSerializer,
    description=f"The change was refused in the {NOUN}'s current state (e.g. a move it "
    "has already made, or another change under way); `detail` says why.",
)
E404_PAGE = OpenApiResponse(
    ErrorSerializer, description="No such page: `?page=` is past the last page or not a number."
)
READ_ERRORS = {401: E401, 403: E403}
LIST_ERRORS = {400: E400, 404: E404_PAGE, **READ_ERRORS}
ITEM_READ_ERRORS = {**READ_ERRORS, 404: E404}
ITEM_WRITE_ERRORS = {**ITEM_READ_ERRORS, 409: E409}
WRITE_ERRORS = {400: E400, **ITEM_WRITE_ERRORS}


def parse_body(serializer_class, request) -> dict:
    """The request body validated by `serializer_class`; 400 naming the fields otherwise."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _capitalized(noun: str) -> str:
    return noun[:1].upper() + noun[1:]


class ConsoleSchema(AutoSchema):
    """Fills the view's noun into the error descriptions and documents the `{id}` path
    parameter as "<Noun> id."."""

    def _noun(self) -> str:
        noun = getattr(self.view, "noun", "")
        if not noun:
            raise ImproperlyConfigured(f"{type(self.view).__name__} names no ConsoleApi.noun.")
        return noun

    def get_override_parameters(self):
        parameters = super().get_override_parameters()
        if "{id}" not in self.path:
            return parameters
        described = f"{_capitalized(self._noun())} id."
        return [
            OpenApiParameter("id", int, OpenApiParameter.PATH, description=described),
            *parameters,
        ]

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for response in responses.values():
            if NOUN in response.get("description", ""):
                response["description"] = response["description"].replace(NOUN, self._noun())
        return responses


class ConsoleApi(GenericAPIView):
    # Base of every API view (a comment, not a docstring: docstrings become the operation
    # descriptions in the schema). The API speaks JSON only. No OPTIONS: DRF's metadata
    # answer needs a serializer_class these views do not have (it was a 500); now a JSON
    # 405. `noun`: what the path's {id} names, for the schema and the 404's detail.
    # `domain_error_status`: refusal codes this view answers other than the usual way
    # (console/api/errors.py), e.g. {"invalid": 400} where the service checks the body.
    parser_classes = [JSONParser]
    metadata_class = None
    schema = ConsoleSchema()
    noun = ""
    domain_error_status: dict[str, int] = {}

    def found(self, row, pk):
        """`row` (what a selector answered for `pk`), or the 404 naming the noun when it
        is None: {"detail": "Action run #7 does not exist."}."""
        if row is None:
            raise NotFound(f"{_capitalized(self.noun)} #{pk} does not exist.")
        return row
