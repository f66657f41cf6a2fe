"""The lab clock's door (halls.services.venueclock), for certification labs and tests: never in production,
where these routes are not installed at all (and the service refuses anyway).

``GET /api/venues/{id}/lab-clock/`` reads the venue's time; ``POST`` sets it forward, to an instant
(``to``) or by a number of seconds (``forward_seconds``). Operator only.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.urls import URLPattern, path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.models import Role, Venue
from halls.serializers import error_responses
from halls.services import venueclock


class LabClockSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(read_only=True)
    now = serializers.CharField(read_only=True, help_text="The venue's time, in its time zone (ISO 8601).")
    real = serializers.CharField(read_only=True, help_text="The real time (ISO 8601, UTC).")
    offset_seconds = serializers.FloatField(read_only=True, help_text="How far ahead the venue's clock runs.")


class LabClockMoveSerializer(serializers.Serializer[Any]):
    to = serializers.DateTimeField(
        required=False,
        help_text="Set the venue's clock to this instant (with its offset: 2026-12-07T20:01+01:00).",
    )
    forward_seconds = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=int(venueclock.MAX_OFFSET.total_seconds()),
        help_text="Or: move it this many seconds forward.",
    )


def _venue(request: Request, venue_id: int) -> Venue:
    return access.venue_for(request.user, venue_id, Role.OPERATOR)


class LabClockView(HallAPIView):
    @extend_schema(
        operation_id="venues_lab_clock_read",
        summary="The venue's lab clock: its time, the real time and the offset (not in production)",
        description="Operator. Installed only outside production (HALL_ENV is not production).",
        responses={200: LabClockSerializer, **error_responses(403, 404)},
        tags=["venues"],
    )
    def get(self, request: Request, venue_id: int) -> Response:
        return Response(LabClockSerializer(venueclock.reading(_venue(request, venue_id))).data)

    @extend_schema(
        operation_id="venues_lab_clock_move",
        summary="Set the venue's clock forward, for a certification lab or a test (not in production)",
        description=(
            "Operator. Give `to` (an instant) or `forward_seconds`. Everything that decides by the venue's "
            "time (the scheduled prizes' hours and operating days, a game's start at its close of sales) "
            "then reads the moved clock. Audited. 409 clock_backward for an instant before the venue's "
            "time now (it never goes back), 400 clock_too_far beyond ten years ahead."
        ),
        request=LabClockMoveSerializer,
        responses={200: LabClockSerializer, **error_responses(400, 403, 404, 409)},
        tags=["venues"],
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        data = valid(LabClockMoveSerializer, request.data)
        forward = data.get("forward_seconds")
        venueclock.move(
            venue=venue,
            actor=actor(request),
            to=data.get("to"),
            forward=None if forward is None else timedelta(seconds=forward),
        )
        return Response(LabClockSerializer(venueclock.reading(venue)).data)


# Not installed in production: the routes do not exist there (404 as any unknown URL).
urlpatterns: list[URLPattern] = (
    []
    if settings.HALL_PRODUCTION
    else [path("venues/<int:venue_id>/lab-clock/", LabClockView.as_view(), name="api-venue-lab-clock")]
)
