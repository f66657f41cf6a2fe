"""REST doors of halls: the API token, venues and game sessions.

Every view is a thin door (DESIGN §3): it validates the body with a serializer, finds the objects through
halls.access (another venue's object is 404), calls one service and renders what it returns. Refusals are
DomainErrors, rendered by halls.api_errors as {"error": {"code", "message", ...}}.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from halls import access, api_errors
from halls.models import GameSession, Role, Room, Screen, Venue
from halls.parsers import BoundedJSONParser
from halls.serializers import (
    AudioScreenSerializer,
    AuditReportSerializer,
    CheckRecordSerializer,
    ErrorSerializer,
    RoomVoiceSerializer,
    SessionCheckSerializer,
    SessionOpenSerializer,
    SessionSerializer,
    TokenRequestSerializer,
    TokenSerializer,
    VenueSerializer,
    error_responses,
)
from halls.services import sessions, voice
from halls.services.verify import verify_audit
from halls.throttling import AuthRateThrottle, locked_out_message

# Every role of the hall's games and tills: the door staff (Role.DOOR) read none of them, only the door's.
ANY_ROLE = tuple(r for r in Role.values if r != Role.DOOR)


class HallAPIView(APIView):
    """Base of every API view: token first, so an anonymous request answers 401 with WWW-Authenticate."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]


def actor(request: Request) -> User:
    """The acting staff member (IsAuthenticated has already refused anonymous requests)."""
    return cast(User, request.user)


def valid(serializer_class: type[Any], data: Any, **kwargs: Any) -> dict[str, Any]:
    """Validate ``data`` or answer 400 with the field errors."""
    serializer = serializer_class(data=data, **kwargs)
    try:
        serializer.is_valid(raise_exception=True)
    except ValidationError as exc:
        api_errors.name_fields(exc, serializer)  # the message names the fields in the reader's language
        raise
    return cast(dict[str, Any], serializer.validated_data)


# --- Auth -----------------------------------------------------------------------------------------------


class TokenView(ObtainAuthToken):
    """Exchange a username and password for the API token of that user.

    Throttled per client address before the body is read (each exchange hashes a password), and locked out
    per username and address by django-axes after repeated wrong passwords (its backend refuses before the
    hasher runs)."""

    authentication_classes: list[Any] = []
    throttle_classes = [AuthRateThrottle]
    parser_classes = [BoundedJSONParser, FormParser, MultiPartParser]

    @extend_schema(
        operation_id="auth_token",
        request=TokenRequestSerializer,
        responses={
            200: TokenSerializer,
            400: ErrorSerializer,
            429: OpenApiResponse(ErrorSerializer, description="Too many attempts, or locked out."),
        },
        auth=[],
        tags=["auth"],
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if getattr(request, "axes_locked_out", False):  # set by django-axes on a locked-out pair
                return Response(
                    {"error": {"code": "locked_out", "message": locked_out_message()}},
                    status=status.HTTP_429_TOO_MANY_REQUESTS,
                )
            raise ValidationError(serializer.errors)
        token, _ = Token.objects.get_or_create(user=serializer.validated_data["user"])
        return Response({"token": token.key})


# --- Venues ---------------------------------------------------------------------------------------------


class VenueListView(HallAPIView):
    @extend_schema(
        operation_id="venues_list",
        summary="Venues where you hold a role, with your roles there",
        responses={200: VenueSerializer(many=True), **error_responses()},
        tags=["venues"],
    )
    def get(self, request: Request) -> Response:
        ids = access.venue_ids_for(request.user, door=True)
        venues = Venue.objects.filter(pk__in=ids).order_by("name")
        # a query each for whom they inspect and for their roles elsewhere, however many venues
        inspected = access.inspected_venue_ids(request.user, ids)
        granted = dict(access.roles_in_each(request.user, [v.pk for v in venues if v.pk not in inspected]))
        roles = {v.pk: [Role.INSPECTOR.value] if v.pk in inspected else sorted(granted[v.pk]) for v in venues}
        return Response(VenueSerializer(venues, many=True, context={"roles": roles}).data)


class VenueAuditVerifyView(HallAPIView):
    """Verify the venue's tamper evidence now: its audit chain and its pools' seals, against the anchors."""

    @extend_schema(
        operation_id="venues_audit_verify",
        summary="Verify the venue's audit chain and its pools' seals (operator, inspector)",
        description=(
            "Operator or inspector. Reads everything in one snapshot, so a busy hall verifies as it was at "
            "one instant. "
            "`ok` is false when any chain is not intact; each bad chain names its first bad link "
            "(`first_bad_seq`) and what is wrong with it (`reason`)."
        ),
        request=None,
        responses={200: AuditReportSerializer, **error_responses(403, 404)},
        tags=["venues"],
    )
    def get(self, request: Request, venue_id: int) -> Response:
        access.require_role(request.user, venue_id, Role.OPERATOR, Role.INSPECTOR)
        return Response(AuditReportSerializer(verify_audit(venue_ids=[venue_id]).as_dict()).data)

    @extend_schema(
        operation_id="venues_audit_verify_post",
        summary="Verify the venue's audit chain and its pools' seals (operator, inspector); same as GET",
        request=None,
        responses={200: AuditReportSerializer, **error_responses(403, 404)},
        tags=["venues"],
    )
    def post(self, request: Request, venue_id: int) -> Response:
        return self.get(request, venue_id)


# --- Game sessions --------------------------------------------------------------------------------------


def _session(request: Request, session_id: int, *roles: str) -> GameSession:
    return access.get_for_user(
        GameSession.objects.select_related("room", "opened_by", "closed_by").prefetch_related(
            "checks__checked_by"
        ),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="session",
        pk=session_id,
    )


class SessionOpenView(HallAPIView):
    @extend_schema(
        operation_id="rooms_sessions_open",
        summary="Open a session in a room after the material checks and the 90-ball inspection draw",
        description=(
            "Caller. Each material check (blower, reserve, reader) is the one recorded for this session "
            "by whoever ran it (POST /api/rooms/{id}/checks/), or the opener's when the body states it "
            "true. Refused with 400 checks_failed when a device is stated as not working, 409 "
            "checks_missing naming each check neither stated nor recorded as working (`details.checks`), "
            "400 inspection_incomplete naming the missing, repeated or out-of-range numbers; 409 "
            "session_already_open when the room already has one. Refused, nothing is written."
        ),
        request=SessionOpenSerializer,
        responses={201: SessionSerializer, **error_responses(400, 403, 404, 409)},
        tags=["sessions"],
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = access.get_for_user(
            Room.objects.select_related("venue"), request.user, Role.CALLER, label="room", pk=room_id
        )
        data = valid(SessionOpenSerializer, request.data)
        session = sessions.open_session(room=room, actor=actor(request), **data)
        return Response(SessionSerializer(session).data, status=status.HTTP_201_CREATED)


class RoomCheckView(HallAPIView):
    @extend_schema(
        operation_id="rooms_checks_list",
        summary="The material checks recorded for the room's next session, in the order run",
        description=(
            "Caller. The checks recorded since the room's last session closed and not yet part of a "
            "session: each with its result, who ran it and when (the latest of a device is the one that "
            "counts). Empty while a session is open (its checks are the session's)."
        ),
        responses={200: SessionCheckSerializer(many=True), **error_responses(403, 404)},
        tags=["sessions"],
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = access.get_for_user(
            Room.objects.select_related("venue"), request.user, Role.CALLER, label="room", pk=room_id
        )
        return Response(SessionCheckSerializer(sessions.pending_checks(room), many=True).data)

    @extend_schema(
        operation_id="rooms_checks_record",
        summary="Record one material check of a room before its session opens, by whoever ran it",
        description=(
            "Caller. The next session to open takes the check into its minutes with the person who ran it "
            "(a device checked as working here need not be re-checked by the opener). 400 invalid naming "
            "`ok` when it is left out (in a form too: never read as false), 400 note_required for a "
            "failed check without a note, 409 session_already_open while the room has an open session."
        ),
        request=CheckRecordSerializer,
        responses={201: SessionCheckSerializer, **error_responses(400, 403, 404, 409)},
        tags=["sessions"],
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = access.get_for_user(
            Room.objects.select_related("venue"), request.user, Role.CALLER, label="room", pk=room_id
        )
        data = valid(CheckRecordSerializer, request.data)
        check = sessions.record_check(
            room=room, check_name=data["check"], ok=data["ok"], note=data["note"], actor=actor(request)
        )
        return Response(SessionCheckSerializer(check).data, status=status.HTTP_201_CREATED)


class SessionDetailView(HallAPIView):
    @extend_schema(
        operation_id="sessions_retrieve",
        summary="A game session",
        responses={200: SessionSerializer, **error_responses(403, 404)},
        tags=["sessions"],
    )
    def get(self, request: Request, session_id: int) -> Response:
        return Response(SessionSerializer(_session(request, session_id, Role.CALLER)).data)


class SessionCloseView(HallAPIView):
    @extend_schema(
        operation_id="sessions_close",
        summary="Close a session (every game of it closed or void)",
        description="Caller. 409 session_closed when already closed, 409 session_busy while a game is live.",
        request=None,
        responses={200: SessionSerializer, **error_responses(403, 404, 409)},
        tags=["sessions"],
    )
    def post(self, request: Request, session_id: int) -> Response:
        session = sessions.close_session(
            session=_session(request, session_id, Role.CALLER), actor=actor(request)
        )
        return Response(SessionSerializer(session).data)


# --- The caller's voice ----------------------------------------------------------------------------------


def _room(request: Request, room_id: int, *roles: str) -> Room:
    return access.get_for_user(
        Room.objects.select_related("venue"), request.user, *roles, label="room", pk=room_id
    )


def _voice_reply(state: Any) -> dict[str, Any]:
    name = Screen.objects.filter(pk=state["audio_screen"]).values_list("name", flat=True).first()
    return {**state, "audio_screen_name": name}


class RoomVoiceView(HallAPIView):
    @extend_schema(
        operation_id="rooms_voice_retrieve",
        summary="The caller's voice of a room: its audio screen, muted, volume",
        responses={200: RoomVoiceSerializer, **error_responses(403, 404)},
        tags=["rooms"],
    )
    def get(self, request: Request, room_id: int) -> Response:
        state = voice.voice_state(_room(request, room_id, Role.CALLER))
        return Response(RoomVoiceSerializer(_voice_reply(state)).data)

    @extend_schema(
        operation_id="rooms_voice_set",
        summary="Mute or unmute the caller's voice and set its volume (0–100), live on the audio screen",
        description="Caller. A field left out keeps its value; 400 bad_volume outside 0–100.",
        request=RoomVoiceSerializer,
        responses={200: RoomVoiceSerializer, **error_responses(400, 403, 404)},
        tags=["rooms"],
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.CALLER)
        data = valid(RoomVoiceSerializer, request.data)
        state = voice.set_voice(
            room=room, actor=actor(request), muted=data.get("muted"), volume=data.get("volume")
        )
        return Response(RoomVoiceSerializer(_voice_reply(state)).data)


class AudioScreenView(HallAPIView):
    @extend_schema(
        operation_id="rooms_audio_screen_choose",
        summary="Choose the room's audio screen (the one whose loudspeakers say the balls)",
        description=(
            "Operator. `screen` null: no screen plays the voice. 400 bad_screen for another room's screen."
        ),
        request=AudioScreenSerializer,
        responses={200: RoomVoiceSerializer, **error_responses(400, 403, 404)},
        tags=["rooms"],
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.OPERATOR)
        data = valid(AudioScreenSerializer, request.data)
        screen = None
        if data["screen"] is not None:
            screen = Screen.objects.filter(pk=data["screen"], venue_id=room.venue_id).first()
            if screen is None:
                raise ValidationError({"screen": [_("No such screen in this venue.")]})
        state = voice.choose_audio_screen(room=room, screen=screen, actor=actor(request))
        return Response(RoomVoiceSerializer(_voice_reply(state)).data)


urlpatterns = [
    path("auth/token/", TokenView.as_view(), name="api-token"),
    path("venues/", VenueListView.as_view(), name="api-venues"),
    path(
        "venues/<int:venue_id>/audit/verify/", VenueAuditVerifyView.as_view(), name="api-venue-audit-verify"
    ),
    path("rooms/<int:room_id>/sessions/", SessionOpenView.as_view(), name="api-room-sessions"),
    path("rooms/<int:room_id>/checks/", RoomCheckView.as_view(), name="api-room-checks"),
    path("sessions/<int:session_id>/", SessionDetailView.as_view(), name="api-session"),
    path("sessions/<int:session_id>/close/", SessionCloseView.as_view(), name="api-session-close"),
    path("rooms/<int:room_id>/voice/", RoomVoiceView.as_view(), name="api-room-voice"),
    path("rooms/<int:room_id>/audio-screen/", AudioScreenView.as_view(), name="api-room-audio-screen"),
]
