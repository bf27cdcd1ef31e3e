"""API tokens: django-rest-knox's token (a SHA-512 digest of the key, never the key,
and an expiry), with a plain id to name one by and the client it was made for.
settings.KNOX_TOKEN_MODEL points knox here."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from knox.models import AbstractAuthToken
from knox.settings import CONSTANTS

CLIENT_MAX = 64


class ApiToken(AbstractAuthToken):
    # knox keys its table by the digest; a small id is what people and URLs name.
    id = models.BigAutoField(primary_key=True)
    digest = models.CharField(max_length=CONSTANTS.DIGEST_LENGTH, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="auth_token_set",  # the name knox reads
        verbose_name=_("user"),
    )
    client = models.CharField(
        max_length=CLIENT_MAX,
        blank=True,
        help_text=_("What the token is for, e.g. grafana or ci."),
        verbose_name=_("client"),
    )
    created = models.DateTimeField(auto_now_add=True, verbose_name=_("created"))
    expiry = models.DateTimeField(null=True, blank=True, verbose_name=_("expires"))

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ("-created", "-id")

    def __str__(self) -> str:
        # Never the digest: it is as good as a password hash.
        return f"#{self.pk} {self.user} {self.client}".rstrip()
