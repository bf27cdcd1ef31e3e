"""The API's view of a stored text: the words in the request's language, and the ids and
parameters for a client that words them itself."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.texts.message import as_api, render

# An `_i18n` field in the OpenAPI schema: the ids and parameters, or null.
I18N_SCHEMA = {
    "type": "array",
    "nullable": True,
    "items": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "params": {"type": "object"}},
        "required": ["id", "params"],
    },
}


def stored_parts(obj: Any, field: str) -> Any:
    """A row's parts for `field`: `texts[field]` on a row, `payload["msg"]` on an event."""
    texts = getattr(obj, "texts", None)
    if isinstance(texts, dict) and field in texts:
        return texts[field]
    if field == "message":
        payload = getattr(obj, "payload", None)
        if isinstance(payload, dict):
            return payload.get("msg")
    return None


@extend_schema_field(OpenApiTypes.STR)
class RenderedText(serializers.Field):  # type: ignore[type-arg]
    """`field` worded in the request's language (as stored when it has no parts)."""

    def __init__(self, field: str, **kwargs: Any) -> None:
        self.text_field = field
        kwargs.update(source="*", read_only=True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        stored = getattr(value, self.text_field)
        return render(stored_parts(value, self.text_field), fallback=stored)


@extend_schema_field(I18N_SCHEMA)
class TextIds(serializers.Field):  # type: ignore[type-arg]
    """`field`'s ids and parameters ([{"id", "params"}]), null when stored only as text."""

    def __init__(self, field: str, **kwargs: Any) -> None:
        self.text_field = field
        kwargs.update(source="*", read_only=True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> list[dict[str, Any]] | None:
        return as_api(stored_parts(value, self.text_field))
