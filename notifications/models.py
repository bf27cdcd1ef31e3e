"""Where notifications go (Target), which events go where (Rule), and every attempt to
send one (Delivery: the page and the API read these)."""

from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import models
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from console.encryption import EncryptedCharField, EncryptedURLField
from console.outgoing import OutgoingRefused, check_url_form, url_check
from incidents.models import Severity

SLACK_HOSTS = ("hooks.slack.com", "hooks.slack-gov.com")
SECRET_MIN_CHARS = 16


class Event(models.TextChoices):
    """What the console notifies about. Stored values never change."""

    INCIDENT_OPENED = "incident_opened", gettext_lazy("Incident opened")
    # Firing again: a mitigated incident's alerts fire again, or a resolved one reopens.
    INCIDENT_REOPENED = "incident_reopened", gettext_lazy("Incident fired again or reopened")
    SEVERITY_RAISED = "severity_raised", gettext_lazy("Severity raised")
    COMMANDER_CHANGED = "commander_changed", gettext_lazy("Commander changed")
    INCIDENT_MITIGATED = "incident_mitigated", gettext_lazy("Incident mitigated")
    INCIDENT_RESOLVED = "incident_resolved", gettext_lazy("Incident resolved")
    APPROVAL_WANTED = "approval_wanted", gettext_lazy("Action awaiting approval")
    POSTMORTEM_IN_REVIEW = "postmortem_in_review", gettext_lazy("Postmortem in review")
    ACTION_ITEM_OVERDUE = "action_item_overdue", gettext_lazy("Action item overdue")
    TEST = "test", gettext_lazy("Test notification")


RULE_EVENTS = [(value, label) for value, label in Event.choices if value != Event.TEST]


class TargetKind(models.TextChoices):
    SLACK = "slack", gettext_lazy("Slack (incoming webhook)")
    WEBHOOK = "webhook", gettext_lazy("Webhook (JSON, HMAC-SHA256 signed)")
    EMAIL = "email", gettext_lazy("Email")


def split_list(text: str) -> list[str]:
    """Comma-, space- or newline-separated values, without blanks or repeats."""
    seen: dict[str, None] = {}
    for part in text.replace(",", " ").split():
        seen.setdefault(part.strip(), None)
    return list(seen)


class Target(models.Model):
    """One destination. `url` (a Slack webhook URL is itself a credential) and `secret`
    are written in the admin and never shown back: pages show `destination` only."""

    name = models.CharField(gettext_lazy("name"), max_length=100, unique=True)
    kind = models.CharField(gettext_lazy("kind"), max_length=16, choices=TargetKind.choices)
    enabled = models.BooleanField(gettext_lazy("enabled"), default=True)
    # Stored encrypted (console/encryption.py): a SELECT shows Fernet tokens only.
    url = EncryptedURLField(
        gettext_lazy("url"),
        max_length=2000,
        blank=True,
        help_text=gettext_lazy("Slack or webhook targets."),
    )
    secret = EncryptedCharField(
        gettext_lazy("secret"),
        max_length=200,
        blank=True,
        help_text=format_lazy(
            gettext_lazy("Webhook targets: the HMAC-SHA256 key, at least {} characters."),
            SECRET_MIN_CHARS,
        ),
    )
    recipients = models.TextField(
        gettext_lazy("recipients"),
        blank=True,
        help_text=gettext_lazy("Email targets: addresses separated by commas or new lines."),
    )
    # The language its messages and emails are written in (notifications/messages.py);
    # stored deliveries keep the words they were recorded with.
    language = models.CharField(
        gettext_lazy("language"),
        max_length=16,
        choices=settings.LANGUAGES,
        default=settings.LANGUAGE_CODE,
        help_text=gettext_lazy("The language of its messages and emails."),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=gettext_lazy("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=gettext_lazy("updated at"))

    class Meta:
        ordering = ["name"]
        verbose_name = gettext_lazy("target")
        verbose_name_plural = gettext_lazy("targets")

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
            errors["url"] = _("A Slack or webhook target needs its URL.")
        if self.kind == TargetKind.SLACK and self.url:
            parts = urlsplit(self.url)
            if parts.hostname not in SLACK_HOSTS or not parts.path.startswith("/services/"):
                errors["url"] = _(
                    "Paste the incoming webhook URL Slack gave you: "
                    "https://hooks.slack.com/services/T…/B…/…"
                )
        if self.kind in (TargetKind.SLACK, TargetKind.WEBHOOK) and "url" not in errors:
            # The guard (console/outgoing): no credentials in the URL, and for a webhook no
            # internal address among those its host resolves to. Sending checks again,
            # pinned to the address it connects to.
            try:
                (url_check if self.kind == TargetKind.WEBHOOK else check_url_form)(self.url)
            except OutgoingRefused as exc:
                errors["url"] = exc.translated()
        if self.kind == TargetKind.WEBHOOK and len(self.secret) < SECRET_MIN_CHARS:
            errors["secret"] = _(
                "A webhook target needs a signing secret of at least %(count)s "
                "characters (the receiver checks the signature with it)."
            ) % {"count": SECRET_MIN_CHARS}
        if self.kind == TargetKind.EMAIL:
            addresses = split_list(self.recipients)
            if not addresses:
                errors["recipients"] = _("An email target needs at least one address.")
            for address in addresses:
                try:
                    validate_email(address)
                except ValidationError:
                    errors["recipients"] = _("%(address)s is not an email address.") % {
                        "address": repr(address)
                    }
                    break
        if errors:
            raise ValidationError(errors)


class Rule(models.Model):
    """Send these events, for incidents in these namespaces and of these severities, to
    these targets. An empty list or field means "any"."""

    name = models.CharField(gettext_lazy("name"), max_length=100)
    enabled = models.BooleanField(gettext_lazy("enabled"), default=True)
    targets = models.ManyToManyField(
        Target, related_name="rules", verbose_name=gettext_lazy("targets")
    )
    events = models.JSONField(
        gettext_lazy("events"),
        default=list,
        blank=True,
        help_text=gettext_lazy("Empty: every event."),
    )
    severities = models.JSONField(
        gettext_lazy("severities"),
        default=list,
        blank=True,
        help_text=gettext_lazy("Empty: any severity."),
    )
    namespaces = models.CharField(
        gettext_lazy("namespaces"),
        max_length=1000,
        blank=True,
        help_text=gettext_lazy(
            "Namespaces separated by commas or spaces; shell patterns such as llm-* "
            "work. Empty: any namespace."
        ),
    )
    include_drills = models.BooleanField(
        gettext_lazy("include drills"),
        default=False,
        help_text=gettext_lazy("Also notify about drill incidents (rehearsals)."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = gettext_lazy("rule")
        verbose_name_plural = gettext_lazy("rules")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        known_events = {value for value, _ in RULE_EVENTS}
        if not isinstance(self.events, list) or set(self.events) - known_events:
            raise ValidationError({"events": _("Pick events from the list.")})
        if not isinstance(self.severities, list) or set(self.severities) - set(Severity.values):
            raise ValidationError({"severities": _("Pick severities from the list.")})

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
    PENDING = "pending", gettext_lazy("Not queued yet")
    QUEUED = "queued", gettext_lazy("Queued")
    RETRYING = "retrying", gettext_lazy("Retrying")
    SENT = "sent", gettext_lazy("Sent")
    FAILED = "failed", gettext_lazy("Failed")


class Delivery(models.Model):
    """One event for one target. `event_key` names the event (a timeline row, an action
    run's approval, a postmortem's review round, an item's overdue period), so a target
    hears of each once however many rules match or however often it is found again."""

    target = models.ForeignKey(
        Target,
        on_delete=models.PROTECT,
        related_name="deliveries",
        verbose_name=gettext_lazy("target"),
    )
    rule = models.ForeignKey(
        Rule,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="deliveries",
        verbose_name=gettext_lazy("rule"),
    )
    event = models.CharField(
        max_length=32, choices=Event.choices, verbose_name=gettext_lazy("event")
    )
    event_key = models.CharField(max_length=200, verbose_name=gettext_lazy("event key"))
    incident = models.ForeignKey(
        "incidents.Incident",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="notification_deliveries",
        verbose_name=gettext_lazy("incident"),
    )
    summary = models.CharField(max_length=500, verbose_name=gettext_lazy("summary"))
    # The message as the generic webhook receives it; Slack and email are rendered from it.
    body = models.JSONField(default=dict, verbose_name=gettext_lazy("body"))
    status = models.CharField(
        max_length=16,
        choices=DeliveryStatus.choices,
        default=DeliveryStatus.PENDING,
        verbose_name=gettext_lazy("status"),
    )
    attempts = models.PositiveSmallIntegerField(default=0, verbose_name=gettext_lazy("attempts"))
    last_error = models.TextField(blank=True, verbose_name=gettext_lazy("last error"))
    # What the console wrote in the text fields above, as message ids and parameters
    # (console/texts/): {field: parts}; worded in the reader's language when read.
    texts = models.JSONField(null=True, blank=True, verbose_name=gettext_lazy("texts"))
    created_at = models.DateTimeField(db_index=True, verbose_name=gettext_lazy("created at"))
    updated_at = models.DateTimeField(auto_now=True)
    last_attempt_at = models.DateTimeField(
        null=True, blank=True, verbose_name=gettext_lazy("last attempt at")
    )
    sent_at = models.DateTimeField(null=True, blank=True, verbose_name=gettext_lazy("sent at"))

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = gettext_lazy("delivery")
        verbose_name_plural = gettext_lazy("deliveries")
        constraints = [
            models.UniqueConstraint(
                fields=["target", "event_key"], name="notification_delivery_once_per_target"
            )
        ]
        indexes = [models.Index(fields=["status", "created_at"])]
        permissions = [("retry_delivery", gettext_lazy("Can send a failed notification again"))]

    def __str__(self) -> str:
        return f"#{self.pk} {self.event} → {self.target_id} ({self.status})"


class SeenOrigin(models.Model):
    """How people last reached the console (`scheme://host[:port]`), one row: the base of
    notification links when NOTIFY_CONSOLE_URL is not set (notifications/links.py). The
    web process writes it, the worker reads it, so it lives in the database."""

    origin = models.CharField(max_length=300)
    seen_at = models.DateTimeField()

    class Meta:
        verbose_name = gettext_lazy("seen console address")
        verbose_name_plural = gettext_lazy("seen console addresses")

    def __str__(self) -> str:
        return self.origin
