"""Each user's username key (console/usernames/keys.py): unique, so two accounts whose names
only look different (`admin`, `ADMIN` in full-width letters) cannot both exist."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class UsernameKey(models.Model):
    """Kept by signals on every save that may change a username. A user without a row
    is one whose name already collided when the keys were first filled (that fill
    logs them): they keep their account until an admin renames one of the two."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="username_key",
        verbose_name=_("user"),
    )
    key = models.CharField(max_length=600, unique=True, verbose_name=_("username key"))

    class Meta:
        verbose_name = _("username key")
        verbose_name_plural = _("username keys")

    def __str__(self) -> str:
        return self.key
