"""The /audit/ page's rows in the viewer's language: reasons written from a known
template (console/audit/reasons.py) and role names."""

from typing import Any

from django import template
from django.utils.translation import gettext

from console.audit.reasons import reason_shown
from console.templatetags.viewer import role_label

register = template.Library()


@register.filter
def audit_reason(reason: str) -> str:
    return reason_shown(reason)


@register.filter
def audit_roles(roles: Any) -> str:
    """A role change's side: "responder, commander" in the viewer's words."""
    names = [role_label(str(r)) for r in roles or []]
    return gettext(", ").join(names) if names else gettext("no role")
