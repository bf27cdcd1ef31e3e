"""Schedules: their final shifts, overrides, taking a shift, swaps, and the imported
calendar (an upload, or a re-read of its URL)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone, translation
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import BaseParser, JSONParser
from rest_framework.response import Response

from console.api.base import ErrorSerializer, parse_body
from console.http import AuthedApiRequest
from pager.api import selectors
from pager.api.base import (
    ITEM_CHANGE_ERRORS,
    ITEM_QUERY_ERRORS,
    TAG,
    ManageApi,
    OwnApi,
    PagerApi,
    slug_parameter,
)
from pager.api.serializers.schedules import (
    IcalRefreshResultSerializer,
    IcalResultSerializer,
    IcalUploadSerializer,
    OverrideInputSerializer,
    OverrideSerializer,
    ShiftListSerializer,
    ShiftsQuerySerializer,
    SwapInputSerializer,
    SwapSerializer,
    TakeInputSerializer,
)
from pager.schedules import selectors as schedule_selectors
from pager.schedules import services


class _ScheduleApi(PagerApi):
    noun = "schedule"

    def schedule(self, slug: str):
        return self.found_slug(selectors.schedule_by_slug(slug), slug)


def _override(override_id: int) -> dict[str, Any]:
    return OverrideSerializer(selectors.override_get(override_id=override_id)).data


def _swap(swap_id: int) -> dict[str, Any]:
    return SwapSerializer(selectors.swap_get(swap_id=swap_id)).data


# --- shifts --------------------------------------------------------------------------------
@extend_schema(tags=[TAG], parameters=[slug_parameter("schedule")])
class ShiftListApi(_ScheduleApi):
    """The schedule's final shifts between `start` and `end` (at most 62 days apart):
    its rotations laid over each other and over the imported calendar, with overrides,
    taken shifts and accepted swaps on top."""

    @extend_schema(
        operation_id="pager_schedules_shifts",
        summary="A schedule's shifts in a time range",
        parameters=[ShiftsQuerySerializer],
        responses={200: ShiftListSerializer, **ITEM_QUERY_ERRORS},
    )
    def get(self, request: AuthedApiRequest, slug: str):
        query = ShiftsQuerySerializer(data=request.query_params, context={"now": timezone.now()})
        query.is_valid(raise_exception=True)
        start, end = query.validated_data["start"], query.validated_data["end"]
        schedule = self.schedule(slug)
        shifts = schedule_selectors.shifts_between(schedule, start, end)
        body = {"schedule": schedule, "start": start, "end": end, "shifts": shifts}
        return Response(ShiftListSerializer(body).data)


# --- overrides -----------------------------------------------------------------------------
def _user_id(username: str) -> int:
    found = get_user_model().objects.filter(username=username, is_active=True).first()
    if found is None:
        raise serializers.ValidationError(
            {"user": [f"No active person has the username {username!r}."]}
        )
    return int(found.pk)


@extend_schema(tags=[TAG], parameters=[slug_parameter("schedule")])
class OverrideCreateApi(_ScheduleApi):
    """Put someone (a member of the schedule's team) on call from `starts_at` to
    `ends_at`, above every layer (commander). At most 31 days; not over already."""

    permission_classes = ManageApi.permission_classes

    @extend_schema(
        operation_id="pager_schedules_overrides_create",
        summary="Add an override (commander)",
        request=OverrideInputSerializer,
        responses={201: OverrideSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, slug: str):
        data = parse_body(OverrideInputSerializer, request)
        schedule = self.schedule(slug)
        override = services.override_create(
            schedule_id=schedule.pk,
            user_id=_user_id(data["user"]),
            starts_at=data["starts_at"],
            ends_at=data["ends_at"],
            actor=request.user,
            reason=data["reason"],
        )
        return Response(_override(override.pk), status=201)


@extend_schema(tags=[TAG])
class OverrideDetailApi(PagerApi):
    """Cancel an override not yet begun, or end one under way now (what happened stays
    on record). Commander; a responder may end their own taken shift. Answers the
    override as it now stands."""

    noun = "override"
    permission_classes = OwnApi.permission_classes

    @extend_schema(
        operation_id="pager_overrides_destroy",
        summary="Cancel or end an override",
        request=None,
        responses={200: OverrideSerializer, **ITEM_CHANGE_ERRORS},
    )
    def delete(self, request: AuthedApiRequest, pk: int):
        self.found(selectors.override_get(override_id=pk), pk)
        services.override_cancel(override_id=pk, actor=request.user)
        return Response(_override(pk))


@extend_schema(tags=[TAG], parameters=[slug_parameter("schedule")])
class TakeApi(_ScheduleApi):
    """Go on call yourself from `starts_at` (now at the earliest) to `ends_at`, covering
    whoever was (responder, a member of the team)."""

    permission_classes = OwnApi.permission_classes

    @extend_schema(
        operation_id="pager_schedules_take",
        summary="Take a shift (responder)",
        request=TakeInputSerializer,
        responses={201: OverrideSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, slug: str):
        data = parse_body(TakeInputSerializer, request)
        schedule = self.schedule(slug)
        override = services.shift_take(
            schedule_id=schedule.pk,
            starts_at=data["starts_at"],
            ends_at=data["ends_at"],
            actor=request.user,
            reason=data["reason"],
        )
        return Response(_override(override.pk), status=201)


# --- swaps ---------------------------------------------------------------------------------
@extend_schema(tags=[TAG], parameters=[slug_parameter("schedule")])
class SwapCreateApi(_ScheduleApi):
    """Ask someone to cover time you are on call for (responder). Another member of the
    team accepts it with POST swaps/{id}/accept/."""

    permission_classes = OwnApi.permission_classes

    @extend_schema(
        operation_id="pager_schedules_swaps_create",
        summary="Ask for a swap (responder)",
        request=SwapInputSerializer,
        responses={201: SwapSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, slug: str):
        data = parse_body(SwapInputSerializer, request)
        schedule = self.schedule(slug)
        swap = services.swap_request(
            schedule_id=schedule.pk,
            starts_at=data["starts_at"],
            ends_at=data["ends_at"],
            actor=request.user,
            note=data["note"],
        )
        return Response(_swap(swap.pk), status=201)


class _SwapApi(PagerApi):
    noun = "swap"
    permission_classes = OwnApi.permission_classes


@extend_schema(tags=[TAG])
class SwapAcceptApi(_SwapApi):
    """Cover the swap's time yourself (a member of the team, not the one who asked):
    an override puts you on call for it. No body."""

    @extend_schema(
        operation_id="pager_swaps_accept",
        summary="Accept a swap (responder)",
        request=None,
        responses={200: SwapSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        self.found(selectors.swap_get(swap_id=pk), pk)
        services.swap_accept(swap_id=pk, actor=request.user)
        return Response(_swap(pk))


@extend_schema(tags=[TAG])
class SwapCancelApi(_SwapApi):
    """Withdraw an open swap (the one who asked), or undo an accepted one (either
    person); a commander may cancel any. No body."""

    @extend_schema(
        operation_id="pager_swaps_cancel",
        summary="Cancel a swap",
        request=None,
        responses={200: SwapSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, pk: int):
        self.found(selectors.swap_get(swap_id=pk), pk)
        services.swap_cancel(swap_id=pk, actor=request.user)
        return Response(_swap(pk))


# --- the imported calendar -----------------------------------------------------------------
class CalendarParser(BaseParser):
    """A text/calendar body, as text (UTF-8)."""

    media_type = "text/calendar"

    def parse(self, stream, media_type=None, parser_context=None) -> dict[str, str]:
        raw = stream.read() if stream is not None else b""
        return {"ical": raw.decode("utf-8", errors="replace")}


E413 = OpenApiResponse(
    ErrorSerializer, description="The calendar is larger than PAGER_ICAL_MAX_BYTES."
)


@extend_schema(tags=[TAG], parameters=[slug_parameter("schedule")])
class IcalUploadApi(_ScheduleApi):
    """Store a calendar as the schedule's lowest layer (commander): the body as
    `text/calendar`, or JSON {"ical": "..."}. Each event names who is on call (summary
    or attendee: a username or email address); names nobody has are listed in
    `problems` and their events left out. A calendar that cannot be read is a 400."""

    parser_classes = [JSONParser, CalendarParser]
    permission_classes = ManageApi.permission_classes

    @extend_schema(
        operation_id="pager_schedules_ical_upload",
        summary="Upload the schedule's iCal calendar (commander)",
        request={"application/json": IcalUploadSerializer, "text/calendar": OpenApiTypes.STR},
        responses={200: IcalResultSerializer, 413: E413, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, slug: str):
        limit = settings.PAGER_ICAL_MAX_BYTES
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit:
            return Response({"detail": f"The calendar is larger than {limit} bytes."}, status=413)
        schedule = self.schedule(slug)
        text = parse_body(IcalUploadSerializer, request)["ical"]
        problems = services.schedule_ical_upload(
            schedule_id=schedule.pk, text=text, actor=request.user
        )
        with translation.override("en"):  # machines parse it
            shown = [str(p) for p in problems]
        return Response(IcalResultSerializer({"schedule": schedule.slug, "problems": shown}).data)


@extend_schema(tags=[TAG], parameters=[slug_parameter("schedule")])
class IcalRefreshApi(_ScheduleApi):
    """Read the schedule's iCal URL again now (commander). A calendar that fails keeps
    the last good one; `outcome` says what happened. No body."""

    permission_classes = ManageApi.permission_classes

    @extend_schema(
        operation_id="pager_schedules_ical_refresh",
        summary="Re-read the schedule's iCal URL (commander)",
        request=None,
        responses={200: IcalRefreshResultSerializer, **ITEM_CHANGE_ERRORS},
    )
    def post(self, request: AuthedApiRequest, slug: str):
        schedule = self.schedule(slug)
        outcome = services.schedule_ical_refresh(schedule_id=schedule.pk)
        body = {"schedule": schedule.slug, "outcome": outcome}
        return Response(IcalRefreshResultSerializer(body).data)
