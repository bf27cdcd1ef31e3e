"""Heartbeats (dead-man's switches): making them, their check-ins, and the check.

- HTTP check-ins: `heartbeat_create` returns the token once; only its SHA-256 is kept
  and a presented token is compared with it in constant time. A check-in is one UPDATE.
- Alertmanager's Watchdog: `watchdog_seen`, told by ingest (incidents.heartbeat_alerts)
  each time a replica delivers it; one heartbeat per replica (its externalURL), made on
  first sight.
- The console's own workers and beat: pager.heartbeats.console.
- `heartbeats_check` (pager.heartbeats.check): missing ones page through ingest.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_lazy, gettext_noop

from console.audit.models import AuditKind, AuditMethod
from console.audit.services import audit_record
from console.errors import DomainError, NotFound
from console.permissions import require
from pager import audit_texts as A
from pager import permissions as perms
from pager.audit_texts import audit_reason
from pager.heartbeats.check import heartbeat_evaluate, heartbeats_check
from pager.heartbeats.console import console_beat_due
from pager.heartbeats.selectors import beating
from pager.models import Heartbeat, HeartbeatKind, HeartbeatState, Team

__all__ = [
    "HeartbeatTokenRefused",
    "console_beat_watch",
    "heartbeat_beat",
    "heartbeat_create",
    "heartbeat_delete",
    "heartbeat_token_rotate",
    "heartbeats_check",
    "watchdog_seen",
]

MIN_INTERVAL_SECONDS = 60  # the check runs every 30 s
MAX_INTERVAL_SECONDS = 31 * 24 * 3600
MAX_GRACE_SECONDS = 24 * 3600
# Slugs the console's own heartbeats take (pager.heartbeats.console).
_RESERVED_PREFIXES = ("console-", "alertmanager-")


class HeartbeatTokenRefused(DomainError):
    code = "unauthorized"


AUDIT_KIND, AUDIT_METHOD = AuditKind.PAGER_CONFIG, AuditMethod.PAGER


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _new_token() -> tuple[str, str]:
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


def _check_numbers(interval_seconds: int, grace_seconds: int) -> None:
    if not MIN_INTERVAL_SECONDS <= interval_seconds <= MAX_INTERVAL_SECONDS:
        raise DomainError(
            gettext_noop(
                "The interval must be between %(low)s and %(high)s seconds, not %(value)s."
            ),
            code="invalid",
            params={"low": MIN_INTERVAL_SECONDS, "high": MAX_INTERVAL_SECONDS,
                    "value": interval_seconds},
        )  # fmt: skip
    if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
        raise DomainError(
            gettext_noop("The grace must be between 0 and %(high)s seconds, not %(value)s."),
            code="invalid",
            params={"high": MAX_GRACE_SECONDS, "value": grace_seconds},
        )


def _free_slug(base: str) -> str:
    base = (slugify(base)[:90] or "heartbeat").strip("-") or "heartbeat"
    if base.startswith(_RESERVED_PREFIXES):
        base = f"http-{base}"[:90]
    taken = set(Heartbeat.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


@transaction.atomic
def heartbeat_create(
    *,
    name: str,
    team_id: int | None,
    interval_seconds: int,
    grace_seconds: int,
    actor: User | AnonymousUser | None,
) -> tuple[Heartbeat, str]:
    """An HTTP heartbeat, and its token: shown this once, only its hash is kept."""
    require(actor, perms.MANAGE, gettext_lazy("set up heartbeats"))
    name = " ".join((name or "").split())
    if not name or len(name) > 200:
        raise DomainError(
            gettext_noop("A heartbeat needs a name of 1 to 200 characters."), code="invalid"
        )
    _check_numbers(interval_seconds, grace_seconds)
    team = None
    if team_id is not None:
        team = Team.objects.filter(pk=team_id).first()
        if team is None:
            raise NotFound(gettext_noop("Team #%(id)s does not exist."), params={"id": team_id})
    token, digest = _new_token()
    heartbeat = Heartbeat.objects.create(
        slug=_free_slug(name),
        name=name,
        kind=HeartbeatKind.HTTP,
        team=team,
        token_hash=digest,
        interval_seconds=interval_seconds,
        grace_seconds=grace_seconds,
    )
    said = audit_reason(A.HEARTBEAT_CREATED, name=heartbeat.name, slug=heartbeat.slug)
    _audit(actor, said, heartbeat)
    return heartbeat, token


def _audit(actor: User | AnonymousUser | None, reason: str, heartbeat: Heartbeat) -> None:
    # Heartbeats are configuration, not incidents: the audit log records who changed them.
    audit_record(
        kind=AUDIT_KIND,
        method=AUDIT_METHOD,
        user=actor if isinstance(actor, User) else None,
        reason=reason,
        new={"heartbeat": heartbeat.pk, "slug": heartbeat.slug},
    )


def _locked(heartbeat_id: int) -> Heartbeat:
    heartbeat = Heartbeat.objects.select_for_update().filter(pk=heartbeat_id).first()
    if heartbeat is None:
        raise NotFound(
            gettext_noop("Heartbeat #%(id)s does not exist."), params={"id": heartbeat_id}
        )
    return heartbeat


@transaction.atomic
def heartbeat_token_rotate(*, heartbeat_id: int, actor: User | AnonymousUser | None) -> str:
    """A new token for an HTTP heartbeat (the old one stops working at once)."""
    require(actor, perms.MANAGE, gettext_lazy("set up heartbeats"))
    heartbeat = _locked(heartbeat_id)
    if heartbeat.kind != HeartbeatKind.HTTP:
        raise DomainError(
            gettext_noop("Only an HTTP heartbeat has a token; %(name)s is fed by the console."),
            params={"name": heartbeat.name},
        )
    token, heartbeat.token_hash = _new_token()
    heartbeat.save(update_fields=["token_hash"])
    _audit(actor, audit_reason(A.HEARTBEAT_TOKEN, name=heartbeat.name), heartbeat)
    return token


def heartbeat_delete(*, heartbeat_id: int, actor: User | AnonymousUser | None) -> None:
    """Delete a heartbeat (an Alertmanager replica taken away, a job retired). A missing
    one first resolves its alert (the check, run for it once disabled), so its incident
    does not stay open for ever. The console's own come back on the next check."""
    require(actor, perms.MANAGE, gettext_lazy("set up heartbeats"))
    with transaction.atomic():
        heartbeat = _locked(heartbeat_id)
        heartbeat.enabled = False
        heartbeat.save(update_fields=["enabled"])
        _audit(actor, audit_reason(A.HEARTBEAT_DELETED, name=heartbeat.name), heartbeat)
    heartbeat_evaluate(heartbeat_id=heartbeat_id, now=timezone.now())
    Heartbeat.objects.filter(pk=heartbeat_id).delete()


def heartbeat_beat(*, slug: str, token: str) -> datetime:
    """An HTTP check-in: one read, a constant-time comparison, one UPDATE. Returns when
    the next one is due. NotFound for an unknown slug, HeartbeatTokenRefused for a
    wrong token (or a heartbeat that takes none)."""
    found = (
        Heartbeat.objects.filter(slug=slug)
        .values_list("pk", "token_hash", "interval_seconds")
        .first()
    )
    if found is None:
        raise NotFound(gettext_noop("No heartbeat is called %(slug)s."), params={"slug": slug})
    pk, stored, interval = found
    # `& bool(stored)`: a heartbeat without a token (Watchdog, console) matches nothing.
    if not (hmac.compare_digest(token_hash(token), stored) & bool(stored)):
        raise HeartbeatTokenRefused(gettext_noop("Wrong token for this heartbeat."))
    now = timezone.now()
    Heartbeat.objects.filter(pk=pk).update(last_seen_at=now, state=beating())
    return now + timedelta(seconds=interval)


def _replica_name(source: str) -> tuple[str, str]:
    """(slug, name) of a replica's Watchdog heartbeat, from its externalURL."""
    host = urlsplit(source).netloc or source or "(no externalURL)"
    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    slug = f"alertmanager-{slugify(host)[:60].strip('-') or 'replica'}-{digest}"
    return slug, f"Alertmanager {host}"[:200]


def watchdog_seen(*, source: str, at: datetime) -> None:
    """A replica (by externalURL) delivered its Watchdog at `at`: one UPDATE, and on
    first sight the heartbeat is made. One that was missing recovers on the next check."""
    source = source[:500]
    seen = Heartbeat.objects.filter(kind=HeartbeatKind.WATCHDOG, source=source)
    if seen.update(last_seen_at=at, state=beating()):
        return
    slug, name = _replica_name(source)
    try:
        with transaction.atomic():
            Heartbeat.objects.create(
                slug=slug,
                name=name,
                kind=HeartbeatKind.WATCHDOG,
                source=source,
                team=Team.objects.filter(is_default=True).first(),
                interval_seconds=settings.HEARTBEAT_WATCHDOG_INTERVAL_SECONDS,
                grace_seconds=settings.HEARTBEAT_GRACE_SECONDS,
                last_seen_at=at,
                state=HeartbeatState.OK,
            )
    except IntegrityError:  # a concurrent delivery of the same replica made it
        seen.update(last_seen_at=at, state=beating())


def console_beat_watch(*, at: datetime) -> bool:
    """Judge the beat heartbeat from outside beat (the Watchdog's receiver calls this):
    when the check has not run for its interval and grace, page now. One query when all
    is well. True when it went missing here."""
    heartbeat_id = console_beat_due(at=at)
    if heartbeat_id is None:
        return False
    return bool(heartbeat_evaluate(heartbeat_id=heartbeat_id, now=at))
