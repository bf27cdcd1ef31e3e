"""Alerts, incidents, their append-only timeline, and the webhook receipt log."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.db.models.fields.json import KeyTransform
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from console.append_only import AppendOnlyModel
from incidents.timeline_kinds import timeline_kind_known, timeline_kind_label


class Severity(models.TextChoices):
    SEV1 = "SEV1", _("SEV1 (critical)")
    SEV2 = "SEV2", _("SEV2 (major)")
    SEV3 = "SEV3", _("SEV3 (minor)")
    SEV4 = "SEV4", _("SEV4 (informational)")


class IncidentStatus(models.TextChoices):
    TRIGGERED = "triggered", _("Triggered")
    ACKNOWLEDGED = "acknowledged", _("Acknowledged")
    MITIGATED = "mitigated", _("Mitigated")
    RESOLVED = "resolved", _("Resolved")


OPEN_STATUSES = (
    IncidentStatus.TRIGGERED,
    IncidentStatus.ACKNOWLEDGED,
    IncidentStatus.MITIGATED,
)


class Incident(models.Model):
    """Opened by alerts and never deleted: the append-only timeline would go with it, and
    the database refuses that cascade (see TimelineEvent)."""

    title = models.CharField(max_length=300, verbose_name=_("title"))
    severity = models.CharField(
        max_length=4, choices=Severity.choices, db_index=True, verbose_name=_("severity")
    )
    status = models.CharField(
        max_length=16,
        choices=IncidentStatus.choices,
        default=IncidentStatus.TRIGGERED,
        db_index=True,
        verbose_name=_("status"),
    )
    grouping_key = models.CharField(max_length=1000, verbose_name=_("grouping key"))
    runbook = models.SlugField(max_length=100, blank=True, db_index=True, verbose_name=_("runbook"))
    namespace = models.CharField(max_length=253, blank=True, verbose_name=_("namespace"))
    group_labels = models.JSONField(default=dict, blank=True, verbose_name=_("group labels"))
    commander = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="commanded_incidents",
        verbose_name=_("commander"),
    )
    # When the earliest alert of the group started (impact start), from Alertmanager.
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    # One timestamp per transition, set when it happens, so MTTA/MTTR are SQL aggregates.
    # triggered_at is when the console opened the incident (detection).
    triggered_at = models.DateTimeField(db_index=True, verbose_name=_("triggered at"))
    acknowledged_at = models.DateTimeField(null=True, blank=True, verbose_name=_("acknowledged at"))
    mitigated_at = models.DateTimeField(null=True, blank=True, verbose_name=_("mitigated at"))
    resolved_at = models.DateTimeField(null=True, blank=True, verbose_name=_("resolved at"))
    reopened_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reopened at"))
    reopen_count = models.PositiveIntegerField(default=0, verbose_name=_("reopen count"))
    last_alert_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last alert at"))
    # A rehearsal (chaos drill): flagged everywhere, left out of reports and MTTx by default.
    is_drill = models.BooleanField(default=False, db_index=True)
    # Seeded demo history (`seed_demo`): shown in reports and similar incidents with a
    # "demo" mark, never picked by the guard or the drills, removed by `seed_demo --reset`.
    is_demo = models.BooleanField(default=False, db_index=True)
    # Related incidents (incidents/related/): the incident that leads this one, when an
    # alert about the same target opened it within the window; who linked it (None: the
    # console) and when; merged_at once its alerts moved to the lead and it was resolved.
    related_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="related_incidents",
        verbose_name=_("part of"),
    )
    linked_at = models.DateTimeField(null=True, blank=True, verbose_name=_("linked at"))
    linked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("linked by"),
    )
    merged_at = models.DateTimeField(null=True, blank=True, verbose_name=_("merged at"))
    # Set while retention keeps this resolved incident's alerts and timeline in the
    # archive (incidents/archive/); the row itself stays, for whatever refers to it.
    archived_at = models.DateTimeField(null=True, blank=True, verbose_name=_("archived at"))
    # Kept by ingestion so that Alertmanager re-sending an unchanged group costs one
    # statement (incidents/ingest/write_postgres.py): a digest of the alerts of the last
    # notification applied in full, and when the group was last notified (those alerts'
    # last_received_at). "" when the alerts changed another way.
    alert_digest = models.CharField(max_length=32, blank=True, default="", editable=False)
    last_notified_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("incident")
        verbose_name_plural = _("incidents")
        ordering = ["-triggered_at", "-id"]
        constraints = [
            # One open incident per group, enforced by the database.
            models.UniqueConstraint(
                fields=["grouping_key"],
                condition=~Q(status="resolved"),
                name="one_open_incident_per_grouping_key",
            ),
        ]
        indexes = [
            models.Index(fields=["grouping_key", "-resolved_at"]),
            # Earlier incidents with a runbook, newest first (postmortems.similar.selectors).
            models.Index(fields=["runbook", "-id"], name="incident_runbook_newest"),
            # The list's order and each of its filters, so a page (and its capped count)
            # reads the newest matches off one index at a million incidents (issue 29).
            models.Index(fields=["-triggered_at", "-id"], name="incident_newest"),
            models.Index(
                fields=["-triggered_at", "-id"],
                condition=~Q(status="resolved"),
                name="incident_open_newest",
            ),
            models.Index(fields=["status", "-triggered_at", "-id"], name="incident_status_newest"),
            models.Index(
                fields=["severity", "-triggered_at", "-id"], name="incident_severity_newest"
            ),
            models.Index(
                fields=["runbook", "-triggered_at", "-id"], name="incident_runbook_triggered"
            ),
            # The reports' namespace menu (one probe per namespace) and the resolved
            # incidents without a postmortem, newest first (postmortems.reports).
            models.Index(fields=["namespace"], name="incident_namespace"),
            models.Index(
                fields=["-resolved_at", "-id"],
                condition=Q(status="resolved"),
                name="incident_resolved_newest",
            ),
        ]
        permissions = [
            ("acknowledge_incident", "Can acknowledge an incident"),
            ("declare_incident", "Can declare an incident by hand and page a team into one"),
            ("mitigate_incident", "Can mark an incident mitigated"),
            ("resolve_incident", "Can resolve an incident"),
            ("reopen_incident", "Can reopen a resolved incident"),
            ("add_note", "Can add a note to an incident timeline"),
            ("take_command", "Can take command of an incident nobody commands"),
            ("assign_commander", "Can assign any user as incident commander"),
            ("silence_alerts", "Can silence and unsilence an incident's alerts in Alertmanager"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.title}"

    @property
    def is_open(self) -> bool:
        return self.status != IncidentStatus.RESOLVED


class AlertStatus(models.TextChoices):
    FIRING = "firing", _("Firing")
    # Its own context: an alert "resolved" is not an incident resolved, in Chinese either.
    RESOLVED = "resolved", pgettext_lazy("alert status", "Resolved")


class AlertmanagerState(models.TextChoices):
    """An alert as Alertmanager's GET /api/v2/alerts last showed it (Alert.am_state)."""

    FIRING = "firing", pgettext_lazy("alertmanager state", "Firing")
    SILENCED = "silenced", pgettext_lazy("alertmanager state", "Silenced")
    INHIBITED = "inhibited", pgettext_lazy("alertmanager state", "Inhibited")
    RESOLVED = "resolved", pgettext_lazy("alertmanager state", "Resolved")
    GONE = "gone", pgettext_lazy("alertmanager state", "No longer listed")


class Alert(models.Model):
    """One firing episode of one Alertmanager alert: unique by (fingerprint, starts_at)."""

    fingerprint = models.CharField(max_length=64, verbose_name=_("fingerprint"))
    starts_at = models.DateTimeField(verbose_name=_("starts at"))
    alertname = models.CharField(max_length=200, verbose_name=_("alert name"))
    status = models.CharField(max_length=8, choices=AlertStatus.choices, verbose_name=_("status"))
    severity = models.CharField(max_length=32, blank=True, verbose_name=_("severity"))
    labels = models.JSONField(default=dict, verbose_name=_("labels"))
    annotations = models.JSONField(default=dict, blank=True, verbose_name=_("annotations"))
    ends_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ends at"))
    generator_url = models.URLField(max_length=2000, blank=True, verbose_name=_("generator URL"))
    grouping_key = models.CharField(max_length=1000, verbose_name=_("grouping key"))
    # No index of its own: the (incident, status) index below serves incident lookups,
    # and every index is paid for on each alert written during a storm.
    incident = models.ForeignKey(
        Incident,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="alerts",
        db_index=False,
        verbose_name=_("incident"),
    )
    first_received_at = models.DateTimeField(verbose_name=_("first received at"))
    last_received_at = models.DateTimeField(verbose_name=_("last received at"))
    receive_count = models.PositiveIntegerField(default=1, verbose_name=_("receive count"))
    # Alertmanager's own view of the alert, as last reconciled (incidents/alertmanager_view/):
    # a silenced alert gets no resolved notification, so the webhook alone never ends it.
    # Nullable: ingest's PostgreSQL insert names every column and sends these as NULL.
    am_state = models.CharField(  # noqa: DJ001 (NULL: never asked, unlike "")
        max_length=12,
        null=True,
        blank=True,
        choices=AlertmanagerState.choices,
        verbose_name=_("state in Alertmanager"),
    )
    am_silenced_by = models.JSONField(null=True, blank=True, verbose_name=_("silenced by"))
    am_inhibited_by = models.JSONField(null=True, blank=True, verbose_name=_("inhibited by"))
    # When the console last asked, when Alertmanager last answered about it, when a
    # replica last listed it, and why the last asking failed ("" or NULL: it did not).
    am_asked_at = models.DateTimeField(null=True, blank=True, editable=False)
    am_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    am_seen_at = models.DateTimeField(null=True, blank=True, editable=False)
    am_error = models.TextField(null=True, blank=True, editable=False)  # noqa: DJ001

    class Meta:
        verbose_name = _("alert")
        verbose_name_plural = _("alerts")
        ordering = ["-starts_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["fingerprint", "starts_at"], name="alert_unique_fingerprint_starts_at"
            )
        ]
        indexes = [
            models.Index(fields=["incident", "status"]),
            # Alerts that arrived already resolved wait here for their group's incident.
            # Not on last_received_at (a group has few orphans): a column no index holds
            # lets PostgreSQL update a re-sent alert's receive bookkeeping in place (HOT).
            models.Index(
                fields=["grouping_key"],
                condition=Q(incident__isnull=True),
                name="alert_orphans_by_group",
            ),
            # Earlier incidents about the same LWS or node, newest first (postmortems.similar);
            # partial, so alerts without those labels cost no index write.
            models.Index(
                KeyTransform("namespace", "labels"),
                KeyTransform("lws", "labels"),
                F("incident"),
                condition=Q(labels__has_key="lws"),
                name="alert_label_lws",
            ),
            models.Index(
                KeyTransform("node", "labels"),
                F("incident"),
                condition=Q(labels__has_key="node"),
                name="alert_label_node",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.alertname} {self.fingerprint} ({self.status})"


class TimelineEventType(models.TextChoices):
    """The kinds incidents itself writes. Other apps register theirs (with labels) in
    incidents.timeline_kinds from their AppConfig.ready(); the column has no choices."""

    INCIDENT_OPENED = "incident_opened", _("Incident opened")
    ALERT_FIRED = "alert_fired", _("Alert fired")
    ALERT_RESOLVED = "alert_resolved", _("Alert resolved")
    STATUS_CHANGED = "status_changed", _("Status changed")
    SEVERITY_CHANGED = "severity_changed", _("Severity changed")
    COMMANDER_CHANGED = "commander_changed", _("Commander changed")
    NOTE = "note", _("Note")
    WEBHOOK_REPLAYED = "webhook_replayed", _("Webhook replayed")
    RUNBOOK_CHANGED = "runbook_changed", _("Runbook changed")
    SILENCE_CREATED = "silence_created", _("Silence created")
    SILENCE_EXPIRED = "silence_expired", _("Silence expired")
    ARCHIVED = "archived", _("Archived")
    RESTORED = "restored", _("Restored from the archive")


class TimelineEvent(AppendOnlyModel):
    """Append-only: the application inserts rows and never updates or deletes them, and
    database triggers refuse UPDATE and DELETE (console.append_only). So an incident
    with a timeline cannot be deleted either (the cascade is refused): incidents are
    never deleted, and a user who acted on one is deactivated rather than deleted."""

    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, related_name="events", verbose_name=_("incident")
    )
    # Registered kinds only (incidents.timeline_kinds), checked when an event is appended.
    kind = models.CharField(max_length=32, db_index=True, verbose_name=_("kind"))
    occurred_at = models.DateTimeField(db_index=True, verbose_name=_("occurred at"))
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # SET_NULL would be an UPDATE, which the trigger refuses
        related_name="+",
        verbose_name=_("actor"),
    )
    # "alertmanager" / "system" when there is no human actor.
    source = models.CharField(max_length=32, default="system", verbose_name=_("source"))
    message = models.TextField(blank=True, verbose_name=_("message"))
    payload = models.JSONField(default=dict, blank=True, verbose_name=_("payload"))

    class Meta:
        verbose_name = _("timeline event")
        verbose_name_plural = _("timeline events")
        ordering = ["occurred_at", "id"]
        indexes = [models.Index(fields=["incident", "occurred_at", "id"])]

    def __str__(self) -> str:
        return f"{self.occurred_at:%Y-%m-%d %H:%M:%S} {self.kind}"

    def get_kind_display(self) -> str:
        return timeline_kind_label(self.kind)

    def clean(self) -> None:
        if not timeline_kind_known(self.kind):
            raise ValidationError({"kind": f"{self.kind!r} is not a registered timeline kind."})


class ReceiptOutcome(models.TextChoices):
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected (dead letter)")
    FAILED = "failed", _("Failed (server error, Alertmanager retries)")
    REPLAYED = "replayed", _("Replayed")


class WebhookReceipt(models.Model):
    """Every webhook body we were handed, with what became of it. A receipt is never
    rewritten (a replay is a new receipt): a database trigger refuses an UPDATE of any
    column but `replay_of`, which becomes NULL when the receipt it replayed is pruned.
    Receipts past retention are deleted (webhook_receipts_prune)."""

    received_at = models.DateTimeField(db_index=True, verbose_name=_("received at"))
    source = models.CharField(max_length=100, blank=True, verbose_name=_("source"))
    remote_addr = models.GenericIPAddressField(
        null=True, blank=True, verbose_name=_("remote address")
    )
    user_agent = models.CharField(max_length=300, blank=True, verbose_name=_("user agent"))
    body = models.TextField(blank=True, verbose_name=_("body"))
    # The bytes as received when they are not storable text (not UTF-8, or holding a
    # NUL, which PostgreSQL text refuses); `body` is empty then.
    body_raw = models.BinaryField(null=True, blank=True)
    body_bytes = models.PositiveIntegerField(default=0, verbose_name=_("body bytes"))
    outcome = models.CharField(
        max_length=16, choices=ReceiptOutcome.choices, db_index=True, verbose_name=_("outcome")
    )
    http_status = models.PositiveSmallIntegerField(verbose_name=_("HTTP status"))
    error = models.TextField(blank=True, verbose_name=_("error"))
    error_field = models.CharField(max_length=200, blank=True, verbose_name=_("error field"))
    group_key = models.CharField(max_length=1000, blank=True, verbose_name=_("group key"))
    alert_count = models.PositiveIntegerField(default=0, verbose_name=_("alert count"))
    incident_ids = models.JSONField(default=list, blank=True, verbose_name=_("incident IDs"))
    replay_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replays",
        verbose_name=_("replay of"),
    )

    class Meta:
        verbose_name = _("webhook receipt")
        verbose_name_plural = _("webhook receipts")
        ordering = ["-received_at", "-id"]
        permissions = [("replay_webhookreceipt", "Can replay a dead-lettered webhook body")]
        indexes = [
            # The receipt log's "dead letters", newest first: off this index, where the
            # received_at one would read every accepted receipt to find a few dead ones.
            models.Index(
                fields=["-received_at", "-id"],
                condition=Q(outcome__in=["rejected", "failed"]),
                name="receipt_dead_newest",
            ),
        ]

    def __str__(self) -> str:
        return f"receipt {self.pk} {self.outcome} {self.received_at:%Y-%m-%d %H:%M:%S}"

    @property
    def raw_bytes(self) -> bytes:
        """The body exactly as received."""
        if self.body_raw is not None:
            return bytes(self.body_raw)
        return self.body.encode("utf-8")


# The archive's models live in their own module; imported here so the app registry finds them.
from incidents.archive.models import ArchiveBatch, ArchiveMethod, IncidentArchive  # noqa: E402

__all__ = [
    "Alert",
    "AlertStatus",
    "AlertmanagerState",
    "ArchiveBatch",
    "ArchiveMethod",
    "Incident",
    "IncidentArchive",
    "IncidentStatus",
    "ReceiptOutcome",
    "Severity",
    "TimelineEvent",
    "TimelineEventType",
    "WebhookReceipt",
]
