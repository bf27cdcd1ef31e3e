"""Is a LeaderWorkerSet a drill target? Only one labelled so in Kubernetes: a drill never
runs against an unlabelled target. Asked when a drill is planned and started (services)
and again by the worker just before it injects the fault (execution)."""

from __future__ import annotations

from actions.k8s import kube_api
from actions.kinds import ActionError
from console.errors import DomainError
from drills.models import DRILL_LABEL
from drills.texts import NOT_A_TARGET, TARGET_UNCHECKED


def drill_target_check(*, namespace: str, lws: str) -> dict[str, str]:
    """Read the LeaderWorkerSet from Kubernetes and refuse it unless it carries the drill
    label. Returns the labels read (evidence)."""
    try:
        obj = kube_api().get_lws(namespace, lws)
    except ActionError as exc:
        raise DomainError(
            TARGET_UNCHECKED,
            code="unavailable",
            params={"target": f"{namespace}/{lws}", "error": exc},
        ) from exc
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(DRILL_LABEL) != "true":
        raise DomainError(
            NOT_A_TARGET,
            code="not_a_drill_target",
            params={"target": f"{namespace}/{lws}", "label": DRILL_LABEL},
        )
    return labels
