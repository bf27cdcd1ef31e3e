"""Which LeaderWorkerSets exist: one list call per namespace, through the actions'
Kubernetes client (its timeout and error translation)."""

from __future__ import annotations

from django.conf import settings

from actions.k8s import LWS_GROUP, LWS_PLURAL, LWS_VERSION
from actions.rbac import actions_namespace


def namespaces() -> list[str]:
    """settings READINESS_NAMESPACES, else the namespace the actions work in."""
    configured = settings.READINESS_NAMESPACES
    return list(configured) if configured else [actions_namespace()]


def lws_names(api, namespace: str) -> list[str]:
    """Names of the namespace's LeaderWorkerSets; raises the actions' ActionError."""
    listed = api.call(
        "list", "leaderworkersets", f"leaderworkersets in {namespace}",
        api.custom.list_namespaced_custom_object,
        LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL,
    )  # fmt: skip
    return sorted(
        str(item["metadata"]["name"])
        for item in listed.get("items") or []
        if isinstance(item, dict) and (item.get("metadata") or {}).get("name")
    )
