"""The one-tap acknowledge link in a page: /pager/ack/<token>/, no sign-in.

The token is the page's id and its person's id, signed (django.core.signing, salt
"pager.ack", so a token made for anything else never passes) with the time it was made:
it expires after PAGE_ACK_LINK_TTL_SECONDS. It works once: the acknowledgement sets
Page.ack_link_used_at in the same transaction (a refused attempt leaves the link
unused). Opening the link (GET) only shows the incident; the button POSTs, so a link
previewer that fetches URLs acknowledges nothing.

Acknowledging goes through incidents' own service (as the paged person): the incident
moves to acknowledged and, if nobody commands it, they take command. A re-page (the
acknowledgement expired and the escalation paged again, the incident still
acknowledged) is acknowledged as a page: the timeline says so and the escalation reads
that entry (payload "event": "acknowledged").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from console.errors import DomainError
from incidents import permissions as incident_perms
from incidents.models import Incident, IncidentStatus, TimelineEvent, TimelineEventType
from incidents.selectors import incident_for_update
from incidents.services.lifecycle import incident_acknowledge
from incidents.services.timeline import incident_event_record
from incidents.transitions import status_word
from notifications.links import console_url
from pager import timeline_kinds
from pager.models import Page, PageStatus
from pager.texts import pager_msg

SALT = "pager.ack"
ENDED = (IncidentStatus.MITIGATED, IncidentStatus.RESOLVED)


class AckRefused(DomainError):
    """The link cannot acknowledge. `status`: the HTTP status the page answers with."""

    def __init__(self, message: str, *, code: str, status: int, **params: Any) -> None:
        super().__init__(message, code=code, params=params)
        self.status = status


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def ack_token(page: Page) -> str:
    return _signer().sign(f"{page.pk}.{page.user_id}")


def ack_link(page: Page) -> str:
    """The absolute one-tap link for `page` (a person's page)."""
    return console_url() + reverse("pager:page-ack", args=[ack_token(page)])


def page_for_token(*, token: str) -> Page:
    """The page a valid, unexpired token names (its incident and person loaded); it is
    not used up. AckRefused (400) for anything else."""
    try:
        value = _signer().unsign(token, max_age=settings.PAGE_ACK_LINK_TTL_SECONDS)
    except signing.SignatureExpired:
        raise AckRefused(
            gettext_noop(
                "This acknowledge link has expired (links work for %(hours)s hours). Open "
                "the incident in the console to acknowledge it."
            ),
            code="expired",
            status=400,
            hours=f"{settings.PAGE_ACK_LINK_TTL_SECONDS / 3600:g}",
        ) from None
    except signing.BadSignature:
        raise _bad_link() from None
    page_id, _, user_id = value.partition(".")
    if not (page_id.isdigit() and user_id.isdigit()):
        raise _bad_link()
    page = (
        Page.objects.select_related("incident", "user", "escalation")
        .filter(pk=int(page_id), user_id=int(user_id))
        .first()
    )
    if page is None:
        raise _bad_link()
    return page


def _bad_link() -> AckRefused:
    return AckRefused(
        gettext_noop(
            "This acknowledge link is not valid (cut short, changed, or for a page that no "
            "longer exists). Open the incident in the console instead."
        ),
        code="bad_link",
        status=400,
    )


def ack_problem(page: Page) -> AckRefused | None:
    """Why the button would be refused now (the GET shows it instead of the button)."""
    try:
        _check(page, page.incident)
    except AckRefused as exc:
        return exc
    return None


def _acknowledger(incident: Incident) -> str:
    """Who acknowledged the incident last (the timeline's status change)."""
    event = (
        TimelineEvent.objects.filter(
            incident=incident, kind=TimelineEventType.STATUS_CHANGED, payload__to="acknowledged"
        )
        .select_related("actor")
        .order_by("-occurred_at", "-id")
        .first()
    )
    if event is not None and event.actor is not None:
        return event.actor.get_username()
    return "someone"


def _check(page: Page, incident: Incident) -> None:
    user: User | None = page.user
    if page.ack_link_used_at is not None:
        raise AckRefused(
            gettext_noop("This link was already used, at %(at)s (UTC). A link works once."),
            code="used",
            status=409,
            at=f"{page.ack_link_used_at:%Y-%m-%d %H:%M}",
        )
    if user is None or not user.is_active or not user.has_perm(incident_perms.ACKNOWLEDGE):
        raise AckRefused(
            gettext_noop(
                "%(user)s may not acknowledge incidents (it needs the responder role or "
                "higher, and an active account). Ask a console admin."
            ),
            code="not_allowed",
            status=403,
            user=user.get_username() if user is not None else "This person",
        )
    if page.escalation.episode < incident.reopen_count:
        raise AckRefused(
            gettext_noop(
                "This page was sent before incident #%(id)s reopened. Acknowledge the "
                "reopened incident in the console, or with the link of its new page."
            ),
            code="stale",
            status=409,
            id=incident.pk,
        )
    if incident.status in ENDED:
        raise AckRefused(
            gettext_noop("Incident #%(id)s is already %(state)s: there is nothing to acknowledge."),
            code="ended",
            status=409,
            id=incident.pk,
            state=status_word(incident.status),
        )
    if incident.status == IncidentStatus.ACKNOWLEDGED and not _repage(page):
        who = _acknowledger(incident)
        if who == user.get_username():
            raise AckRefused(
                gettext_noop("You already acknowledged incident #%(id)s."),
                code="acknowledged",
                status=409,
                id=incident.pk,
            )
        raise AckRefused(
            gettext_noop("Incident #%(id)s was already acknowledged by %(who)s."),
            code="acknowledged",
            status=409,
            id=incident.pk,
            who=who,
        )


def _repage(page: Page) -> bool:
    """A page sent again after an acknowledgement expired (the incident stays acknowledged)."""
    return page.repage_round > 0 and page.status != PageStatus.ACKNOWLEDGED


@transaction.atomic
def page_ack_by_token(*, token: str) -> Page:
    """Acknowledge the page's incident as its person, once. AckRefused says why not."""
    page = page_for_token(token=token)
    now = timezone.now()
    # Single use: the first transaction to set it wins; a second one waits on the row
    # and then finds it set. Rolled back with the rest when the acknowledgement fails.
    taken = Page.objects.filter(pk=page.pk, ack_link_used_at__isnull=True).update(
        ack_link_used_at=now
    )
    incident = incident_for_update(incident_id=page.incident_id)
    if not taken:
        page.refresh_from_db(fields=["ack_link_used_at"])
    _check(page, incident)  # used, role, incident state, as they are under the lock
    user = page.user
    assert user is not None  # _check refused a page without its person
    page.ack_link_used_at = now
    repaged = incident.status == IncidentStatus.ACKNOWLEDGED
    if not repaged:
        incident_acknowledge(incident_id=incident.pk, actor=user)
    Page.objects.filter(pk=page.pk).exclude(status=PageStatus.ACKNOWLEDGED).update(
        status=PageStatus.ACKNOWLEDGED, acknowledged_at=now
    )
    page.refresh_from_db(fields=["status", "acknowledged_at"])
    line = "page.ack_link_repage" if repaged else "page.ack_link"
    incident_event_record(
        incident_id=incident.pk,
        kind=timeline_kinds.PAGE,
        message=pager_msg(line, user=user.get_username(), page=page.pk),
        payload={
            "page": page.pk,
            "event": "acknowledged",
            "via": "link",
            "user": user.get_username(),
            "repage_round": page.repage_round,
        },
        actor=user,
        source="pager",
    )
    return page
