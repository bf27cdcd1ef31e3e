"""Writes of the checklist: the deployments found in the cluster, verification runs and
their stored results, and sign-offs (append-only). Keyword-only; a refused change raises
ReadinessError with a message a person can act on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, gettext_noop

from actions.k8s import KubeApi, kube_api
from actions.kinds.base import ActionError
from console.bounds import MAX_ID
from console.errors import DomainError, NotAllowed
from console.texts import msg
from readiness import discovery
from readiness.items import BY_KEY, SIGN_OFF_KEYS
from readiness.models import (
    ACTIVE_VERIFICATION,
    Deployment,
    ItemCheck,
    SignOff,
    SignOffAction,
    Verification,
    VerificationStatus,
)
from readiness.permissions import SIGN_OFF, VERIFY
from readiness.texts import CRASHED, STALE
from readiness.verifiers import Finding, sources

MAX_SIGNOFF_DAYS = 366
log = logging.getLogger(__name__)


class ReadinessError(DomainError):
    """A refused checklist change."""


def _title(item: str) -> Promise:
    """An item's title, lazy: English for the API, translated on pages (the titles are
    marked in readiness/items.py)."""
    return gettext_lazy(BY_KEY[item].title)


def _stale_seconds() -> int:
    return int(settings.READINESS_VERIFICATION_STALE_SECONDS)


@transaction.atomic
def deployments_sync(
    *, namespace: str, names: list[str], now: datetime | None = None
) -> list[Deployment]:
    """Record the LWS found in `namespace`: new ones appear, vanished ones are kept with
    `present=False` (their sign-off history stays), returning ones come back."""
    now = now or timezone.now()
    existing = {
        d.lws: d for d in Deployment.objects.select_for_update().filter(namespace=namespace)
    }
    for name in names:
        if name not in existing:
            existing[name] = Deployment.objects.create(
                namespace=namespace, lws=name, first_seen_at=now, last_seen_at=now
            )
    Deployment.objects.filter(namespace=namespace, lws__in=names).update(
        present=True, last_seen_at=now
    )
    Deployment.objects.filter(namespace=namespace).exclude(lws__in=names).update(present=False)
    return list(Deployment.objects.filter(namespace=namespace, present=True))


def _locked(deployment_id: int) -> Deployment:
    deployment = None
    if 0 < deployment_id <= MAX_ID:  # beyond bigint no row can match (and PostgreSQL errs)
        deployment = Deployment.objects.select_for_update().filter(pk=deployment_id).first()
    if deployment is None:
        raise ReadinessError(
            gettext_noop("Deployment #%(id)s does not exist."),
            code="not_found",
            params={"id": deployment_id},
        )
    return deployment


def _enqueue_on_commit(verification_id: int) -> None:
    # cycle: readiness/tasks.py imports these services (its tasks call them).
    from readiness.tasks import checklist_verify

    transaction.on_commit(lambda: checklist_verify.delay(verification_id))


@transaction.atomic
def verification_request(
    *, deployment_id: int, actor: User | None = None, trigger: str = "button", enqueue: bool = True
) -> tuple[Verification, bool]:
    """(verification, created): a new queued verification of the deployment, or the one
    already queued or running (created False). `actor` None is the beat schedule."""
    if actor is not None and not actor.has_perm(VERIFY):
        raise NotAllowed(
            gettext_noop("Your role does not allow running the checklist verification.")
        )
    deployment = _locked(deployment_id)
    if not deployment.present:
        raise ReadinessError(
            gettext_noop(
                "%(deployment)s is no longer in the cluster (last seen %(at)s UTC); there is "
                "nothing to verify."
            ),
            code="gone",
            params={
                "deployment": str(deployment),
                "at": f"{deployment.last_seen_at:%Y-%m-%d %H:%M}",
            },
        )
    now = timezone.now()
    active = deployment.verifications.filter(status__in=ACTIVE_VERIFICATION).first()
    if active and (now - active.requested_at).total_seconds() > _stale_seconds():
        # Its worker died or none is running: free the deployment for a new one.
        active.status, active.finished_at = VerificationStatus.FAILED, now
        # No parts column on Verification: a stable English that readiness/texts.py
        # recognises when read (verification_error_parts).
        active.error = msg(STALE, seconds=_stale_seconds()).english
        active.save(update_fields=["status", "finished_at", "error"])
        active = None
    if active:
        return active, False
    try:
        with transaction.atomic():
            verification = Verification.objects.create(
                deployment=deployment, trigger=trigger, requested_by=actor, requested_at=now
            )
    except IntegrityError:  # another request won the race; answer its verification
        active = deployment.verifications.get(status__in=ACTIVE_VERIFICATION)
        return active, False
    if enqueue:
        _enqueue_on_commit(verification.pk)
    return verification, True


@transaction.atomic
def _claim(verification_id: int) -> Verification | None:
    verification = (
        Verification.objects.select_for_update()
        .select_related("deployment")
        .filter(pk=verification_id)
        .first()
    )
    if verification is None or verification.status != VerificationStatus.QUEUED:
        return None  # redelivered, or already finished
    verification.status, verification.started_at = VerificationStatus.RUNNING, timezone.now()
    verification.save(update_fields=["status", "started_at"])
    return verification


@transaction.atomic
def _store(verification: Verification, found: dict[str, Finding], now: datetime) -> None:
    ItemCheck.objects.bulk_create(
        ItemCheck(
            verification=verification,
            item=key,
            state=f.state,
            # The English for search and old readers; the parts are what pages word.
            summary=f.summary.english[:500],
            evidence=[line.english for line in f.evidence],
            texts={
                "summary": f.summary.stored,
                "evidence": [line.stored for line in f.evidence],
            },
            source=BY_KEY[key].source,
        )
        for key, f in found.items()
    )
    verification.status, verification.finished_at = VerificationStatus.DONE, now
    verification.save(update_fields=["status", "finished_at"])
    Deployment.objects.filter(pk=verification.deployment_id).update(last_verification=verification)


def verification_run(
    *, verification_id: int, api_factory: Callable[[], KubeApi] | None = None
) -> Verification | None:
    """Run a queued verification (on the worker): read every source, store one result per
    item. The reads happen outside any transaction; the results are written in one."""
    verification = _claim(verification_id)
    if verification is None:
        return None
    deployment = verification.deployment
    try:
        found = sources.findings(
            namespace=deployment.namespace,
            name=deployment.lws,
            now=timezone.now(),
            api_factory=api_factory or kube_api,
        )
        _store(verification, found, timezone.now())
    except Exception as exc:
        # Never leave it "running": the page would wait for it until it goes stale.
        Verification.objects.filter(pk=verification.pk).update(
            status=VerificationStatus.FAILED,
            finished_at=timezone.now(),
            error=msg(CRASHED, detail=f"{type(exc).__name__}: {exc}").english,
        )
        raise
    verification.refresh_from_db()
    return verification


def checklists_refresh(*, api_factory: Callable[[], KubeApi] | None = None) -> int:
    """Find the LWS in each namespace, then verify each one now (on the worker). Returns
    how many were verified."""
    api_factory = api_factory or kube_api
    done = 0
    for namespace in discovery.namespaces():
        try:
            names = discovery.lws_names(api_factory(), namespace)
        except ActionError as exc:
            # Keep what we knew: an unreachable API must not mark every deployment gone.
            log.warning("readiness: cannot list LeaderWorkerSets in %s: %s", namespace, exc)
            names = None
        deployments = (
            deployments_sync(namespace=namespace, names=names)
            if names is not None
            else Deployment.objects.filter(namespace=namespace, present=True)
        )
        for deployment in list(deployments):
            verification, created = verification_request(
                deployment_id=deployment.pk, trigger="schedule", enqueue=False
            )
            if created:
                verification_run(verification_id=verification.pk, api_factory=api_factory)
                done += 1
    return done


@transaction.atomic
def verifications_prune(*, now: datetime | None = None) -> int:
    """Forget finished verifications older than READINESS_KEEP_DAYS (beat verifies every
    deployment every 15 minutes, ~100 rows a day each), keeping each deployment's latest
    finished one, which is what its page shows. Sign-offs are never pruned. Returns how
    many verifications went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.READINESS_KEEP_DAYS)
    latest = (
        Verification.objects.filter(deployment=OuterRef("deployment"))
        .exclude(status__in=ACTIVE_VERIFICATION)
        .order_by("-requested_at", "-id")
        .values("pk")[:1]
    )
    old = (
        Verification.objects.exclude(status__in=ACTIVE_VERIFICATION)
        .filter(requested_at__lt=cutoff)
        .exclude(pk=Subquery(latest))
        .exclude(pk__in=Deployment.objects.values("last_verification"))
    )
    # The stored item results are derived data, not an audit trail: they cascade with
    # their pass (a bulk delete, which AppendOnlyModel's per-row guard does not refuse).
    deleted = old.delete()[1]
    return deleted.get(Verification._meta.label, 0)


def _signable(deployment_id: int, item: str) -> Deployment:
    if item not in BY_KEY:
        raise ReadinessError(
            gettext_noop("There is no checklist item %(item)s."),
            code="invalid_params",
            params={"item": repr(item)},
        )
    if item not in SIGN_OFF_KEYS:
        raise ReadinessError(
            gettext_noop(
                "'%(item)s' is verified by the console from the cluster; it cannot be signed off "
                "by hand."
            ),
            code="invalid_params",
            params={"item": _title(item)},
        )
    return _locked(deployment_id)


@transaction.atomic
def signoff_record(
    *, deployment_id: int, item: str, actor: User, note: str, expires_on: date
) -> SignOff:
    """A commander's sign-off of one person-checked item, valid until `expires_on`."""
    if not actor.has_perm(SIGN_OFF):
        raise NotAllowed(gettext_noop("Only a commander may sign off checklist items."))
    deployment = _signable(deployment_id, item)
    note = (note or "").strip()
    if not note:
        raise ReadinessError(
            gettext_noop("Say what you checked in the note."), code="invalid_params"
        )
    today = timezone.localdate()
    if expires_on <= today:
        raise ReadinessError(
            gettext_noop("The expiry %(day)s is not in the future."),
            code="invalid_params",
            params={"day": f"{expires_on:%Y-%m-%d}"},
        )
    if expires_on > today + timedelta(days=MAX_SIGNOFF_DAYS):
        raise ReadinessError(
            gettext_noop("A sign-off holds at most %(days)s days; %(day)s is further out."),
            code="invalid_params",
            params={"days": MAX_SIGNOFF_DAYS, "day": f"{expires_on:%Y-%m-%d}"},
        )
    return SignOff.objects.create(
        deployment=deployment,
        item=item,
        action=SignOffAction.SIGN_OFF,
        by=actor,
        at=timezone.now(),
        note=note[:1000],
        expires_on=expires_on,
    )


@transaction.atomic
def signoff_revoke(*, deployment_id: int, item: str, actor: User, note: str) -> SignOff:
    """Withdraw the item's sign-off (a new history row; the old one stays)."""
    if not actor.has_perm(SIGN_OFF):
        raise NotAllowed(gettext_noop("Only a commander may revoke checklist sign-offs."))
    deployment = _signable(deployment_id, item)
    note = (note or "").strip()
    if not note:
        raise ReadinessError(
            gettext_noop("Say why the sign-off no longer holds."), code="invalid_params"
        )
    latest = deployment.signoffs.filter(item=item).first()
    if latest is None or latest.action == SignOffAction.REVOKE:
        raise ReadinessError(
            gettext_noop("'%(item)s' is not signed off."),
            code="invalid_state",
            params={"item": _title(item)},
        )
    return SignOff.objects.create(
        deployment=deployment,
        item=item,
        action=SignOffAction.REVOKE,
        by=actor,
        at=timezone.now(),
        note=note[:1000],
    )
