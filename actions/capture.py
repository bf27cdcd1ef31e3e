"""The periodic look at the tracked ConfigMaps (beat, and a worker's first look at start):
keep their history current (actions/revisions.py) and, for a change the console did not
make, start a guard window (actions/guard/services.py)."""

from __future__ import annotations

import logging

from actions.guard.services import guard_watch_start_for_revision
from actions.k8s import KubeApi, kube_api
from actions.kinds import ActionError
from actions.revisions import config_revision_store, configmap_snapshot, tracked_configmaps

log = logging.getLogger(__name__)


def config_revisions_capture(
    *, api: KubeApi, reason: str = "periodic capture", guard: bool = False
) -> int:
    """Capture every tracked ConfigMap; returns how many revisions were new. With `guard`
    (the periodic capture), a change the console did not make starts a guard window."""
    stored = 0
    for namespace, name in tracked_configmaps():
        try:
            snap = configmap_snapshot(api, namespace, name)
        except ActionError as exc:
            log.warning("cannot capture ConfigMap %s/%s: %s", namespace, name, exc)
            continue
        row = config_revision_store(
            namespace=namespace,
            name=name,
            data=snap.state.get("data", {}),
            resource_version=snap.resource_version,
            reason=reason,
        )
        stored += row is not None
        if row is not None and guard:
            guard_watch_start_for_revision(revision=row)
    return stored


def config_revisions_capture_now(reason: str = "periodic capture", *, guard: bool = False) -> int:
    """Beat: keep the tracked ConfigMaps' history current (no-op without Kubernetes);
    with `guard`, a change the console did not make starts a guard window."""
    try:
        api = kube_api()
    except ActionError as exc:
        log.info("not capturing ConfigMaps: %s", exc.message)
        return 0
    # No transaction around it: each revision is one insert, and HTTP reads must not hold
    # SQLite's write lock.
    return config_revisions_capture(api=api, reason=reason, guard=guard)
