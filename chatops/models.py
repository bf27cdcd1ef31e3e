"""Chat as a second surface of the console (issue 27): the installations (Workspace),
which channel each team's incidents go to (TeamChannel), who a chat user is in the
console (ChatIdentity), one thread per incident and installation (ChatThread), every
message the console sends (ChatPost, a delivery with retries) and every request chat
sends it (ChatInteraction, recorded once: retries and replays find it)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from console.encryption import EncryptedCharField, EncryptedURLField

SECRET_MIN_CHARS = 16


class Surface(models.TextChoices):
    SLACK = "slack", _("Slack")
    MATTERMOST = "mattermost", _("Mattermost")


def own_channel_default() -> list[str]:
    return ["SEV1", "SEV2"]


class Workspace(models.Model):
    """One installation: a Slack app in one Slack workspace, or a bot account with a
    slash command on one Mattermost server. The token and the secret are written in the
    admin and never shown back."""

    name = models.CharField(_("name"), max_length=100, unique=True)
    surface = models.CharField(_("surface"), max_length=16, choices=Surface.choices)
    enabled = models.BooleanField(_("enabled"), default=True)
    # Slack: its Web API (https://slack.com/api/); Mattermost: the server's address.
    api_url = models.URLField(
        _("API address"),
        max_length=500,
        help_text=_(
            "Slack: https://slack.com/api/. Mattermost: the server, https://chat.example.com."
        ),
    )
    bot_token = EncryptedCharField(_("bot token"), max_length=500)
    # Slack: the app's signing secret. Mattermost: the slash command's token; it also
    # keys the signature on the buttons' context.
    signing_secret = EncryptedCharField(
        _("signing secret"),
        max_length=200,
        help_text=_("Slack: the app's signing secret. Mattermost: the slash command's token."),
    )
    # Slack's team id (payloads from another workspace are refused) or Mattermost's team
    # id (channels are created in it).
    external_team = models.CharField(_("team id"), max_length=64, blank=True)
    # Where an incident goes when its team has no channel here.
    default_channel = models.CharField(_("default channel"), max_length=64)
    own_channel_severities = models.JSONField(
        _("own channel for"),
        default=own_channel_default,
        blank=True,
        help_text=_("Severities that get a channel of their own instead of a thread."),
    )
    channel_prefix = models.CharField(_("channel prefix"), max_length=20, default="inc-")
    include_drills = models.BooleanField(
        _("include drills"), default=False, help_text=_("Also thread drill incidents (rehearsals).")
    )
    language = models.CharField(
        _("language"), max_length=16, choices=settings.LANGUAGES, default=settings.LANGUAGE_CODE
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("chat workspace")
        verbose_name_plural = _("chat workspaces")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if len(self.signing_secret or "") < SECRET_MIN_CHARS:
            errors["signing_secret"] = gettext("At least %(count)s characters.") % {
                "count": SECRET_MIN_CHARS
            }
        if self.surface == Surface.MATTERMOST and not self.external_team:
            errors["external_team"] = gettext("Mattermost needs the team id channels are made in.")
        bad = [
            s
            for s in self.own_channel_severities or []
            if s not in ("SEV1", "SEV2", "SEV3", "SEV4")
        ]
        if bad:
            errors["own_channel_severities"] = gettext("Unknown severities: %(list)s.") % {
                "list": ", ".join(map(str, bad))
            }
        if errors:
            raise ValidationError(errors)


class TeamChannel(models.Model):
    """The channel a team's incidents are threaded in, per installation."""

    workspace = models.ForeignKey(
        Workspace,
        on_delete=models.CASCADE,
        related_name="team_channels",
        verbose_name=_("workspace"),
    )
    team = models.ForeignKey(
        "pager.Team", on_delete=models.CASCADE, related_name="chat_channels", verbose_name=_("team")
    )
    channel = models.CharField(_("channel id"), max_length=64)
    # Blank: the workspace's.
    language = models.CharField(
        _("language"), max_length=16, choices=settings.LANGUAGES, blank=True
    )

    class Meta:
        verbose_name = _("team channel")
        verbose_name_plural = _("team channels")
        constraints = [
            models.UniqueConstraint(fields=["workspace", "team"], name="chat_one_channel_per_team")
        ]

    def __str__(self) -> str:
        return f"{self.team} → {self.channel}"


class MappedBy(models.TextChoices):
    EMAIL = "email", _("Verified email")
    SSO = "sso", _("Single sign-on identity")
    ADMIN = "admin", _("Linked by an admin")
    NONE = "none", _("Not mapped")


class ChatIdentity(models.Model):
    """A chat user and the console user they act as (None: they may read, not act)."""

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="identities", verbose_name=_("workspace")
    )
    external_user = models.CharField(_("chat user id"), max_length=64)
    external_name = models.CharField(_("chat user name"), max_length=200, blank=True)
    # The address the chat says it verified ("" when it did not say).
    email = models.CharField(_("verified email"), max_length=254, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="chat_identities",
        verbose_name=_("console user"),
    )
    mapped_by = models.CharField(
        _("mapped by"), max_length=8, choices=MappedBy.choices, default=MappedBy.NONE
    )
    # When the chat's profile was last read (a mapping by email is checked again after
    # CHAT_IDENTITY_RECHECK_SECONDS; an admin's link is kept).
    checked_at = models.DateTimeField(_("checked at"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("chat identity")
        verbose_name_plural = _("chat identities")
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "external_user"], name="chat_identity_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.external_name or self.external_user} → {self.user or '-'}"


class ChatThread(models.Model):
    """Where an incident lives in one installation: a thread under its state message, in
    the team's channel or in a channel of its own."""

    incident = models.ForeignKey(
        "incidents.Incident", on_delete=models.CASCADE, related_name="chat_threads",
        verbose_name=_("incident"),
    )  # fmt: skip
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="threads", verbose_name=_("workspace")
    )
    channel = models.CharField(_("channel id"), max_length=64, blank=True)
    own_channel = models.BooleanField(_("own channel"), default=False)
    # The state message (Slack ts, Mattermost post id): the thread's root, edited in place.
    root = models.CharField(_("state message"), max_length=64, blank=True)
    language = models.CharField(_("language"), max_length=16, choices=settings.LANGUAGES)
    # The last state posted (a digest): an unchanged state is not edited again.
    state_digest = models.CharField(max_length=64, blank=True, editable=False)
    # A worker sending the thread's posts holds it until then (posts go out in order).
    busy_until = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("chat thread")
        verbose_name_plural = _("chat threads")
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "workspace"], name="chat_one_thread_per_incident"
            )
        ]

    def __str__(self) -> str:
        return f"#{self.incident_id} in {self.workspace}"


class PostKind(models.TextChoices):
    CHANNEL = "channel", _("Channel made")
    STATE = "state", _("State message")
    STATE_EDIT = "state_edit", _("State message edited")
    TIMELINE = "timeline", _("Timeline entry")
    REPLY = "reply", _("Answer to a person")
    VIEW = "view", _("Dialog")


class PostStatus(models.TextChoices):
    PENDING = "pending", _("Waiting")
    SENDING = "sending", _("Sending")
    RETRYING = "retrying", _("Will retry")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")


class ChatPost(models.Model):
    """One message to send (or edit), sent by the notifier queue with retries; a chat
    outage leaves rows here and never blocks the console. `key` makes a repeat the same
    row (one post per timeline entry, one state message per thread)."""

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="posts", verbose_name=_("workspace")
    )
    thread = models.ForeignKey(
        ChatThread, null=True, blank=True, on_delete=models.CASCADE, related_name="posts",
        verbose_name=_("thread"),
    )  # fmt: skip
    kind = models.CharField(_("kind"), max_length=12, choices=PostKind.choices)
    key = models.CharField(max_length=200)
    # What the surface's client is given (text, blocks or attachments, channel, user);
    # a reply's response URL is in `reply_url`, encrypted.
    payload = models.JSONField(default=dict)
    reply_url = EncryptedURLField(max_length=1000, blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=PostStatus.choices, default=PostStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    # When a worker claimed it (a claim older than the lease belongs to a dead worker).
    claimed_at = models.DateTimeField(null=True, blank=True, editable=False)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_error = models.TextField(_("last error"), blank=True)
    # What the chat answered: the message's ts or post id.
    external_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    sent_at = models.DateTimeField(_("sent at"), null=True, blank=True)

    class Meta:
        verbose_name = _("chat post")
        verbose_name_plural = _("chat posts")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="chat_post_key_unique")
        ]
        indexes = [
            models.Index(
                fields=["status", "next_attempt_at"],
                condition=~Q(status__in=["sent", "failed"]),
                name="chat_post_open",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.key} ({self.status})"


class InteractionKind(models.TextChoices):
    COMMAND = "command", _("Slash command")
    BUTTON = "button", _("Button")
    DIALOG = "dialog", _("Dialog submitted")


class InteractionStatus(models.TextChoices):
    RECEIVED = "received", _("Received")
    DONE = "done", _("Done")
    REFUSED = "refused", _("Refused")
    FAILED = "failed", _("Failed")


class ChatInteraction(models.Model):
    """One request from chat, verified and recorded before it is answered: its key (the
    trigger id Slack and Mattermost give every press, command and dialog, else a digest
    of the body) is unique, so a retry or a replay finds this row and changes nothing."""

    workspace = models.ForeignKey(
        Workspace,
        on_delete=models.CASCADE,
        related_name="interactions",
        verbose_name=_("workspace"),
    )
    key = models.CharField(max_length=200)
    kind = models.CharField(_("kind"), max_length=10, choices=InteractionKind.choices)
    action = models.CharField(_("action"), max_length=32)
    external_user = models.CharField(_("chat user id"), max_length=64)
    identity = models.ForeignKey(
        ChatIdentity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", verbose_name=_("acted as"),
    )  # fmt: skip
    incident = models.ForeignKey(
        "incidents.Incident", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", verbose_name=_("incident"),
    )  # fmt: skip
    # What was asked, parsed (arguments, channel, message); no secrets.
    request = models.JSONField(default=dict)
    reply_url = EncryptedURLField(max_length=1000, blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=InteractionStatus.choices,
        default=InteractionStatus.RECEIVED,
    )  # fmt: skip
    outcome = models.TextField(_("outcome"), blank=True)
    # Deliveries of the same request after the first (Slack's X-Slack-Retry-Num, a replay).
    repeats = models.PositiveIntegerField(_("repeats"), default=0)
    received_at = models.DateTimeField(_("received at"), db_index=True)
    done_at = models.DateTimeField(_("done at"), null=True, blank=True)

    class Meta:
        verbose_name = _("chat interaction")
        verbose_name_plural = _("chat interactions")
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="chat_interaction_key_unique")
        ]
        indexes = [
            models.Index(fields=["workspace", "external_user", "-received_at"], name="chat_by_user")
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.external_user} ({self.status})"
