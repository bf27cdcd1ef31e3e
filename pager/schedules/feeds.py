"""The calendar feeds, read by calendar applications without signing in: the key in the
address is the secret (looked up by its unique column; an unknown key is a 404)."""

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from pager.schedules import ical_export, selectors

CONTENT_TYPE = "text/calendar; charset=utf-8"


def _answer(body: bytes, name: str) -> HttpResponse:
    response = HttpResponse(body, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'inline; filename="{name}.ics"'
    response["Cache-Control"] = "private, max-age=300"
    response["X-Robots-Tag"] = "noindex"
    return response


@require_safe
def schedule_feed(request: HttpRequest, key: str) -> HttpResponse:
    schedule = selectors.schedule_by_feed_key(key)  # NotFound is a 404
    start, end = ical_export.feed_range()
    return _answer(ical_export.schedule_feed(schedule, start, end), schedule.slug)


@require_safe
def person_feed(request: HttpRequest, key: str) -> HttpResponse:
    profile = selectors.profile_by_feed_key(key)
    start, end = ical_export.feed_range()
    return _answer(ical_export.person_feed(profile.user, start, end), "on-call")
