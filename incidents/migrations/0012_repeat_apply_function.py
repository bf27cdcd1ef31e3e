"""Ingestion's repeat check as a PL/pgSQL function, incidents_repeat_apply (issue #14).

Every webhook request runs it (ingestion_sql.repeat_apply), and as a plain statement
PostgreSQL spent more time planning it (0.56 ms) than running it (0.36 ms). A PL/pgSQL
function keeps the plan of its statements for the session, also behind a transaction
pooler, where prepared statements would not survive.

What it does: `p_want` holds, per group of the body, its grouping key, the digest of its
alerts, how many alerts it holds and the worst severity its firing alerts would escalate
to. A group matches when its open incident carries that digest, is no less severe, its
alerts stamped with the incident's last notification are exactly as many as the body's,
and no orphan of the group waits to be adopted. Only if all `p_groups` groups match are
the alerts' receive bookkeeping and the incidents' last_notified_at moved to `p_now`;
otherwise nothing is written (the incidents matched stay locked for the full path).
Returns the number of groups matched.

Incidents are locked before alerts here, alerts before incidents in the full path: two
deliveries of one group at once (never sent so by Alertmanager) can deadlock, and
PostgreSQL then fails one, which alerts_ingest retries.

To change it, add a migration with CREATE OR REPLACE FUNCTION.
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION incidents_repeat_apply(
    p_want jsonb, p_groups integer, p_now timestamptz, p_orphans_since timestamptz
) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
    matched integer;
BEGIN
    WITH want AS (
        SELECT * FROM jsonb_to_recordset(p_want)
            AS w(grouping_key text, digest text, alerts integer, severity text)
    ), inc AS (
        SELECT i.id, i.last_notified_at, i.grouping_key, w.alerts
        FROM incidents_incident i JOIN want w ON i.grouping_key = w.grouping_key
        WHERE i.status <> 'resolved' AND i.alert_digest = w.digest
          AND i.severity <= w.severity COLLATE "C"
        ORDER BY i.id
        FOR UPDATE OF i
    ), body AS (
        SELECT a.id, a.incident_id
        FROM incidents_alert a JOIN inc ON a.incident_id = inc.id
        WHERE a.last_received_at = inc.last_notified_at
    ), hit AS (
        SELECT inc.id FROM inc
        WHERE inc.alerts = (SELECT count(*) FROM body WHERE body.incident_id = inc.id)
          AND NOT EXISTS (
            SELECT 1 FROM incidents_alert o
            WHERE o.incident_id IS NULL AND o.grouping_key = inc.grouping_key
              AND o.last_received_at >= p_orphans_since
          )
    ), ok AS (
        SELECT count(*) = p_groups AS yes FROM hit
    ), alerts AS (
        UPDATE incidents_alert a
        SET last_received_at = p_now, receive_count = a.receive_count + 1
        FROM body, ok WHERE ok.yes AND a.id = body.id
        RETURNING a.id
    ), incidents AS (
        UPDATE incidents_incident i SET last_notified_at = p_now
        FROM hit, ok WHERE ok.yes AND i.id = hit.id
        RETURNING i.id
    )
    SELECT count(*) INTO matched FROM incidents;
    RETURN matched;
END
$fn$
"""
DROP = "DROP FUNCTION IF EXISTS incidents_repeat_apply(jsonb, integer, timestamptz, timestamptz)"


def _run(sql: str):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0011_alert_receive_bookkeeping_hot"),
    ]

    operations = [migrations.RunPython(_run(CREATE), _run(DROP))]
