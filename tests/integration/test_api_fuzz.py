"""Fuzz the whole REST API from its own OpenAPI schema (issue 11) with schemathesis,
against a live server on the PostgreSQL test database (and a real Alertmanager for the
silences operations): no 5xx, every 4xx a JSON body with a message a person can read,
every response as the schema documents it.

Bounded for CI: a few examples per operation, derandomized (the same cases every run),
no example database. Nothing is excluded: every operation of /api/schema/, including
the Alertmanager webhook (with its bearer token), is called as an admin.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import schemathesis
from django.utils import timezone

from console import roles
from console.api_tokens.models import ApiToken
from tests.conftest import TOKEN
from tests.factories import AlertFactory, IncidentFactory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

FUZZ_TOKEN_ID = 7_000_000_001
MAX_EXAMPLES = 8  # per operation and phase: the module stays well under two minutes
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
)


def four_xx_has_a_message(ctx, response, case):
    """Every 4xx is JSON with something for a person to read: DRF's {"detail": ...},
    field errors {"<field>": ["..."]}, or the webhook's {"error": ...}."""
    if not 400 <= response.status_code < 500:
        return None
    content_type = response.headers.get("content-type", [""])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    assert "json" in content_type, f"{response.status_code} is {content_type!r}, not JSON"
    body = json.loads(response.content)
    assert _has_text(body), f"{response.status_code} has no message: {body!r:.300}"
    return True


def _has_text(value) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, dict):
        return any(_has_text(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_text(v) for v in value)
    return False


def _seed(admin) -> None:
    """Rows for the ids the fuzzer tries first (1, 2, ...), in every state the API shows."""
    now = timezone.now()
    for n, status in enumerate(("triggered", "mitigated", "resolved")):
        incident = IncidentFactory(
            status=status,
            resolved_at=now if status == "resolved" else None,
            mitigated_at=now if status != "triggered" else None,
        )
        AlertFactory(incident=incident, starts_at=now - timedelta(minutes=n + 1))


@pytest.fixture
def api_schema(live_server, transactional_db, make_user, require_postgres, alertmanager, settings):
    # The silences operations talk to a real Alertmanager (conftest), as in production.
    settings.ALERTMANAGER_URL = alertmanager
    admin = make_user("fuzz-admin", roles.ADMIN)
    # Far from the ids the fuzzer tries, so DELETE /api/v1/auth/tokens/{id}/ revokes the
    # seeded tokens (below), never the one it calls with.
    _row, token = ApiToken.objects.create(user=admin, id=FUZZ_TOKEN_ID)
    _seed(admin)
    for client in ("grafana", "ci"):
        ApiToken.objects.create(user=make_user(f"fuzz-{client}", roles.VIEWER), client=client)
    config = schemathesis.Config.from_dict(
        {
            "headers": {"Authorization": f"Token {token}"},
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
            "checks": {
                **{name: {"enabled": True} for name in CHECKS},
                # Not checked, on purpose: (1) an empty query parameter (`?page=`) means
                # "not given", as in every Django form, where this check wants a 400;
                # (2) an action's `params` are checked by its kind (scale_lws needs `lws`),
                # which the schema documents as a free-form object, so a schema-valid body
                # may still get a 400 naming the missing parameter.
                "negative_data_rejection": {"enabled": False},
                "positive_data_acceptance": {"enabled": False},
            },
        }
    )
    schema = schemathesis.openapi.from_url(
        f"{live_server.url}/api/schema/",
        config=config,
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
def test_every_api_operation_answers_as_documented(case):
    headers = {}
    if case.path == "/api/v1/alerts/alertmanager":
        # The webhook takes Alertmanager's bearer token, not a user's DRF token.
        headers["Authorization"] = f"Bearer {TOKEN}"
    case.call_and_validate(headers=headers, additional_checks=[four_xx_has_a_message])
