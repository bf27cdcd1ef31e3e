"""The archive's page (/archive/): the batches, "Archive now", the search of archived
incidents with a Restore button each, and Restore batch; and the Restore button of an
archived incident's banner (templates/incidents/_archived_banner.html).

Plain forms (POST with the CSRF token), each answered by a redirect with a message.
Archiving and restoring a batch are queued (a run can move hundreds of thousands of
incidents); restoring one incident is done at once.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_GET, require_POST

from console.bounds import parse_id
from console.errors import DomainError
from console.http import AuthedRequest
from console.web import console_view, refused
from incidents.archive import requests, selectors
from incidents.archive.display import batch_state, default_days, retention_days
from incidents.archive.services import ARCHIVE_PERM, MIN_DAYS, RESTORE_PERM, incidents_restore
from incidents.models import ArchiveMethod
from incidents.paging import CappedPaginator

VIEW_ARCHIVE = "incidents.view_archivebatch"
BATCHES_PER_PAGE = 20
INCIDENTS_PER_PAGE = 25
Q_MAX = 200


def _back(post) -> str:
    """The archive page as the form was posted from: its search, batch and page kept."""
    kept = {k: post.get(k, "")[:Q_MAX] for k in ("q", "batch", "page", "bpage")}
    query = urlencode({k: v for k, v in kept.items() if v})
    return reverse("incidents:archive") + (f"?{query}" if query else "")


@require_GET
@console_view(VIEW_ARCHIVE)
def archive_page(request: AuthedRequest):
    q = request.GET.get("q", "")[:Q_MAX].strip()
    batch_id = parse_id(request.GET.get("batch"))
    batches = CappedPaginator(selectors.archive_batches(), BATCHES_PER_PAGE).get_page(
        request.GET.get("bpage")
    )
    now = timezone.now()
    for batch in batches.object_list:
        batch.state = batch_state(batch, now)
    found = CappedPaginator(
        selectors.archived_incidents(batch_id=batch_id, q=q), INCIDENTS_PER_PAGE
    ).get_page(request.GET.get("page"))
    context = {
        "batches": batches,
        "found": found,
        "q": q,
        "batch_id": batch_id,
        "retention_days": retention_days(),
        "default_days": default_days(),
        "min_days": MIN_DAYS,
        "max_days": requests.MAX_DAYS,
        "can_archive": request.user.has_perm(ARCHIVE_PERM),
        "can_restore": request.user.has_perm(RESTORE_PERM),
    }
    return render(request, "incidents/archive.html", context)


def _days(raw: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise DomainError(
            gettext_noop("Give the number of days as a whole number, e.g. 90."), code="invalid"
        ) from None


@require_POST
@console_view(VIEW_ARCHIVE)
def archive_run(request: AuthedRequest):
    """ "Archive now": queued on the worker."""
    back = reverse("incidents:archive")
    try:
        days = _days(request.POST.get("older_than_days", ""))
        requests.incidents_archive_request(
            older_than_days=days, actor=request.user, method=ArchiveMethod.PAGE
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    messages.success(
        request,
        _(
            "Archive run queued: a worker archives the incidents resolved more than %(days)s "
            "days ago in the background, since a run can move hundreds of thousands of "
            "incidents. Its batch appears below when it starts; reload to follow it."
        )
        % {"days": days},
    )
    return redirect(back)


@require_POST
@console_view(VIEW_ARCHIVE)
def archive_batch_restore(request: AuthedRequest, batch_id: int):
    """ "Restore batch": queued on the worker."""
    back = _back(request.POST)
    try:
        requests.incidents_restore_request(
            batch_id=batch_id, actor=request.user, method=ArchiveMethod.PAGE
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    messages.success(
        request,
        _(
            "Restore of archive batch %(batch)s queued: a worker brings its incidents back in "
            "the background. Its Restored count grows as it goes; reload to follow it."
        )
        % {"batch": batch_id},
    )
    return redirect(back)


def _restore(request: AuthedRequest, incident_id: int | None, back: str):
    try:
        if incident_id is None:
            raise DomainError(gettext_noop("Name the incident to restore."), code="invalid")
        result = incidents_restore(
            actor=request.user, method=ArchiveMethod.PAGE, incident_ids=[incident_id]
        )
    except (PermissionDenied, DomainError) as exc:
        return refused(request, exc, back=back)
    said = {"id": incident_id, "alerts": result.alerts, "events": result.events}
    if result.alerts_kept:
        done = _(
            "Incident #%(id)s restored: %(alerts)s alerts and %(events)s timeline entries are "
            "back; %(kept)s of its alerts had arrived again since and were kept as they are."
        ) % {**said, "kept": result.alerts_kept}
    else:
        done = (
            _(
                "Incident #%(id)s restored: %(alerts)s alerts and %(events)s timeline entries "
                "are back."
            )
            % said
        )
    messages.success(request, done)
    return redirect(back)


@require_POST
@console_view(VIEW_ARCHIVE)
def archive_restore(request: AuthedRequest):
    """A Restore button of the archive page's search: one incident, at once."""
    return _restore(request, parse_id(request.POST.get("incident")), _back(request.POST))


@require_POST
@console_view()
def incident_restore(request: AuthedRequest, pk: int):
    """The Restore button of an archived incident's banner; back to its page."""
    return _restore(request, pk, reverse("incidents:detail", args=[pk]))
