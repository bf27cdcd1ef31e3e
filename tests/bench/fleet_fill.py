"""A stand-in year for tests/bench/fleet_pages.py when the generator
(postmortems/fleet_year) is not there: plain SQL, a few alerts and events per incident.

Incidents spread evenly over a year ending now, in time order (a higher id is later).
What a row holds depends only on its distance from the newest (`j`), so the newest
incidents read the same at every size: the newest incident of a 10k database is the
newest of a 1M one, with the same alerts, events and history around it.
"""

from __future__ import annotations

import psycopg

RUNBOOKS = [
    "ttft-spike", "nccl-hang", "long-context-kv", "prefix-cache-drop", "retry-storm",
    "ecc-errors", "garbage-output", "cuda-graph-capture", "",
]  # fmt: skip
ALERTNAMES = [
    "VLLMHighTTFT", "VLLMEngineStalled", "VLLMKVCachePressure", "VLLMPrefixCacheHitRateDrop",
    "VLLMRetryStorm", "GPUECCErrors", "VLLMOutputQualityRegression", "VLLMCrashLooping",
    "VLLMQueueBacklog",
]  # fmt: skip
OPEN = 200  # the newest this many are open

_USER = """
INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,
                       is_staff, is_active, date_joined)
VALUES ('!', false, 'fleet-oncall', '', '', '', false, true, now())
ON CONFLICT (username) DO UPDATE SET is_active = true RETURNING id
"""

# j = %(total)s - i: 0 is the newest. Severity mostly SEV3/SEV4; 3% drills.
_INCIDENTS = """
INSERT INTO incidents_incident (
    title, severity, status, grouping_key, runbook, namespace, group_labels, started_at,
    triggered_at, acknowledged_at, mitigated_at, resolved_at, reopen_count, last_alert_at,
    is_drill, is_demo, created_at, updated_at, alert_digest, commander_id)
SELECT (ARRAY[%(names)s])[1 + j %% 9] || ' on ns-' || (j %% 50) || '/lws-' || (j %% 400),
       CASE WHEN j %% 50 = 0 THEN 'SEV1' WHEN j %% 10 = 1 THEN 'SEV2'
            WHEN j %% 5 < 3 THEN 'SEV3' ELSE 'SEV4' END,
       CASE WHEN j >= %(open)s THEN 'resolved'
            ELSE (ARRAY['triggered', 'acknowledged', 'mitigated'])[1 + j %% 3] END,
       'fleet-' || j,
       (ARRAY[%(runbooks)s])[1 + j %% 9],
       'ns-' || (j %% 50),
       jsonb_build_object('alertname', (ARRAY[%(names)s])[1 + j %% 9],
                          'namespace', 'ns-' || (j %% 50), 'lws', 'lws-' || (j %% 400)),
       t, t,
       CASE WHEN j %% 3 = 0 AND j < %(open)s THEN NULL ELSE t + interval '4 minutes' END,
       CASE WHEN j < %(open)s THEN NULL ELSE t + interval '20 minutes' END,
       CASE WHEN j < %(open)s THEN NULL ELSE t + interval '45 minutes' END,
       j %% 7 / 6, t, j %% 33 = 5, false, t, t, '',
       CASE WHEN j %% 3 = 0 THEN NULL ELSE %(user)s END
FROM generate_series(1, %(total)s) AS i,
     LATERAL (SELECT %(total)s - i AS j) AS d,
     LATERAL (SELECT now() - j * (interval '365 days' / %(total)s) - interval '1 minute' AS t)
         AS at
ORDER BY i
"""
_ALERTS = """
INSERT INTO incidents_alert (
    fingerprint, starts_at, alertname, status, severity, labels, annotations, ends_at,
    generator_url, grouping_key, incident_id, first_received_at, last_received_at,
    receive_count)
SELECT md5(inc.grouping_key || '-' || k), inc.triggered_at + k * interval '1 second',
       inc.group_labels->>'alertname',
       CASE WHEN inc.status = 'resolved' THEN 'resolved' ELSE 'firing' END, 'critical',
       jsonb_build_object('alertname', inc.group_labels->>'alertname',
                          'namespace', inc.namespace, 'lws', inc.group_labels->>'lws',
                          'pod', (inc.group_labels->>'lws') || '-' || k,
                          'cluster', 'c' || (inc.id %% 4), 'team', 'team-' || (inc.id %% 12))
         || CASE WHEN k = 1 THEN jsonb_build_object('node', 'gpu-node-' || (inc.id %% 2000))
                 ELSE '{}'::jsonb END,
       jsonb_build_object('summary', 'p99 above target'),
       inc.resolved_at, '', inc.grouping_key, inc.id, inc.triggered_at, inc.triggered_at, 1
FROM incidents_incident inc, generate_series(1, %(alerts)s) AS k
"""
_EVENTS = """
INSERT INTO incidents_timelineevent (incident_id, kind, occurred_at, source, message, payload)
SELECT inc.id, (ARRAY['incident_opened', 'alert_fired', 'status_changed', 'note'])[k],
       inc.triggered_at + k * interval '1 minute', 'alertmanager', 'fleet event ' || k, '{}'
FROM incidents_incident inc, generate_series(1, 4) AS k
"""
# A postmortem for one resolved SEV1/SEV2 incident in 5 (about 1 incident in 50).
_POSTMORTEMS = """
INSERT INTO postmortems_postmortem (
    title, status, draft_state, draft_error, summary, impact, root_cause,
    contributing_factors, lessons_learned, impact_data, runbook, category, suggestions,
    language, created_at, updated_at, drafted_at, published_at, version, revision,
    created_by_id, incident_id, draft_language)
SELECT 'Postmortem: ' || inc.title,
       (ARRAY['draft', 'in_review', 'published', 'published'])[1 + inc.id %% 4], 'ready', '',
       'summary', 'impact', 'root cause', '', '', '{}', inc.runbook, '', '[]', 'en',
       inc.resolved_at, inc.resolved_at, inc.resolved_at,
       CASE WHEN inc.id %% 4 >= 2 THEN inc.resolved_at END, 1, 1, %(user)s, inc.id, 'en'
FROM incidents_incident inc
WHERE inc.status = 'resolved' AND inc.severity IN ('SEV1', 'SEV2') AND inc.id %% 5 = 0
"""
_ITEMS = """
INSERT INTO postmortems_actionitem (
    title, description, due_date, priority, category, status, wont_do_reason, external_url,
    namespace, runbook, source, created_at, updated_at, closed_at, created_by_id,
    incident_id, owner_id, postmortem_id)
SELECT 'Fix ' || k || ' for #' || pm.incident_id, '', (pm.created_at + interval '14 days')::date,
       'P' || (1 + k %% 4),
       (ARRAY['monitoring', 'automation', 'config', 'capacity', 'process'])[1 + k %% 5],
       st, '', '', inc.namespace, inc.runbook, '', pm.created_at, pm.created_at,
       CASE WHEN st IN ('done', 'wont_do') THEN pm.created_at + interval '7 days' END,
       %(user)s, pm.incident_id, CASE WHEN k %% 2 = 0 THEN %(user)s END, pm.id
FROM postmortems_postmortem pm JOIN incidents_incident inc ON inc.id = pm.incident_id,
     generate_series(1, 1 + pm.id %% 5) AS k,
     LATERAL (SELECT (ARRAY['open', 'in_progress', 'done', 'done', 'wont_do'])
                     [1 + (pm.id + k) %% 5] AS st) AS s
"""
# One accepted receipt per incident of the last 7 days.
_RECEIPTS = """
INSERT INTO incidents_webhookreceipt (
    received_at, source, remote_addr, user_agent, body, body_bytes, outcome, http_status,
    error, error_field, group_key, alert_count, incident_ids)
SELECT inc.triggered_at, 'alertmanager', '10.0.0.7', 'Alertmanager/0.27.0', b.body,
       octet_length(b.body), 'accepted', 200, '', '', inc.grouping_key, %(alerts)s,
       jsonb_build_array(inc.id)
FROM incidents_incident inc,
     LATERAL (SELECT jsonb_build_object('version', '4', 'status', 'firing',
                     'groupKey', inc.grouping_key, 'groupLabels', inc.group_labels)::text
             AS body) AS b
WHERE inc.triggered_at > now() - interval '7 days'
ORDER BY inc.id
"""


def _array(values: list[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def fill(dsn: str, total: int, *, alerts: int = 3) -> None:
    """`total` incidents with `alerts` alerts and 4 events each, postmortems, action items
    and receipts, into an empty migrated database; then VACUUM ANALYZE."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        user = conn.execute(_USER).fetchone()[0]
        params = {"total": total, "open": OPEN, "alerts": alerts, "user": user}
        with conn.transaction():
            conn.execute(
                _INCIDENTS.replace("%(names)s", _array(ALERTNAMES)).replace(
                    "%(runbooks)s", _array(RUNBOOKS)
                ),
                params,
            )
            for sql in (_ALERTS, _EVENTS, _POSTMORTEMS, _ITEMS, _RECEIPTS):
                conn.execute(sql, params)
        conn.execute("VACUUM ANALYZE")  # what autovacuum would have done on a live database
