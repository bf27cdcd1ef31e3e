"""The action kinds a runbook may name, registered by the app that runs them.

runbooks sits below actions and never imports it: ActionsConfig.ready() registers its
kinds here (actions/kinds/), and the catalogue (runbooks.parsing.runbook) validates each
`emergency_actions[].kind` and `recommended_actions` entry against them, in the order they
were registered. Django runs every AppConfig.ready() before the apps are ready, so the
catalogue, which needs the app registry anyway, never sees a half-filled list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from django.apps import apps
from django.core.exceptions import AppRegistryNotReady, ImproperlyConfigured

_KINDS: dict[str, str] = {}  # kind name -> the app that registered it
# A read-only, live view: names in registration order.
ACTION_KINDS: Mapping[str, str] = MappingProxyType(_KINDS)


def action_kinds_register(*, app: str, names: Iterable[str]) -> None:
    """Register the kinds `app` runs. The same kind again from the same app is a no-op;
    from another app it is a configuration error (two apps would run one kind)."""
    for name in names:
        known = _KINDS.get(name)
        if known is not None and known != app:
            raise ImproperlyConfigured(
                f"{app}: action kind {name!r} is already registered by {known}."
            )
        _KINDS[name] = app


def action_kind_names() -> tuple[str, ...]:
    """Every registered kind, in registration order. Only once the apps are ready: before
    that, a kind not yet registered would read as unknown."""
    if not apps.ready:
        raise AppRegistryNotReady("Action kinds are registered from AppConfig.ready().")
    return tuple(_KINDS)
