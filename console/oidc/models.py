"""The link between an identity provider's account and a console user (console/oidc/backends.py)."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class OidcIdentity(models.Model):
    """The identity provider's account (issuer + subject) a console user signs in as.
    Only users made by a sign-in have one; their roles follow the provider's groups."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="oidc_identity",
        verbose_name=_("user"),
    )
    issuer = models.CharField(max_length=255, verbose_name=_("issuer"))
    subject = models.CharField(max_length=255, verbose_name=_("subject"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created at"))

    class Meta:
        # "Oidc identitys" otherwise.
        verbose_name = _("single sign-on identity")
        verbose_name_plural = _("single sign-on identities")
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="console_oidc_identity_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} @ {self.issuer}"
