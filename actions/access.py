"""Can the console act on the cluster right now? Checked when a worker starts (logged) and
shown on the actions pages (cached), so a missing RBAC grant or an unreachable API is
found before an incident needs a fix, not during one."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.core.cache import cache
from django.utils.translation import gettext, ngettext

from actions.capture import config_revisions_capture_now
from actions.kinds import ActionError
from actions.rbac import missing_permissions
from console.liveness.heartbeat import consumed_queues
from console.queues import ACTIONS
from console.texts import StoredParts, render

log = logging.getLogger(__name__)
CACHE_KEY = "actions:kubernetes-access"
CACHE_SECONDS = 60


@dataclass(frozen=True)
class Access:
    ok: bool
    message: str  # English, for the worker's log
    missing: tuple[str, ...] = ()
    # What went wrong, so a page can say it in its viewer's language: "unreachable" (with
    # `detail`, Kubernetes' own words), "missing" (see `missing`), or "" when ok.
    problem: str = ""
    detail: str = ""
    detail_msg: StoredParts | None = None  # `detail` as parts, worded for the viewer

    @property
    def shown(self) -> str:
        """`message` in the viewer's language (the cached result is shared by all)."""
        if self.problem == "unreachable":
            return gettext("The console cannot reach Kubernetes: %(detail)s") % {
                "detail": render(self.detail_msg, fallback=self.detail)
            }
        if self.problem == "missing":
            count = len(self.missing)
            return ngettext(
                "The console's Kubernetes credentials lack %(count)s permission the actions "
                "need; grant it with deploy/k8s/rbac.yaml.",
                "The console's Kubernetes credentials lack %(count)s permissions the actions "
                "need; grant them with deploy/k8s/rbac.yaml.",
                count,
            ) % {"count": count}
        if self.ok:
            return gettext("Kubernetes reachable; every permission the actions need is granted.")
        return self.message


def kubernetes_access_check() -> Access:
    try:
        missing = missing_permissions()
    except ActionError as exc:
        return Access(
            False,
            f"The console cannot reach Kubernetes: {exc.message}",
            problem="unreachable",
            detail=exc.message,
            detail_msg=exc.said.stored,
        )
    if missing:
        return Access(
            False,
            f"The console's Kubernetes credentials lack {len(missing)} permission(s) the "
            "actions need; grant them with deploy/k8s/rbac.yaml.",
            tuple(missing),
            problem="missing",
        )
    return Access(True, "Kubernetes reachable; every permission the actions need is granted.")


def kubernetes_access() -> Access:
    """The check's result, cached for a minute so pages do not ask on every load."""
    found = cache.get(CACHE_KEY)
    if found is None:
        found = kubernetes_access_check()
        cache.set(CACHE_KEY, found, CACHE_SECONDS)
    return found


def log_access_at_worker_start(sender=None, **_kwargs) -> None:
    """celery worker_ready: say loudly what is missing (never stop the worker for it), and
    take a first look at the tracked ConfigMaps, so a router change made right after
    start-up already has a "before" to roll back to. Only on a worker that runs actions
    (`sender`, its consumer): the notifier has no Kubernetes credentials, by design."""
    if sender is not None and ACTIONS not in consumed_queues(sender):
        return
    access = kubernetes_access_check()
    if access.ok:
        try:
            config_revisions_capture_now(reason="first look at worker start")
        except Exception:  # the worker must start even if this fails
            log.exception("actions: first ConfigMap capture failed")
    if access.ok:
        log.info("actions: %s", access.message)
        return
    log.error("actions: %s", access.message)
    for line in access.missing:
        log.error("actions: missing permission: %s", line)
