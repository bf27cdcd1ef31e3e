"""drf-spectacular postprocessing hook: document the heartbeat check-in, a plain Django
view (pager/heartbeats/views.py) that schema generation cannot see. Registered in
SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"] (config/settings/api.py)."""

from typing import Any

PATH = "/api/v1/pager/heartbeats/{slug}/beat"


def _json(description: str, schema: str) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def schema_add_heartbeat_beat(
    result: dict[str, Any], generator: Any, request: Any, public: Any, **kwargs: Any
) -> dict[str, Any]:
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(
        {
            "HeartbeatBeat": {
                "type": "object",
                "required": ["ok", "next_due"],
                "properties": {
                    "ok": {"type": "boolean", "enum": [True]},
                    "next_due": {
                        "type": "string",
                        "format": "date-time",
                        "description": "When the next check-in is expected; the heartbeat "
                        "counts as missing after this plus its grace.",
                    },
                },
            },
            "HeartbeatRefused": {
                "type": "object",
                "required": ["ok", "error"],
                "properties": {"ok": {"type": "boolean", "enum": [False]},
                               "error": {"type": "string"}},
            },
        }
    )  # fmt: skip
    components.setdefault("securitySchemes", {})["heartbeatBearer"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "The heartbeat's own token, shown once when it was made.",
    }
    result.setdefault("paths", {})[PATH] = {
        "post": {
            "operationId": "pager_heartbeat_beat",
            "summary": "Check in (a dead-man's switch)",
            "description": "Records that the heartbeat's source is alive. No body. A "
            "heartbeat that misses its interval plus grace opens an incident for its team.",
            "tags": ["pager"],
            "security": [{"heartbeatBearer": []}],
            "parameters": [
                {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "responses": {
                "200": _json("Recorded.", "HeartbeatBeat"),
                "401": _json("Missing or wrong token.", "HeartbeatRefused"),
                "404": _json("No heartbeat has this slug.", "HeartbeatRefused"),
                "405": _json("Only POST is allowed.", "HeartbeatRefused"),
            },
        }
    }
    return result
