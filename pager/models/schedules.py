"""On-call schedules: layers of rotations in the schedule's own time zone, overrides
(including "take this shift" and accepted swaps), an optional imported iCal calendar,
and each person's pager profile (time zone, feed key). The arithmetic is in
pager/schedules/."""

import secrets
import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from console.encryption import EncryptedURLField


def feed_key() -> str:
    return secrets.token_urlsafe(24)


def zone_validate(name: str) -> None:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(_("Unknown time zone: %(name)s"), params={"name": name}) from None


class Schedule(models.Model):
    team = models.ForeignKey(
        "pager.Team", on_delete=models.CASCADE, related_name="schedules", verbose_name=_("team")
    )
    slug = models.SlugField(_("slug"), max_length=64, unique=True)
    name = models.CharField(_("name"), max_length=200)
    time_zone = models.CharField(
        _("time zone"), max_length=64, default="UTC", validators=[zone_validate]
    )
    # An iCal calendar read as the lowest layer: a URL re-read by beat (through the
    # outgoing guard; the URL often carries a secret, so it is encrypted) or an upload.
    ical_url = EncryptedURLField(_("iCal URL"), max_length=2000, blank=True)
    ical_text = models.TextField(_("iCal calendar"), blank=True)
    ical_refresh_minutes = models.PositiveIntegerField(_("re-read every (minutes)"), default=60)
    ical_fetched_at = models.DateTimeField(_("iCal read at"), null=True, blank=True)
    ical_error = models.CharField(_("iCal error"), max_length=500, blank=True)
    # The export feed's secret (/pager/feeds/schedule/<key>.ics); rotating it revokes
    # every subscription.
    feed_key = models.CharField(max_length=64, unique=True, default=feed_key, editable=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["team", "name"]
        verbose_name = _("schedule")
        verbose_name_plural = _("schedules")

    def __str__(self) -> str:
        return self.name


class Frequency(models.TextChoices):
    DAILY = "daily", _("Daily")
    WEEKLY = "weekly", _("Weekly")
    CUSTOM = "custom", _("Custom (shift length in hours)")


class Rotation(models.Model):
    """One layer. Shifts start at `starts_at` (a wall-clock time in the schedule's zone)
    and hand off every `interval` days or weeks at the same wall-clock time, or every
    `shift_hours` hours (custom); members take turns in `position` order. A higher
    `priority` layer covers a lower one wherever it has someone on call. Restrictions
    keep a layer to some weekdays and hours (e.g. Monday to Friday, 09:00-18:00)."""

    schedule = models.ForeignKey(
        Schedule, on_delete=models.CASCADE, related_name="rotations", verbose_name=_("schedule")
    )
    name = models.CharField(_("name"), max_length=200)
    priority = models.PositiveSmallIntegerField(_("priority"), default=0)
    frequency = models.CharField(
        _("frequency"), max_length=8, choices=Frequency.choices, default=Frequency.WEEKLY
    )
    interval = models.PositiveSmallIntegerField(_("every"), default=1)
    shift_hours = models.PositiveSmallIntegerField(_("shift length (hours)"), null=True, blank=True)
    # Naive: a wall-clock date and time in the schedule's zone (the first handoff).
    starts_at = models.DateTimeField(_("first handoff (local)"))
    ends_at = models.DateTimeField(_("ends (local)"), null=True, blank=True)
    # 0 = Monday ... 6 = Sunday; empty: every day.
    restrict_weekdays = models.JSONField(_("only on weekdays"), default=list, blank=True)
    restrict_start = models.TimeField(_("only from"), null=True, blank=True)
    restrict_end = models.TimeField(_("only until"), null=True, blank=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="pager.RotationMember", related_name="+"
    )

    class Meta:
        ordering = ["schedule", "-priority", "pk"]
        verbose_name = _("rotation")
        verbose_name_plural = _("rotations")

    def __str__(self) -> str:
        return f"{self.schedule}: {self.name}"

    def clean(self) -> None:
        if self.frequency == Frequency.CUSTOM and not self.shift_hours:
            raise ValidationError(_("A custom rotation needs a shift length in hours."))
        if (self.restrict_start is None) != (self.restrict_end is None):
            raise ValidationError(_("Set both ends of the hours a rotation is restricted to."))
        if any(day not in range(7) for day in self.restrict_weekdays or []):
            raise ValidationError(_("Weekdays are 0 (Monday) to 6 (Sunday)."))


class RotationMember(models.Model):
    rotation = models.ForeignKey(Rotation, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(_("position"))

    class Meta:
        ordering = ["rotation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["rotation", "position"], name="pager_rotation_position")
        ]

    def __str__(self) -> str:
        return f"{self.rotation_id}#{self.position}"


class OverrideSource(models.TextChoices):
    OVERRIDE = "override", _("Override")
    TAKE = "take", _("Took the shift")
    SWAP = "swap", _("Swap")


class Override(models.Model):
    """`user` is on call from `starts_at` to `ends_at`, above every layer."""

    schedule = models.ForeignKey(
        Schedule, on_delete=models.CASCADE, related_name="overrides", verbose_name=_("schedule")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("person"),
    )
    starts_at = models.DateTimeField(_("starts at"))
    ends_at = models.DateTimeField(_("ends at"))
    source = models.CharField(
        _("source"), max_length=8, choices=OverrideSource.choices, default=OverrideSource.OVERRIDE
    )
    # Whose shift it covered (take and swap), for the calendar and the audit.
    replaces = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("covers for"),
    )
    reason = models.CharField(_("reason"), max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    cancelled_at = models.DateTimeField(_("cancelled at"), null=True, blank=True)

    class Meta:
        ordering = ["schedule", "starts_at"]
        verbose_name = _("override")
        verbose_name_plural = _("overrides")
        indexes = [models.Index(fields=["schedule", "starts_at", "ends_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="pager_override_order"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.starts_at:%Y-%m-%d %H:%M}-{self.ends_at:%H:%M}"


class SwapState(models.TextChoices):
    OPEN = "open", _("Asking")
    ACCEPTED = "accepted", _("Accepted")
    CANCELLED = "cancelled", _("Cancelled")


class ShiftSwap(models.Model):
    """`requester` asks someone to cover `starts_at`..`ends_at`; when `taker` accepts, an
    Override (source swap) puts the taker on call for it."""

    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="swaps")
    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    starts_at = models.DateTimeField(_("starts at"))
    ends_at = models.DateTimeField(_("ends at"))
    note = models.CharField(_("note"), max_length=500, blank=True)
    state = models.CharField(max_length=10, choices=SwapState.choices, default=SwapState.OPEN)
    taker = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    override = models.OneToOneField(
        Override, null=True, blank=True, on_delete=models.SET_NULL, related_name="swap"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("shift swap")
        verbose_name_plural = _("shift swaps")

    def __str__(self) -> str:
        return f"swap {self.pk}: {self.state}"


class PagerProfile(models.Model):
    """A person's pager settings: the zone their shifts are shown in and their feed key."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pager_profile"
    )
    time_zone = models.CharField(
        _("time zone"), max_length=64, default="UTC", validators=[zone_validate]
    )
    feed_key = models.CharField(max_length=64, unique=True, default=feed_key, editable=False)

    class Meta:
        verbose_name = _("pager profile")
        verbose_name_plural = _("pager profiles")

    def __str__(self) -> str:
        return f"pager profile of {self.user_id}"
