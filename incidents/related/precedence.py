"""Which runbook leads over which, as the runbook catalogue declares it (`leads_over:`).

incidents does not know runbooks: RunbooksConfig.ready() registers the function that
answers. With none registered, no runbook leads over another and severity decides.
"""

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

LeadsOver = Callable[[str, str], bool]  # (runbook a, runbook b) -> a leads over b

_LEADS_OVER: list[LeadsOver] = []  # at most one


def lead_precedence_register(leads_over: LeadsOver) -> None:
    """Set the function that answers (the same one again is a no-op)."""
    if _LEADS_OVER and _LEADS_OVER[0] is not leads_over:
        raise ImproperlyConfigured("A related-incident precedence is already registered.")
    _LEADS_OVER[:] = [leads_over]


def runbook_leads_over(a: str, b: str) -> bool:
    """Whether runbook `a` is declared to lead over runbook `b`."""
    return bool(a and b and _LEADS_OVER and _LEADS_OVER[0](a, b))
