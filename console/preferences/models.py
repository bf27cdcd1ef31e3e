"""What a user chose for how the console reads to them (console/viewer.py applies it)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class UserPreference(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="console_preference"
    )
    # Blank: follow the browser (Accept-Language).
    language = models.CharField(
        _("language"), max_length=16, blank=True, choices=settings.LANGUAGES
    )
    # Times in UTC instead of the browser's time zone (a postmortem quoting logs wants UTC).
    show_utc = models.BooleanField(_("show times in UTC"), default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("user preference")
        verbose_name_plural = _("user preferences")

    def __str__(self) -> str:
        return f"{self.user}: {self.language or 'browser'}{' UTC' if self.show_utc else ''}"
