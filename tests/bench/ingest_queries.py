"""Queries per webhook body, for 1 and for 100 alerts, per kind of notification (run by
ingest_e2e.py in a subprocess; prints one JSON object).

In this process (Django test Client: URL, middleware, view, services) against the
database in DATABASE_URL, inside a transaction rolled back at the end, so the database
is left as it was. The same count is asserted by tests/unit/incidents/test_ingest_queries.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # run as a script: make tests.bench importable


class _Rollback(Exception):
    pass


def main() -> int:
    import django

    django.setup()
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.bench import stack
    from tests.payloads import alert, notification, resolved

    client = Client(HTTP_AUTHORIZATION=f"Bearer {stack.TOKEN}")

    def queries(body: dict) -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(
                stack.WEBHOOK_PATH, data=json.dumps(body), content_type="application/json"
            )
        assert response.status_code == 200, response.content[:300]
        return sum(1 for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"])

    counts: dict[str, dict[int, int]] = {}
    try:
        with transaction.atomic():
            for n in (1, 100):
                alerts = [alert(pod=f"q{n}-{i}") for i in range(n)]
                key = f'{{}}:{{alertname="VLLMHighTTFT", bench="q{n}"}}'
                for kind, body in (
                    ("new", notification(alerts, group_key=key)),
                    ("repeat", notification(alerts, group_key=key)),
                    ("resolve", notification([resolved(a) for a in alerts], group_key=key)),
                ):
                    counts.setdefault(kind, {})[n] = queries(body)
            raise _Rollback
    except _Rollback:
        pass
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.exit(main())
