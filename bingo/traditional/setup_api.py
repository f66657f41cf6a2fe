"""REST doors of a venue's bingo equipment and screens (issue 15): ball sets (registered with their colour
map, their incidents and replacements), the set of a game, a room's drawing devices and the switch to the
reserve mid-game, and the rooms' screens.

Setup is the operator's; the caller (mesa de control) records an incident, chooses a game's set and
switches the device. Each view validates its input, finds its objects through halls.access and calls ONE
service.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.balls import ColourRangeError, colour_ranges, parse_colour_ranges
from bingo.traditional import labels
from bingo.traditional.models import BallSet, BallSetEvent, DrawDevice, DrawDeviceKind, Game
from bingo.traditional.serializers import RoomSerializer
from bingo.traditional.services import ballsets, devices, readmodels
from halls import access
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import InvalidInput
from halls.models import Role, Room, Screen, Venue
from halls.serializers import error_responses
from halls.services import setup

TAG = ["setup"]


# --- serializers ----------------------------------------------------------------------------------------


class ColoursMixin(serializers.Serializer[Any]):
    colours = serializers.DictField(
        child=serializers.CharField(max_length=20),
        required=False,
        help_text='The colour of every ball, {"1": "red", …, "90": "purple"}; at least four colours.',
    )
    colour_ranges = serializers.CharField(
        required=False,
        max_length=2000,
        help_text=(
            'The same as ranges: "1-18 red, 19-36 yellow, …" or in Spanish "1-18 rojo, 19-36 amarillo, …" '
            "(case and accents do not matter; stored as the codes of `colours`). Either this or colours."
        ),
    )


def _colours(data: dict[str, Any]) -> dict[str, str] | None:
    if data.get("colour_ranges"):
        try:
            return parse_colour_ranges(data["colour_ranges"])
        except ColourRangeError as exc:
            raise InvalidInput(labels.colour_range_error(exc), code="bad_ball_set") from exc
    colours: dict[str, str] | None = data.get("colours")
    return colours


class BallSetCreateSerializer(ColoursMixin):
    venue = serializers.IntegerField()
    name = serializers.CharField(max_length=80)
    certified_games = serializers.IntegerField(
        required=False, default=10_000, help_text="The manufacturer's number of games (TB-07)."
    )
    manufacturer = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    homologation_ref = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")


class BallSetReplaceSerializer(ColoursMixin):
    name = serializers.CharField(max_length=80, help_text="The new set's name.")
    note = serializers.CharField(max_length=2000, help_text="Why the set is replaced.")
    certified_games = serializers.IntegerField(required=False, allow_null=True, default=None)
    homologation_ref = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")


class BallSetIncidentSerializer(serializers.Serializer[Any]):
    note = serializers.CharField(max_length=2000)
    balls = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list, max_length=90
    )
    replaced = serializers.BooleanField(
        required=False, default=False, help_text="The balls named were replaced by new ones."
    )
    game = serializers.IntegerField(required=False, allow_null=True, default=None)


class BallSetEventRowSerializer(serializers.ModelSerializer[BallSetEvent]):
    recorded_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )

    class Meta:
        model = BallSetEvent
        fields = [
            "id",
            "kind",
            "balls",
            "note",
            "game",
            "replacement",
            "games_played",
            "recorded_by",
            "recorded_at",
        ]
        read_only_fields = fields


class BallSetSerializer(serializers.ModelSerializer[BallSet]):
    games_left = serializers.IntegerField(read_only=True)
    at_limit = serializers.BooleanField(read_only=True, help_text="Must be replaced (TB-07).")
    colour_ranges = serializers.SerializerMethodField()

    class Meta:
        model = BallSet
        fields = [
            "id",
            "venue",
            "name",
            "colours",
            "colour_ranges",
            "certified_games",
            "games_played",
            "games_left",
            "at_limit",
            "manufacturer",
            "homologation_ref",
            "created_at",
            "retired_at",
            "replaced_by",
        ]
        read_only_fields = fields

    def get_colour_ranges(self, ball_set: BallSet) -> str:
        return colour_ranges(ball_set.colours)


class BallSetDetailSerializer(BallSetSerializer):
    events = BallSetEventRowSerializer(many=True, read_only=True)

    class Meta(BallSetSerializer.Meta):
        fields = [*BallSetSerializer.Meta.fields, "events"]
        read_only_fields = fields


class BallSetQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, help_text="Only the sets of this venue.")


class GameBallSetSerializer(serializers.Serializer[Any]):
    ball_set = serializers.IntegerField()


class DeviceCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=80)
    kind = serializers.ChoiceField(choices=DrawDeviceKind.choices)
    reserve = serializers.BooleanField(required=False, default=False)
    homologation_ref = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")


class DeviceSerializer(serializers.ModelSerializer[DrawDevice]):
    class Meta:
        model = DrawDevice
        fields = ["id", "room", "name", "kind", "reserve", "homologation_ref", "created_at"]
        read_only_fields = fields


class DeviceSwitchRequestSerializer(serializers.Serializer[Any]):
    device = serializers.IntegerField(help_text="The room's device to go on with (its reserve).")
    reason = serializers.CharField(max_length=2000)


class DeviceSwitchAnswerSerializer(serializers.Serializer[Any]):
    at_ordinal = serializers.IntegerField(help_text="Balls drawn before the switch.")
    from_device = serializers.CharField(allow_null=True)
    to_device = serializers.CharField()
    to_kind = serializers.CharField()
    from_source = serializers.CharField()
    to_source = serializers.CharField()
    reason = serializers.CharField()
    switched_by = serializers.CharField()
    switched_at = serializers.DateTimeField()


class RoomCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    name = serializers.CharField(max_length=80)
    ball_pace_seconds = serializers.DecimalField(
        max_digits=5, decimal_places=2, required=False, default=Decimal("4")
    )
    claim_window_seconds = serializers.IntegerField(required=False, default=20)


class ScreenSerializer(serializers.ModelSerializer[Screen]):
    url = serializers.SerializerMethodField(help_text="The screen's page (its token is its credential).")

    class Meta:
        model = Screen
        fields = ["id", "venue", "room", "name", "active", "url"]
        read_only_fields = fields

    def get_url(self, screen: Screen) -> str:
        return f"/screens/{screen.token}/"


class ScreenCreateSerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField()
    name = serializers.CharField(max_length=80)


class ScreenUpdateSerializer(serializers.Serializer[Any]):
    active = serializers.BooleanField()


class RenameSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(
        max_length=200, allow_blank=True, help_text="The new name: 1 to 80 characters."
    )


class ScreenQuerySerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField(required=False)


# --- lookups --------------------------------------------------------------------------------------------


def _venue(request: Request, venue_id: int) -> Venue:
    return access.get_for_user(
        Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=venue_id
    )


def _ball_set(request: Request, ball_set_id: int, *roles: str) -> BallSet:
    return access.get_for_user(
        BallSet.objects.select_related("venue"), request.user, *roles, label="ball_set", pk=ball_set_id
    )


def _room(request: Request, room_id: int, *roles: str) -> Room:
    return access.get_for_user(
        Room.objects.select_related("venue"), request.user, *roles, label="room", pk=room_id
    )


def _game(request: Request, game_id: int, *roles: str) -> Game:
    return access.get_for_user(
        Game.objects.select_related("room__venue", "ball_set", "draw_device"),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="game",
        pk=game_id,
    )


# --- ball sets ------------------------------------------------------------------------------------------


class BallSetListView(HallAPIView):
    @extend_schema(
        operation_id="ball_sets_list",
        summary="Ball sets of your venues, with their count against the manufacturer's limit",
        parameters=[BallSetQuerySerializer],
        responses={200: BallSetSerializer(many=True), **error_responses(400)},
        tags=TAG,
    )
    def get(self, request: Request) -> Response:
        query = valid(BallSetQuerySerializer, request.query_params)
        found = BallSet.objects.filter(venue_id__in=access.venue_ids_for(request.user))
        if query.get("venue") is not None:
            found = found.filter(venue_id=query["venue"])
        return Response(BallSetSerializer(found.order_by("venue_id", "pk"), many=True).data)

    @extend_schema(
        operation_id="ball_sets_create",
        summary="Register a ball set with its colour map (operator)",
        description=(
            "Without colours, the five-colour set (18 balls each). 400 bad_ball_set (a ball without a "
            "colour, fewer than four colours, an unknown colour), bad_certified_games; 409 ball_set_exists."
        ),
        request=BallSetCreateSerializer,
        responses={201: BallSetSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request) -> Response:
        data = valid(BallSetCreateSerializer, request.data)
        ball_set = ballsets.register_ball_set(
            venue=_venue(request, data["venue"]),
            name=data["name"],
            actor=actor(request),
            colours=_colours(data),
            certified_games=data["certified_games"],
            manufacturer=data["manufacturer"],
            homologation_ref=data["homologation_ref"],
        )
        return Response(BallSetSerializer(ball_set).data, status=status.HTTP_201_CREATED)


class BallSetDetailView(HallAPIView):
    @extend_schema(
        operation_id="ball_sets_retrieve",
        summary="A ball set with its incidents and replacements",
        responses={200: BallSetDetailSerializer, **error_responses(404)},
        tags=TAG,
    )
    def get(self, request: Request, ball_set_id: int) -> Response:
        return Response(BallSetDetailSerializer(_ball_set(request, ball_set_id, *ANY_ROLE)).data)


class BallSetIncidentView(HallAPIView):
    @extend_schema(
        operation_id="ball_sets_incidents_record",
        summary="Record an incident with the set's condition, or balls replaced (caller, operator)",
        description="400 note_required, ball_out_of_range, balls_required, bad_game; 409 ball_set_retired.",
        request=BallSetIncidentSerializer,
        responses={201: BallSetEventRowSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request, ball_set_id: int) -> Response:
        ball_set = _ball_set(request, ball_set_id, Role.CALLER)
        data = valid(BallSetIncidentSerializer, request.data)
        game = _game(request, data["game"], Role.CALLER) if data["game"] is not None else None
        event = ballsets.record_incident(
            ball_set=ball_set,
            note=data["note"],
            balls=data["balls"],
            replaced=data["replaced"],
            game=game,
            actor=actor(request),
        )
        return Response(BallSetEventRowSerializer(event).data, status=status.HTTP_201_CREATED)


class BallSetReplaceView(HallAPIView):
    @extend_schema(
        operation_id="ball_sets_replace",
        summary="Replace the whole set by a new one, counted from zero (operator)",
        description=(
            "The old set is retired. Colours, the certified number and the manufacturer default to the "
            "old set's. 400 note_required, bad_ball_set; 409 ball_set_retired, ball_set_exists."
        ),
        request=BallSetReplaceSerializer,
        responses={201: BallSetSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request, ball_set_id: int) -> Response:
        ball_set = _ball_set(request, ball_set_id, Role.OPERATOR)
        data = valid(BallSetReplaceSerializer, request.data)
        new = ballsets.replace_ball_set(
            ball_set=ball_set,
            name=data["name"],
            note=data["note"],
            colours=_colours(data),
            certified_games=data["certified_games"],
            homologation_ref=data["homologation_ref"],
            actor=actor(request),
        )
        return Response(BallSetSerializer(new).data, status=status.HTTP_201_CREATED)


class GameBallSetView(HallAPIView):
    @extend_schema(
        operation_id="games_ball_set_choose",
        summary="Choose the ball set a game is played with, before its first ball (caller, operator)",
        description="400 bad_ball_set; 404 unknown_ball_set; 409 wrong_state (drawing), ball_set_retired.",
        request=GameBallSetSerializer,
        responses={200: BallSetSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(GameBallSetSerializer, request.data)
        ball_set = _ball_set(request, data["ball_set"], Role.CALLER)
        game = ballsets.choose_ball_set(game=game, ball_set=ball_set, actor=actor(request))
        return Response(BallSetSerializer(game.ball_set).data)


# --- drawing devices ------------------------------------------------------------------------------------


class DeviceListView(HallAPIView):
    @extend_schema(
        operation_id="rooms_devices_list",
        summary="A room's ball-drawing devices and reserves (TB-30, TB-31)",
        responses={200: DeviceSerializer(many=True), **error_responses(404)},
        tags=TAG,
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, *ANY_ROLE)
        return Response(DeviceSerializer(DrawDevice.objects.filter(room=room), many=True).data)

    @extend_schema(
        operation_id="rooms_devices_create",
        summary="Register a blower or the RNG of the room, main or reserve (operator)",
        description="400 bad_device_name, bad_device_kind; 409 device_exists.",
        request=DeviceCreateSerializer,
        responses={201: DeviceSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.OPERATOR)
        data = valid(DeviceCreateSerializer, request.data)
        device = devices.register_device(
            room=room,
            name=data["name"],
            kind=data["kind"],
            reserve=data["reserve"],
            homologation_ref=data["homologation_ref"],
            actor=actor(request),
        )
        return Response(DeviceSerializer(device).data, status=status.HTTP_201_CREATED)


class DeviceSwitchView(HallAPIView):
    @extend_schema(
        operation_id="games_device_switch",
        summary="Go on drawing the game with another device of the room, e.g. its reserve (caller)",
        description=(
            "TB-31, TB-46: the balls drawn stay; the next one is drawn by the new device (entered by hand "
            "from a blower's reader, or drawn by the RNG). 400 reason_required, bad_device; 404 "
            "unknown_device; 409 wrong_state (not drawing or paused), same_device."
        ),
        request=DeviceSwitchRequestSerializer,
        responses={201: DeviceSwitchAnswerSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(DeviceSwitchRequestSerializer, request.data)
        device = access.get_for_user(
            DrawDevice.objects.select_related("room"),
            request.user,
            Role.CALLER,
            venue_path="room.venue_id",
            label="device",
            pk=data["device"],
        )
        switch = devices.switch_device(game=game, device=device, reason=data["reason"], actor=actor(request))
        return Response(
            DeviceSwitchAnswerSerializer(readmodels.switch_view(switch)).data, status=status.HTTP_201_CREATED
        )


# --- rooms and screens ----------------------------------------------------------------------------------


class ScreenListView(HallAPIView):
    @extend_schema(
        operation_id="screens_list",
        summary="The screens of your venues with their page (operator)",
        parameters=[ScreenQuerySerializer],
        responses={200: ScreenSerializer(many=True), **error_responses(400)},
        tags=TAG,
    )
    def get(self, request: Request) -> Response:
        query = valid(ScreenQuerySerializer, request.query_params)
        venues = access.venue_ids_with(request.user, Role.OPERATOR)  # one query, however many venues
        found = Screen.objects.filter(venue_id__in=venues)
        if query.get("room") is not None:
            found = found.filter(room_id=query["room"])
        return Response(ScreenSerializer(found.order_by("room_id", "pk"), many=True).data)

    @extend_schema(
        operation_id="screens_create",
        summary="A new screen of a room (operator); its page's URL carries its token",
        description=(
            "400 bad_screen_name; 404 unknown_room; 409 screen_exists when another screen of the room has "
            "the name, whatever its case (`details.screen` names it), nothing written."
        ),
        request=ScreenCreateSerializer,
        responses={201: ScreenSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def post(self, request: Request) -> Response:
        data = valid(ScreenCreateSerializer, request.data)
        room = _room(request, data["room"], Role.OPERATOR)
        screen = setup.create_screen(room=room, name=data["name"], actor=actor(request))
        return Response(ScreenSerializer(screen).data, status=status.HTTP_201_CREATED)


class ScreenDetailView(HallAPIView):
    @extend_schema(
        operation_id="screens_update",
        summary="Switch a screen off (its page stops answering) or on (operator)",
        request=ScreenUpdateSerializer,
        responses={200: ScreenSerializer, **error_responses(400, 403, 404)},
        tags=TAG,
    )
    def post(self, request: Request, screen_id: int) -> Response:
        screen = access.get_for_user(
            Screen.objects.all(), request.user, Role.OPERATOR, label="screen", pk=screen_id
        )
        data = valid(ScreenUpdateSerializer, request.data)
        screen = setup.set_screen_active(screen=screen, active=data["active"], actor=actor(request))
        return Response(ScreenSerializer(screen).data)

    @extend_schema(
        operation_id="screens_rename",
        summary="Rename a screen (operator); its page shows the new name at once",
        description="400 bad_screen_name (blank or over 80 characters); 409 screen_exists (in its room).",
        request=RenameSerializer,
        responses={200: ScreenSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAG,
    )
    def patch(self, request: Request, screen_id: int) -> Response:
        screen = access.get_for_user(
            Screen.objects.all(), request.user, Role.OPERATOR, label="screen", pk=screen_id
        )
        data = valid(RenameSerializer, request.data)
        screen = setup.rename_screen(screen=screen, name=data["name"], actor=actor(request))
        return Response(ScreenSerializer(screen).data)


def create_room(request: Request) -> Response:
    """POST /api/rooms/ (bingo.traditional.api.RoomListView's post)."""
    data = valid(RoomCreateSerializer, request.data)
    room = setup.create_room(
        venue=_venue(request, data["venue"]),
        name=data["name"],
        ball_pace_seconds=data["ball_pace_seconds"],
        claim_window_seconds=data["claim_window_seconds"],
        actor=actor(request),
    )
    return Response(RoomSerializer(room).data, status=status.HTTP_201_CREATED)


def rename_room(request: Request, room_id: int) -> Response:
    """PATCH /api/rooms/{id}/ (bingo.traditional.api.RoomDetailView's patch)."""
    room = _room(request, room_id, Role.OPERATOR)
    data = valid(RenameSerializer, request.data)
    room = setup.rename_room(room=room, name=data["name"], actor=actor(request))
    return Response(RoomSerializer(room).data)


urlpatterns = [
    path("ball-sets/", BallSetListView.as_view(), name="api-ball-sets"),
    path("ball-sets/<int:ball_set_id>/", BallSetDetailView.as_view(), name="api-ball-set"),
    path(
        "ball-sets/<int:ball_set_id>/incidents/", BallSetIncidentView.as_view(), name="api-ball-set-incidents"
    ),
    path("ball-sets/<int:ball_set_id>/replace/", BallSetReplaceView.as_view(), name="api-ball-set-replace"),
    path("games/<int:game_id>/ball-set/", GameBallSetView.as_view(), name="api-game-ball-set"),
    path("games/<int:game_id>/device/", DeviceSwitchView.as_view(), name="api-game-device"),
    path("rooms/<int:room_id>/devices/", DeviceListView.as_view(), name="api-room-devices"),
    path("screens/", ScreenListView.as_view(), name="api-screens"),
    path("screens/<int:screen_id>/", ScreenDetailView.as_view(), name="api-screen"),
]
