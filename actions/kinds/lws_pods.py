"""LWS pod facts shared by restart_lws_group and cordon_node: labels, the group of a pod,
and the group's leader pod (`<lws>-<group>`, worker-index 0)."""

from __future__ import annotations

import re

from actions.kinds.base import ParamError, TargetNotFound
from console.texts import msg

NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"


def leader_name(lws: str, group: int) -> str:
    return f"{lws}-{group}"


def lws_group(pod: dict) -> tuple[str, int] | None:
    """(lws, group index) from the labels the LWS controller sets, or None."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    name, group = labels.get(NAME_LABEL), labels.get(GROUP_LABEL)
    if not name or group is None or not str(group).isdigit():
        return None
    return name, int(group)


def group_of_pod(api, namespace: str, lws: str, pod: str) -> int:
    """The group index of `pod` (leader or worker) of `lws`. A pod that is gone already
    (the alert outlived it) is resolved from its name, which LWS derives from the group."""
    try:
        found = lws_group(api.get_pod(namespace, pod))
    except TargetNotFound:
        match = re.fullmatch(rf"{re.escape(lws)}-(\d+)(?:-\d+)?", pod)
        if match is None:
            said = msg("actions.restart.pod_gone", pod=f"{namespace}/{pod}", lws=lws)
            raise TargetNotFound(said) from None
        return int(match.group(1))
    if found is None:
        raise ParamError("pod", msg("actions.param.not_lws_pod", pod=f"{namespace}/{pod}"))
    if found[0] != lws:
        said = msg("actions.param.other_lws", pod=f"{namespace}/{pod}", found=found[0], lws=lws)
        raise ParamError("pod", said)
    return found[1]


def terminating(pod: dict) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))
