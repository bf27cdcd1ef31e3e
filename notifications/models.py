"""Where notifications go (Target), which events go where (Rule), and every attempt to
send one (Delivery: the page and the API read these)."""

from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import models

from incidents.models import Severity

SLACK_HOSTS = ("hooks.slack.com", "hooks.slack-gov.com")
SECRET_MIN_CHARS = 16


class Event(models.TextChoices):
    """What the console notifies about. Stored values never change."""

    INCIDENT_OPENED = "incident_opened", "Incident opened or reopened"
    SEVERITY_RAISED = "severity_raised", "Severity raised"
    COMMANDER_CHANGED = "commander_changed", "Commander changed"
    INCIDENT_MITIGATED = "incident_mitigated", "Incident mitigated"
    INCIDENT_RESOLVED = "incident_resolved", "Incident resolved"
    APPROVAL_WANTED = "approval_wanted", "Action awaiting approval"
    POSTMORTEM_IN_REVIEW = "postmortem_in_review", "Postmortem in review"
    ACTION_ITEM_OVERDUE = "action_item_overdue", "Action item overdue"
    TEST = "test", "Test notification"


RULE_EVENTS = [(value, label) for value, label in Event.choices if value != Event.TEST]


class TargetKind(models.TextChoices):
    SLACK = "slack", "Slack (incoming webhook)"
    WEBHOOK = "webhook", "Webhook (JSON, HMAC-SHA256 signed)"
    EMAIL = "email", "Email"


def split_list(text: str) -> list[str]:
    """Comma-, space- or newline-separated values, without blanks or repeats."""
    seen: dict[str, None] = {}
    for part in text.replace(",", " ").split():
        seen.setdefault(part.strip(), None)
    return list(seen)


class Target(models.Model):
    """One destination. `url` (a Slack webhook URL is itself a credential) and `secret`
    are written in the admin and never shown back: pages show `destination` only."""

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=TargetKind.choices)
    enabled = models.BooleanField(default=True)
    url = models.URLField(max_length=2000, blank=True, help_text="Slack or webhook targets.")
    secret = models.CharField(
        max_length=200,
        blank=True,
        help_text=f"Webhook targets: the HMAC-SHA256 key, at least {SECRET_MIN_CHARS} characters.",
    )
    recipients = models.TextField(
        blank=True, help_text="Email targets: addresses separated by commas or new lines."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def destination(self) -> str:
        """Where it goes, with nothing secret: the host for Slack (the path is the
        credential), scheme, host and path for a webhook (no query or user info)."""
        if self.kind == TargetKind.EMAIL:
            return ", ".join(split_list(self.recipients))
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        if self.kind == TargetKind.SLACK:
            return f"Slack webhook at {host}"
        return f"{parts.scheme}://{host}{parts.path}"

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if self.kind in (TargetKind.SLACK, TargetKind.WEBHOOK) and not self.url:
            errors["url"] = "A Slack or webhook target needs its URL."
        if self.kind == TargetKind.SLACK and self.url:
            parts = urlsplit(self.url)
            if parts.hostname not in SLACK_HOSTS or not parts.path.startswith("/services/"):
                errors["url"] = (
                    "Paste the incoming webhook URL Slack gave you: "
                    "https://hooks.slack.com/services/T…/B…/…"
                )
        if self.kind == TargetKind.WEBHOOK and len(self.secret) < SECRET_MIN_CHARS:
            errors["secret"] = (
                f"A webhook target needs a signing secret of at least {SECRET_MIN_CHARS} "
                "characters (the receiver checks the signature with it)."
            )
        if self.kind == TargetKind.EMAIL:
            addresses = split_list(self.recipients)
            if not addresses:
                errors["recipients"] = "An email target needs at least one address."
            for address in addresses:
                try:
                    validate_email(address)
                except ValidationError:
                    errors["recipients"] = f"{address!r} is not an email address."
                    break
        if errors:
            raise ValidationError(errors)


class Rule(models.Model):
    """Send these events, for incidents in these namespaces and of these severities, to
    these targets. An empty list or field means "any"."""

    name = models.CharField(max_length=100)
    enabled = models.BooleanField(default=True)
    targets = models.ManyToManyField(Target, related_name="rules")
    events = models.JSONField(default=list, blank=True, help_text="Empty: every event.")
    severities = models.JSONField(default=list, blank=True, help_text="Empty: any severity.")
    namespaces = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Namespaces separated by commas or spaces; shell patterns such as llm-* "
        "work. Empty: any namespace.",
    )
    include_drills = models.BooleanField(
        default=False, help_text="Also notify about drill incidents (rehearsals)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        known_events = {value for value, _ in RULE_EVENTS}
        if not isinstance(self.events, list) or set(self.events) - known_events:
            raise ValidationError({"events": "Pick events from the list."})
        if not isinstance(self.severities, list) or set(self.severities) - set(Severity.values):
            raise ValidationError({"severities": "Pick severities from the list."})

    def matches(self, *, event: str, severity: str, namespace: str, is_drill: bool) -> bool:
        if is_drill and not self.include_drills:
            return False
        if self.events and event not in self.events:
            return False
        if self.severities and severity not in self.severities:
            return False
        patterns = split_list(self.namespaces)
        return not patterns or any(fnmatchcase(namespace, p) for p in patterns)


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Not queued yet"
    QUEUED = "queued", "Queued"
    RETRYING = "retrying", "Retrying"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class Delivery(models.Model):
    """One event for one target. `event_key` names the event (a timeline row, an action
    run's approval, a postmortem's review round, an item's overdue period), so a target
    hears of each once however many rules match or however often it is found again."""

    target = models.ForeignKey(Target, on_delete=models.PROTECT, related_name="deliveries")
    rule = models.ForeignKey(
        Rule, null=True, blank=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    event = models.CharField(max_length=32, choices=Event.choices)
    event_key = models.CharField(max_length=200)
    incident = models.ForeignKey(
        "incidents.Incident",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="notification_deliveries",
    )
    summary = models.CharField(max_length=500)
    # The message as the generic webhook receives it; Slack and email are rendered from it.
    body = models.JSONField(default=dict)
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["target", "event_key"], name="notification_delivery_once_per_target"
            )
        ]
        indexes = [models.Index(fields=["status", "created_at"])]
        permissions = [("retry_delivery", "Can send a failed notification again")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.event} → {self.target_id} ({self.status})"
