"""The retention setting, checked when the console starts (`manage.py check`): a value
the nightly run would refuse is reported at once, not at 3 a.m. in a worker's log."""

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from incidents.archive.services import MIN_DAYS


@register()
def retention_days_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    days = settings.RETENTION_RESOLVED_DAYS
    if not isinstance(days, int) or days < 0 or 0 < days < MIN_DAYS:
        return [
            Error(
                f"RETENTION_RESOLVED_DAYS is {days!r}: it must be 0 (keep everything) or at "
                f"least {MIN_DAYS} days, since Alertmanager may re-send a resolved group for a "
                "while.",
                hint="Set RETENTION_RESOLVED_DAYS=0, or a number of days such as 90.",
                id="incidents.E020",
            )
        ]
    return []
