"""Opening an incident by hand: a person declares one (no alert opened it), from a page,
the API or a chat.

The incident is an ordinary one from then on: triggered, with an `incident_opened`
timeline entry as ingest writes it (incidents/ingest/decide.py), so everything that
listens to the opening (the pager's escalation, notifications, auto-triage, drills)
treats it as it treats an alert-opened one. Its grouping key is `manual:<uuid>`, which
no Alertmanager group key or INCIDENT_GROUP_BY key can equal. The labels a person gives
are stored as the incident's group labels, where the pager's routing reads them: an
explicit `team` label names the owning team, and `namespace`, `lws`, `model` or
`node_pool` match the teams' ownership claims as an alert group's labels do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from uuid import uuid4

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from console.errors import DomainError
from console.permissions import require
from console.surface import current_surface
from console.texts import msg
from incidents import permissions as perms
from incidents.models import Incident, IncidentStatus, Severity, TimelineEventType
from incidents.services.timeline import MESSAGE_MAX_CHARS, incident_event_record

# Responders may declare (console/roles.py gives the permission to the responder role).
DECLARE = perms.DECLARE

GROUPING_PREFIX = "manual:"
TITLE_MAX_CHARS = 200
SUMMARY_MAX_CHARS = MESSAGE_MAX_CHARS  # the summary is the first note on the timeline
LABELS_MAX = 20
LABEL_VALUE_MAX_CHARS = 200
# A Kubernetes namespace: an RFC 1123 DNS label.
NAMESPACE_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
NAMESPACE_RULE = gettext_noop(
    "lowercase letters, digits and dashes, starting and ending with a letter or digit, at most 63"
)
# Prometheus' label-name rule; names starting with "__" are Prometheus' own.
LABEL_NAME_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,99}")
LABEL_NAME_RULE = gettext_noop(
    "letters, digits and underscores, not starting with a digit or with two underscores, "
    "at most 100"
)


class DeclareInvalid(DomainError):
    """A field of the declaration is not usable; `field` names it (the API's 400 body)."""

    code = "invalid"

    def __init__(
        self, field: str, message: str, *, params: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message, params=params)
        self.field = field


def declare_title_clean(title: object) -> str:
    text = title.strip() if isinstance(title, str) else ""
    if not text:
        raise DeclareInvalid("title", gettext_noop("The title is empty."))
    if len(text) > TITLE_MAX_CHARS:
        raise DeclareInvalid(
            "title",
            gettext_noop("The title is longer than %(limit)s characters."),
            params={"limit": TITLE_MAX_CHARS},
        )
    return text


def declare_severity_clean(severity: object) -> str:
    value = severity.strip().upper() if isinstance(severity, str) else ""
    if value not in Severity.values:
        raise DeclareInvalid(
            "severity",
            gettext_noop("%(value)s is not a severity: use one of %(choices)s."),
            params={"value": repr(str(severity)[:20]), "choices": ", ".join(Severity.values)},
        )
    return value


def declare_namespace_clean(namespace: object) -> str:
    if namespace is None:
        return ""
    value = namespace.strip() if isinstance(namespace, str) else None
    if value is None or (value and not NAMESPACE_RE.fullmatch(value)):
        raise DeclareInvalid(
            "namespace",
            gettext_noop("%(value)s is not a namespace name (%(rule)s)."),
            params={"value": repr(str(namespace)[:80]), "rule": gettext_lazy(NAMESPACE_RULE)},
        )
    return value


def declare_labels_clean(labels: object) -> dict[str, str]:
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise DeclareInvalid(
            "labels", gettext_noop("The labels must be an object of names and text values.")
        )
    if len(labels) > LABELS_MAX:
        raise DeclareInvalid(
            "labels",
            gettext_noop("At most %(limit)s labels; there are %(count)s."),
            params={"limit": LABELS_MAX, "count": len(labels)},
        )
    cleaned: dict[str, str] = {}
    for name, value in labels.items():
        if not isinstance(name, str) or not LABEL_NAME_RE.fullmatch(name) or name.startswith("__"):
            raise DeclareInvalid(
                "labels",
                gettext_noop("%(name)s is not a label name (%(rule)s)."),
                params={"name": repr(str(name)[:80]), "rule": gettext_lazy(LABEL_NAME_RULE)},
            )
        if not isinstance(value, str) or not value.strip():
            raise DeclareInvalid(
                "labels",
                gettext_noop("The value of label %(name)s must be a non-empty text."),
                params={"name": name},
            )
        if len(value.strip()) > LABEL_VALUE_MAX_CHARS:
            raise DeclareInvalid(
                "labels",
                gettext_noop("The value of label %(name)s is longer than %(limit)s characters."),
                params={"name": name, "limit": LABEL_VALUE_MAX_CHARS},
            )
        cleaned[name] = value.strip()
    return cleaned


def declare_summary_clean(summary: object) -> str:
    if summary is not None and not isinstance(summary, str):
        raise DeclareInvalid("summary", gettext_noop("The summary must be text."))
    text = (summary or "").strip()
    if len(text) > SUMMARY_MAX_CHARS:
        raise DeclareInvalid(
            "summary",
            gettext_noop("The summary is longer than %(limit)s characters."),
            params={"limit": SUMMARY_MAX_CHARS},
        )
    return text


@transaction.atomic
def incident_declare(
    *,
    actor: User,
    title: str,
    severity: str,
    namespace: str = "",
    labels: Mapping[str, str] | None = None,
    summary: str = "",
) -> Incident:
    """Open a triggered incident by hand. Its opening entry names who declared it and the
    surface it came from (the console, or a chat); the summary, when given, is the first
    note. PermissionDenied without the responder's permission; DeclareInvalid (code
    "invalid", `field`) for a field that cannot be used."""
    require(actor, DECLARE, gettext_lazy("declare an incident"))
    title = declare_title_clean(title)
    severity = declare_severity_clean(severity)
    namespace = declare_namespace_clean(namespace)
    cleaned_labels = declare_labels_clean(labels)
    summary = declare_summary_clean(summary)
    now = timezone.now()
    incident = Incident.objects.create(
        title=title,
        severity=severity,
        status=IncidentStatus.TRIGGERED,
        grouping_key=f"{GROUPING_PREFIX}{uuid4().hex}",
        namespace=namespace,
        group_labels=cleaned_labels,
        started_at=now,
        triggered_at=now,
    )
    surface = current_surface()
    who = actor.get_username()
    # The message is the opening line ingest writes (worded in each reader's language);
    # who and where are the event's actor and source, and in the payload for readers.
    incident_event_record(
        incident_id=incident.pk,
        kind=TimelineEventType.INCIDENT_OPENED,
        message=msg("incidents.opened", title=title),
        payload={
            "grouping_key": incident.grouping_key,
            "declared": True,
            "declared_by": who,
            "surface": surface,
            "labels": cleaned_labels,
        },
        actor=actor,
        source=surface,
    )
    if summary:
        incident_event_record(
            incident_id=incident.pk,
            kind=TimelineEventType.NOTE,
            message=summary,
            payload={"summary": True},
            actor=actor,
            source=surface,
        )
    return incident
