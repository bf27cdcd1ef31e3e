"""ConfigMap history that Kubernetes does not keep: we store the data whenever we see it
change (before and after each of our writes, and every ACTIONS_CONFIG_CAPTURE_SECONDS
from Celery beat: actions/capture.py), and rollback_router_config restores one of these
revisions.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_noop

from actions import texts  # noqa: F401  (registry: the ids below)
from actions.kinds import KINDS, ParamError, Revision
from actions.models import ConfigRevision
from console.texts import Msg, msg, texts_register
from console.texts.recognise import recognise, reworded

# Why a revision was stored. `reason` is a column of text, written in English by the
# capture (actions/capture.py, access.py), the worker (execution.py) and the preview
# (preview.py) in these shapes; `revision_reason` recognises them when the revision is
# shown, so each reader sees their language (the data JSON is the config: no room there).
REASONS = {
    "actions.revision.reason.before_run": gettext_noop("before run #%(run)s"),
    "actions.revision.reason.after_run": gettext_noop("after run #%(run)s"),
    "actions.revision.reason.periodic": gettext_noop("periodic capture"),
    "actions.revision.reason.first_look": gettext_noop("first look at worker start"),
    "actions.revision.reason.preview": gettext_noop("seen at preview of %(kind)s"),
}
texts_register(
    {
        **REASONS,
        # A revision as a plan names it: its number and why it was stored.
        "actions.revision.label": gettext_noop("r%(id)s: %(reason)s"),
    }
)


def revision_reason(reason: str) -> Msg | None:
    """The parts of a reason of a known shape; None for any other text (shown as it is)."""
    return recognise(reason, REASONS)


def revision_reason_text(reason: str) -> str:
    """`reason` in the active language."""
    return reworded(reason, REASONS)


CONFIGMAP_KINDS = ("rollback_router_config", "update_gateway_limits")


def tracked_configmaps() -> list[tuple[str, str]]:
    """settings ACTIONS_TRACKED_CONFIGMAPS: "namespace/name" strings."""
    out = []
    for item in settings.ACTIONS_TRACKED_CONFIGMAPS:
        namespace, _, name = item.partition("/")
        out.append((namespace, name))
    return out


def config_revision_store(
    *, namespace: str, name: str, data: dict, resource_version: str, reason: str, run=None
) -> ConfigRevision | None:
    """Store `data` as a new revision unless it equals the latest one; returns the new row."""
    latest = ConfigRevision.objects.filter(namespace=namespace, name=name).first()
    if latest is not None and latest.data == data:
        return None
    return ConfigRevision.objects.create(
        namespace=namespace,
        name=name,
        data=data,
        resource_version=resource_version or "",
        captured_at=timezone.now(),
        reason=reason[:200],
        run=run,
    )


def configmap_snapshot(api, namespace: str, name: str):
    """The ConfigMap's whole data, read the way the rollback kind reads it."""
    kind = KINDS["rollback_router_config"]
    params = kind.clean({"namespace": namespace, "configmap": name, "revision": "previous"})
    return kind.read(api, params)


def config_seen(api, params: dict, *, reason: str, run=None, snap=None) -> ConfigRevision | None:
    """Store the ConfigMap a run is about to change, as it is now (before planning, so a
    rollback's "before_incident" compares against the real current config). `snap` is a
    read already made of the whole data (the rollback kind's own), saving a second one."""
    namespace, name = params["namespace"], params["configmap"]
    if snap is None or "data" not in snap.state:
        snap = configmap_snapshot(api, namespace, name)
    return config_revision_store(
        namespace=namespace,
        name=name,
        data=snap.state.get("data", {}),
        resource_version=snap.resource_version,
        reason=reason,
        run=run,
    )


def _as_revision(row: ConfigRevision) -> Revision:
    # The kind adds when it was captured.
    label = msg(
        "actions.revision.label", id=row.pk, reason=revision_reason(row.reason) or row.reason
    )
    return Revision(id=row.pk, label=label, data=row.data, captured_at=row.captured_at)


def revision_lookup(
    namespace: str, name: str, spec: str, incident_started_at: datetime | None
) -> Revision:
    """Resolve a revision spec for rollback_router_config.

    "before_incident": the newest revision seen before the incident started whose data
    differs from the newest revision (the config as it is now): the config that a change
    just before the incident replaced. "previous": the newest revision that differs from
    the current one. Anything else is a revision id.
    """
    rows = ConfigRevision.objects.filter(namespace=namespace, name=name)
    latest = rows.first()
    spec = str(spec)
    if spec in ("before_incident", "previous"):
        if latest is None:
            raise ParamError("revision", msg("actions.revision.none", where=f"{namespace}/{name}"))
        candidates = rows.exclude(pk=latest.pk)
        if spec == "before_incident" and incident_started_at is not None:
            candidates = candidates.filter(captured_at__lte=incident_started_at)
        for row in candidates.iterator():
            if row.data != latest.data:
                return _as_revision(row)
        which = "actions.revision.none_differs"
        if spec == "before_incident":
            which = "actions.revision.none_differs_before"
        raise ParamError("revision", msg(which, where=f"{namespace}/{name}"))
    if not spec.isdigit():
        raise ParamError("revision", msg("actions.revision.spec"))
    found = rows.filter(pk=int(spec)).first()
    if found is None:
        said = msg("actions.revision.missing", id=spec, where=f"{namespace}/{name}")
        raise ParamError("revision", said)
    return _as_revision(found)
