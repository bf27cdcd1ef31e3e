"""Incidents, alerts, their timeline and the webhook receipts, squashed from 0001-0015
(issue 24). A new database gets them in one step; on a database at the previous
release every replaced migration is applied, so Django counts this one as applied too.
An older database must first be upgraded to that release (docs/operations.md).

Besides the tables: the database refuses to rewrite history (no UPDATE, DELETE or
TRUNCATE of the timeline, no UPDATE of a receipt's record; console/append_only.py), and
on PostgreSQL ingestion's storage settings and its repeat function (issue #14)."""

import django.db.models.deletion
import django.db.models.fields.json
from django.conf import settings
from django.db import migrations, models

from console.append_only import AppendOnlyTriggers

# The webhook receipt's record of what arrived and what became of it: an UPDATE may not
# change it (pruning and a replay's replay_of may still change the rest).
RECEIPT_RECORD = (
    "received_at",
    "source",
    "remote_addr",
    "user_agent",
    "body",
    "body_raw",
    "body_bytes",
    "outcome",
    "http_status",
    "error",
    "error_field",
    "group_key",
    "alert_count",
    "incident_ids",
)


def _receipt_body_compression(method: str):
    """Receipt bodies compressed with lz4 rather than pglz where PostgreSQL (14+) has it:
    about half the CPU per 25 kB body for the same size (issue #14)."""

    def run(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql" or connection.pg_version < 140000:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT %s = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'",
                [method],
            )
            row = cursor.fetchone()
            if row and row[0]:
                cursor.execute(
                    "ALTER TABLE incidents_webhookreceipt ALTER COLUMN body "
                    f"SET COMPRESSION {method}"
                )

    return run


def _fillfactor(alerts: int, incidents: int):
    """Room left on each page, so that a re-sent alert's receive bookkeeping (in no index)
    is a HOT update in place (issue #14)."""

    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for table, percent in (("incidents_alert", alerts), ("incidents_incident", incidents)):
                schema_editor.execute(f"ALTER TABLE {table} SET (fillfactor = {percent})")

    return run


# Ingestion's repeat check as a PL/pgSQL function (issue #14): as a plain statement
# PostgreSQL spent more time planning it than running it, and a function keeps its plan
# for the session, also behind a transaction pooler. A group matches when its open
# incident carries the body's digest, is no less severe, its alerts stamped with the
# incident's last notification are exactly as many as the body's, and no orphan of the
# group waits to be adopted; only if all p_groups groups match are the alerts' receive
# bookkeeping and the incidents' last_notified_at moved to p_now (else nothing is
# written). Incidents are locked before alerts here, alerts before incidents in the full
# path: two deliveries of one group at once can deadlock, and alerts_ingest retries.
# To change it, add a migration with CREATE OR REPLACE FUNCTION.
REPEAT_APPLY = r"""
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
REPEAT_APPLY_DROP = (
    "DROP FUNCTION IF EXISTS incidents_repeat_apply(jsonb, integer, timestamptz, timestamptz)"
)


def _postgresql(sql: str):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("incidents", "0001_initial"),
        ("incidents", "0002_runbook_timeline_kinds"),
        ("incidents", "0003_timeline_kinds_actions_postmortems"),
        ("incidents", "0004_webhookreceipt_body_raw"),
        ("incidents", "0005_incident_is_drill"),
        ("incidents", "0006_timeline_kinds_registered"),
        ("incidents", "0007_append_only_triggers"),
        ("incidents", "0008_silence_permission"),
        ("incidents", "0009_ingest_repeat_digest"),
        ("incidents", "0010_similar_incident_indexes"),
        ("incidents", "0011_alert_receive_bookkeeping_hot"),
        ("incidents", "0012_repeat_apply_function"),
        ("incidents", "0013_verbose_names"),
        ("incidents", "0014_field_verbose_names"),
        ("incidents", "0015_append_only_truncate"),
    ]

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Incident",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("title", models.CharField(max_length=300, verbose_name="title")),
                (
                    "severity",
                    models.CharField(
                        choices=[
                            ("SEV1", "SEV1 (critical)"),
                            ("SEV2", "SEV2 (major)"),
                            ("SEV3", "SEV3 (minor)"),
                            ("SEV4", "SEV4 (informational)"),
                        ],
                        db_index=True,
                        max_length=4,
                        verbose_name="severity",
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("triggered", "Triggered"),
                            ("acknowledged", "Acknowledged"),
                            ("mitigated", "Mitigated"),
                            ("resolved", "Resolved"),
                        ],
                        db_index=True,
                        default="triggered",
                        max_length=16,
                        verbose_name="status",
                    ),
                ),
                ("grouping_key", models.CharField(max_length=1000, verbose_name="grouping key")),
                ("runbook", models.SlugField(blank=True, max_length=100, verbose_name="runbook")),
                (
                    "namespace",
                    models.CharField(blank=True, max_length=253, verbose_name="namespace"),
                ),
                (
                    "group_labels",
                    models.JSONField(blank=True, default=dict, verbose_name="group labels"),
                ),
                (
                    "started_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="started at"),
                ),
                ("triggered_at", models.DateTimeField(db_index=True, verbose_name="triggered at")),
                (
                    "acknowledged_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="acknowledged at"),
                ),
                (
                    "mitigated_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="mitigated at"),
                ),
                (
                    "resolved_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="resolved at"),
                ),
                (
                    "reopened_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="reopened at"),
                ),
                (
                    "reopen_count",
                    models.PositiveIntegerField(default=0, verbose_name="reopen count"),
                ),
                (
                    "last_alert_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="last alert at"),
                ),
                ("is_drill", models.BooleanField(db_index=True, default=False)),
                (
                    "alert_digest",
                    models.CharField(blank=True, default="", editable=False, max_length=32),
                ),
                ("last_notified_at", models.DateTimeField(blank=True, editable=False, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="created at")),
                ("updated_at", models.DateTimeField(auto_now=True, verbose_name="updated at")),
                (
                    "commander",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="commanded_incidents",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="commander",
                    ),
                ),
            ],
            options={
                "verbose_name": "incident",
                "verbose_name_plural": "incidents",
                "ordering": ["-triggered_at", "-id"],
                "permissions": [
                    ("acknowledge_incident", "Can acknowledge an incident"),
                    ("mitigate_incident", "Can mark an incident mitigated"),
                    ("resolve_incident", "Can resolve an incident"),
                    ("reopen_incident", "Can reopen a resolved incident"),
                    ("add_note", "Can add a note to an incident timeline"),
                    ("take_command", "Can take command of an incident nobody commands"),
                    ("assign_commander", "Can assign any user as incident commander"),
                    (
                        "silence_alerts",
                        "Can silence and unsilence an incident's alerts in Alertmanager",
                    ),
                ],
                "indexes": [
                    models.Index(
                        fields=["grouping_key", "-resolved_at"],
                        name="incidents_i_groupin_ac7463_idx",
                    ),
                    models.Index(fields=["runbook", "-id"], name="incident_runbook_newest"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status", "resolved"), _negated=True),
                        fields=("grouping_key",),
                        name="one_open_incident_per_grouping_key",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="Alert",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("fingerprint", models.CharField(max_length=64, verbose_name="fingerprint")),
                ("starts_at", models.DateTimeField(verbose_name="starts at")),
                ("alertname", models.CharField(max_length=200, verbose_name="alert name")),
                (
                    "status",
                    models.CharField(
                        choices=[("firing", "Firing"), ("resolved", "Resolved")],
                        max_length=8,
                        verbose_name="status",
                    ),
                ),
                ("severity", models.CharField(blank=True, max_length=32, verbose_name="severity")),
                ("labels", models.JSONField(default=dict, verbose_name="labels")),
                (
                    "annotations",
                    models.JSONField(blank=True, default=dict, verbose_name="annotations"),
                ),
                ("ends_at", models.DateTimeField(blank=True, null=True, verbose_name="ends at")),
                (
                    "generator_url",
                    models.URLField(blank=True, max_length=2000, verbose_name="generator URL"),
                ),
                ("grouping_key", models.CharField(max_length=1000, verbose_name="grouping key")),
                ("first_received_at", models.DateTimeField(verbose_name="first received at")),
                ("last_received_at", models.DateTimeField(verbose_name="last received at")),
                (
                    "receive_count",
                    models.PositiveIntegerField(default=1, verbose_name="receive count"),
                ),
                (
                    "incident",
                    models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="alerts",
                        to="incidents.incident",
                        verbose_name="incident",
                    ),
                ),
            ],
            options={
                "verbose_name": "alert",
                "verbose_name_plural": "alerts",
                "ordering": ["-starts_at", "id"],
                "indexes": [
                    models.Index(
                        fields=["incident", "status"], name="incidents_a_inciden_a38ac4_idx"
                    ),
                    models.Index(
                        condition=models.Q(("incident__isnull", True)),
                        fields=["grouping_key"],
                        name="alert_orphans_by_group",
                    ),
                    models.Index(
                        django.db.models.fields.json.KeyTransform("namespace", "labels"),
                        django.db.models.fields.json.KeyTransform("lws", "labels"),
                        models.F("incident"),
                        condition=models.Q(("labels__has_key", "lws")),
                        name="alert_label_lws",
                    ),
                    models.Index(
                        django.db.models.fields.json.KeyTransform("node", "labels"),
                        models.F("incident"),
                        condition=models.Q(("labels__has_key", "node")),
                        name="alert_label_node",
                    ),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("fingerprint", "starts_at"),
                        name="alert_unique_fingerprint_starts_at",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="TimelineEvent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(db_index=True, max_length=32, verbose_name="kind")),
                ("occurred_at", models.DateTimeField(db_index=True, verbose_name="occurred at")),
                (
                    "source",
                    models.CharField(default="system", max_length=32, verbose_name="source"),
                ),
                ("message", models.TextField(blank=True, verbose_name="message")),
                ("payload", models.JSONField(blank=True, default=dict, verbose_name="payload")),
                (
                    "actor",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="actor",
                    ),
                ),
                (
                    "incident",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="incidents.incident",
                        verbose_name="incident",
                    ),
                ),
            ],
            options={
                "verbose_name": "timeline event",
                "verbose_name_plural": "timeline events",
                "ordering": ["occurred_at", "id"],
                "indexes": [
                    models.Index(
                        fields=["incident", "occurred_at", "id"],
                        name="incidents_t_inciden_e6c116_idx",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="WebhookReceipt",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("received_at", models.DateTimeField(db_index=True, verbose_name="received at")),
                ("source", models.CharField(blank=True, max_length=100, verbose_name="source")),
                (
                    "remote_addr",
                    models.GenericIPAddressField(
                        blank=True, null=True, verbose_name="remote address"
                    ),
                ),
                (
                    "user_agent",
                    models.CharField(blank=True, max_length=300, verbose_name="user agent"),
                ),
                ("body", models.TextField(blank=True, verbose_name="body")),
                ("body_raw", models.BinaryField(blank=True, null=True)),
                ("body_bytes", models.PositiveIntegerField(default=0, verbose_name="body bytes")),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("accepted", "Accepted"),
                            ("rejected", "Rejected (dead letter)"),
                            ("failed", "Failed (server error, Alertmanager retries)"),
                            ("replayed", "Replayed"),
                        ],
                        db_index=True,
                        max_length=16,
                        verbose_name="outcome",
                    ),
                ),
                ("http_status", models.PositiveSmallIntegerField(verbose_name="HTTP status")),
                ("error", models.TextField(blank=True, verbose_name="error")),
                (
                    "error_field",
                    models.CharField(blank=True, max_length=200, verbose_name="error field"),
                ),
                (
                    "group_key",
                    models.CharField(blank=True, max_length=1000, verbose_name="group key"),
                ),
                ("alert_count", models.PositiveIntegerField(default=0, verbose_name="alert count")),
                (
                    "incident_ids",
                    models.JSONField(blank=True, default=list, verbose_name="incident IDs"),
                ),
                (
                    "replay_of",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="replays",
                        to="incidents.webhookreceipt",
                        verbose_name="replay of",
                    ),
                ),
            ],
            options={
                "verbose_name": "webhook receipt",
                "verbose_name_plural": "webhook receipts",
                "ordering": ["-received_at", "-id"],
                "permissions": [
                    ("replay_webhookreceipt", "Can replay a dead-lettered webhook body")
                ],
            },
        ),
        AppendOnlyTriggers("incidents_timelineevent"),
        AppendOnlyTriggers("incidents_webhookreceipt", delete=False, columns=RECEIPT_RECORD),
        # Storage settings, not no-ops: kept when squashing again.
        migrations.RunPython(
            _receipt_body_compression("lz4"), _receipt_body_compression("pglz"), elidable=False
        ),
        migrations.RunPython(_fillfactor(85, 90), _fillfactor(100, 100), elidable=False),
        migrations.RunPython(
            _postgresql(REPEAT_APPLY), _postgresql(REPEAT_APPLY_DROP), elidable=False
        ),
    ]
