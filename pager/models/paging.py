"""Pages to a person (or a team's channel) and their deliveries, one per contact
method tried, in the person's order: a failed method falls through to the next."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from console.encryption import EncryptedCharField


class ContactKind(models.TextChoices):
    NTFY = "ntfy", _("Push (ntfy)")
    PUSHOVER = "pushover", _("Push (Pushover)")
    GOTIFY = "gotify", _("Push (Gotify)")
    SMS = "sms", _("SMS (an apprise provider)")
    VOICE = "voice", _("Voice call (an apprise provider)")
    TELEGRAM = "telegram", _("Telegram")
    EMAIL = "email", _("Email")
    SLACK_DM = "slack_dm", _("Slack direct message")
    WEBHOOK = "webhook", _("Webhook")


class ContactMethod(models.Model):
    """`address` is what the method needs (an apprise URL for push, SMS, voice, Telegram
    and Slack; an address for email; a URL for a webhook); it often holds a token, so it
    is encrypted and never shown back in full."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="contact_methods"
    )
    position = models.PositiveSmallIntegerField(_("order"))
    kind = models.CharField(_("kind"), max_length=10, choices=ContactKind.choices)
    label = models.CharField(_("label"), max_length=100, blank=True)
    address = EncryptedCharField(_("address"), max_length=2000)
    enabled = models.BooleanField(_("enabled"), default=True)
    last_test_at = models.DateTimeField(null=True, blank=True)
    last_test_result = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user", "position"]
        verbose_name = _("contact method")
        verbose_name_plural = _("contact methods")
        constraints = [
            models.UniqueConstraint(fields=["user", "position"], name="pager_contact_position")
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.get_kind_display()} {self.label}".strip()


class PageStatus(models.TextChoices):
    PENDING = "pending", _("Not sent yet")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Every method failed")
    ACKNOWLEDGED = "acknowledged", _("Acknowledged")


class Page(models.Model):
    escalation = models.ForeignKey(
        "pager.Escalation", on_delete=models.CASCADE, related_name="pages"
    )
    incident = models.ForeignKey("incidents.Incident", on_delete=models.CASCADE, related_name="+")
    # Who: a person, or a team's channel (a notifications target).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    channel = models.ForeignKey(
        "notifications.Target", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The idempotency key: incident, episode, round, loop, step and recipient.
    key = models.CharField(max_length=200, unique=True)
    step_position = models.PositiveSmallIntegerField()
    loop = models.PositiveSmallIntegerField(default=0)
    repage_round = models.PositiveSmallIntegerField(default=0)
    due_at = models.DateTimeField()
    created_at = models.DateTimeField()
    # How late the step ran (seconds after due_at): a recovery says so on the timeline.
    late_seconds = models.FloatField(default=0)
    status = models.CharField(max_length=12, choices=PageStatus.choices, default=PageStatus.PENDING)
    first_sent_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    # The one-tap link is single use: set when it is used.
    ack_link_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "created_at"])]

    def __str__(self) -> str:
        return self.key


class DeliveryState(models.TextChoices):
    PENDING = "pending", _("Waiting")
    SENDING = "sending", _("Sending")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")
    # The worker died mid-send: not sent again through this method (it may have gone
    # out), the page falls through to the next one.
    UNKNOWN = "unknown", _("Outcome unknown")
    SKIPPED = "skipped", _("Not needed")


class PageDelivery(models.Model):
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="deliveries")
    method = models.ForeignKey(
        ContactMethod, null=True, on_delete=models.SET_NULL, related_name="deliveries"
    )
    kind = models.CharField(max_length=10, choices=ContactKind.choices)
    position = models.PositiveSmallIntegerField()
    state = models.CharField(
        max_length=8, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["page", "position"]
        constraints = [
            models.UniqueConstraint(fields=["page", "position"], name="pager_delivery_position")
        ]

    def __str__(self) -> str:
        return f"{self.page_id}#{self.position} {self.kind}: {self.state}"
