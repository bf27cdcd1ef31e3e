"""Deployments (namespace + LeaderWorkerSet), their verification runs with one stored
result per item, and the append-only history of sign-offs."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from console.append_only import AppendOnlyModel
from readiness.items import ITEMS


class ItemState(models.TextChoices):
    VERIFIED = "verified", _("Verified")
    SIGNED_OFF = "signed_off", _("Signed off")
    FAILING = "failing", _("Failing")
    EXPIRED = "expired", _("Expired")
    UNKNOWN = "unknown", _("Unknown")


# The titles are marked in readiness/items.py; the admin shows them translated.
ITEM_CHOICES = [(i.key, _(i.title)) for i in ITEMS]


class Deployment(models.Model):
    """One LeaderWorkerSet the console found in the cluster. Kept when it disappears
    (`present` False) so its sign-off history is not lost."""

    namespace = models.CharField(max_length=253, verbose_name=_("namespace"))
    lws = models.CharField(max_length=253, verbose_name=_("LWS"))
    first_seen_at = models.DateTimeField(verbose_name=_("first seen at"))
    last_seen_at = models.DateTimeField(verbose_name=_("last seen at"))
    present = models.BooleanField(default=True, verbose_name=_("present"))
    # The newest finished verification: the pages read it without asking Kubernetes.
    last_verification = models.ForeignKey(
        "Verification",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("last verification"),
    )

    class Meta:
        verbose_name = _("deployment")
        verbose_name_plural = _("deployments")
        ordering = ["namespace", "lws"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "lws"], name="readiness_one_per_lws")
        ]
        permissions = [
            ("verify_deployment", "Can run the checklist verification of a deployment"),
            ("signoff_deployment", "Can sign off checklist items of a deployment"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.lws}"


class VerificationStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


ACTIVE_VERIFICATION = (VerificationStatus.QUEUED, VerificationStatus.RUNNING)


class Verification(models.Model):
    """One pass over the verifiable items of a deployment, on the worker."""

    deployment = models.ForeignKey(
        Deployment, on_delete=models.CASCADE, related_name="verifications"
    )
    status = models.CharField(
        max_length=10, choices=VerificationStatus.choices, default=VerificationStatus.QUEUED
    )
    trigger = models.CharField(max_length=10, default="schedule")  # "schedule" | "button"
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    requested_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        verbose_name = _("verification")
        verbose_name_plural = _("verifications")
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["deployment"],
                condition=Q(status__in=[s.value for s in ACTIVE_VERIFICATION]),
                name="readiness_one_active_verification",
            )
        ]

    def __str__(self) -> str:
        return f"verification #{self.pk} of deployment #{self.deployment_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_VERIFICATION


class ItemCheck(AppendOnlyModel):
    """What one verification found for one item, with the evidence shown on the page."""

    verification = models.ForeignKey(Verification, on_delete=models.CASCADE, related_name="checks")
    item = models.CharField(max_length=32, choices=ITEM_CHOICES)
    state = models.CharField(max_length=10, choices=ItemState.choices)
    summary = models.CharField(max_length=500)
    evidence = models.JSONField(default=list, blank=True)  # lines a person reads
    # What the console wrote in the text fields above, as message ids and parameters
    # (console/texts/): {field: parts}; worded in the reader's language when read.
    texts = models.JSONField(null=True, blank=True, verbose_name=_("texts"))
    source = models.CharField(max_length=20)

    class Meta:
        verbose_name = _("item check")
        verbose_name_plural = _("item checks")
        constraints = [
            models.UniqueConstraint(fields=["verification", "item"], name="readiness_check_once")
        ]

    def __str__(self) -> str:
        return f"{self.item}: {self.state}"


class SignOffAction(models.TextChoices):
    SIGN_OFF = "sign_off", _("Signed off")
    REVOKE = "revoke", _("Revoked")


class SignOff(AppendOnlyModel):
    """A commander's word that an item holds, until `expires_on`; or its revocation. The
    newest row per (deployment, item) is the item's state; older rows are the history."""

    deployment = models.ForeignKey(
        Deployment, on_delete=models.PROTECT, related_name="signoffs", verbose_name=_("deployment")
    )
    item = models.CharField(max_length=32, choices=ITEM_CHOICES, verbose_name=_("item"))
    action = models.CharField(
        max_length=10, choices=SignOffAction.choices, verbose_name=_("action")
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("by")
    )
    at = models.DateTimeField(verbose_name=_("at"))
    note = models.CharField(max_length=1000, verbose_name=_("note"))
    expires_on = models.DateField(null=True, blank=True, verbose_name=_("expires on"))

    class Meta:
        verbose_name = _("sign-off")
        verbose_name_plural = _("sign-offs")
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["deployment", "item", "at"])]

    def __str__(self) -> str:
        return f"{self.item} {self.action} by {self.by_id} at {self.at:%Y-%m-%d}"
