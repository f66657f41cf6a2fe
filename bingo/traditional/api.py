"""REST doors of bingo: rooms, card series, games, sales, balls, claims, prizes and the recall.

Each view validates its input with a serializer, finds its objects through halls.access (an object of
another venue answers 404 unknown_<thing>), calls ONE service and renders the result. A command that is
a device retry (same idempotency key, same ball and ordinal) answers 200 with the first result instead of
201; the view tells them apart by the time the returned row was written, without a second query.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.urls import path
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.traditional import setup_api, voicefiles
from bingo.traditional.models import BallSet, Card, CardSeries, Game, SaleOperation
from bingo.traditional.serializers import (
    BallCorrectionRequestSerializer,
    BallCorrectionSerializer,
    BallEntrySerializer,
    BallSerializer,
    ClaimRequestSerializer,
    ClaimSerializer,
    ConfirmSerializer,
    ConsoleScreensSerializer,
    ConsoleSeqSerializer,
    ConsoleSnapshotSerializer,
    GameCreateSerializer,
    GameListItemSerializer,
    GameQuerySerializer,
    GameRecallSerializer,
    GameViewSerializer,
    MasterCardSerializer,
    PrizeResultSerializer,
    RangeSerializer,
    RoomSerializer,
    SaleOperationSerializer,
    SalesSerializer,
    SeriesCreateSerializer,
    SeriesQuerySerializer,
    SeriesSerializer,
    SoldCardsPageSerializer,
    SoldCardsQuerySerializer,
    VoiceClipsSerializer,
    VoidSerializer,
)
from bingo.traditional.services import (
    claims,
    console,
    draw,
    four_eyes,
    games,
    readmodels,
    sales,
    screen_acks,
    series,
)
from halls import access, foureyes
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.models import Proposal, Role, Room, Venue
from halls.proposals_api import proposed
from halls.proposals_serializers import ProposalSerializer
from halls.serializers import error_responses
from halls.services import proposals

# --- Lookups (all through halls.access) -----------------------------------------------------------------


def _game(request: Request, game_id: int, *roles: str) -> Game:
    return access.get_for_user(
        Game.objects.select_related("room__venue", "ball_set", "draw_device"),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="game",
        pk=game_id,
    )


def _room(request: Request, room_id: int, *roles: str) -> Room:
    return access.get_for_user(
        Room.objects.select_related("venue"), request.user, *roles, label="room", pk=room_id
    )


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.get_for_user(
        Venue.objects.all(), request.user, *roles, venue_path="pk", label="venue", pk=venue_id
    )


def _series_of_game(request: Request, game: Game, code: str, *roles: str) -> CardSeries:
    """A series named by its code, among those of the game's venue."""
    return access.get_for_user(
        CardSeries.objects.filter(venue_id=game.room.venue_id),
        request.user,
        *roles,
        label="series",
        code=code,
    )


def _created(written_at: datetime, started: datetime) -> int:
    """201 for a row this request wrote, 200 for the earlier row a retry answers with."""
    return status.HTTP_201_CREATED if written_at >= started else status.HTTP_200_OK


def _game_view(game: Game) -> Any:
    return GameViewSerializer(readmodels.caller_view(game)).data


# --- The caller's voice clips ---------------------------------------------------------------------------


class VoiceClipsView(HallAPIView):
    @extend_schema(
        operation_id="voice_clips_progress",
        summary="How far the caller's voice clips are made (any staff): the setup page and console show it",
        description=(
            "The clips are made offline (`manage.py build_voice`; the demo makes them in the background). "
            "A screen plays the clips made and stays silent for the others."
        ),
        responses={200: VoiceClipsSerializer, **error_responses()},
        tags=["rooms"],
    )
    def get(self, request: Request) -> Response:
        found = voicefiles.progress(Path(settings.HALL_VOICE_DIR))
        return Response(VoiceClipsSerializer(dataclasses.asdict(found)).data)


# --- Rooms ----------------------------------------------------------------------------------------------


class RoomListView(HallAPIView):
    @extend_schema(
        operation_id="rooms_list",
        summary="Rooms of your venues, with the open session and the current game",
        responses={200: RoomSerializer(many=True), **error_responses()},
        tags=["rooms"],
    )
    def get(self, request: Request) -> Response:
        rooms = Room.objects.filter(venue_id__in=access.venue_ids_for(request.user)).order_by(
            "venue_id", "name"
        )
        return Response(RoomSerializer(rooms, many=True).data)

    @extend_schema(
        operation_id="rooms_create",
        summary="A new bingo room of a venue (operator)",
        description="400 bad_room_name, bad_pace, bad_claim_window; 409 room_exists.",
        request=setup_api.RoomCreateSerializer,
        responses={201: RoomSerializer, **error_responses(400, 403, 404, 409)},
        tags=["rooms"],
    )
    def post(self, request: Request) -> Response:
        return setup_api.create_room(request)


class RoomDetailView(HallAPIView):
    @extend_schema(
        operation_id="rooms_retrieve",
        summary="A room, with its open session and current game",
        responses={200: RoomSerializer, **error_responses(404)},
        tags=["rooms"],
    )
    def get(self, request: Request, room_id: int) -> Response:
        return Response(RoomSerializer(_room(request, room_id, *ANY_ROLE)).data)

    @extend_schema(
        operation_id="rooms_rename",
        summary="Rename a room (operator); its screens show the new name at once",
        description="400 bad_room_name (blank or over 80 characters); 409 room_exists (in its venue).",
        request=setup_api.RenameSerializer,
        responses={200: RoomSerializer, **error_responses(400, 403, 404, 409)},
        tags=["rooms"],
    )
    def patch(self, request: Request, room_id: int) -> Response:
        return setup_api.rename_room(request, room_id)


class ConsoleSnapshotView(HallAPIView):
    @extend_schema(
        operation_id="rooms_console_snapshot",
        summary="The caller console's snapshot: the room, its current game, the streams' numbers (caller)",
        description=(
            "Load it once the socket /ws/console/rooms/{room_id}/ is open, apply the events that follow, "
            "and load it again on a gap in either stream's sequence or after a reconnect."
        ),
        responses={200: ConsoleSnapshotSerializer, **error_responses(403, 404)},
        tags=["rooms"],
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.CALLER)
        return Response(ConsoleSnapshotSerializer(console.console_snapshot(room)).data)


class ConsoleSeqView(HallAPIView):
    @extend_schema(
        operation_id="rooms_console_seq",
        summary="The sequence numbers of the console's streams, to check for a lost last event (caller)",
        responses={200: ConsoleSeqSerializer, **error_responses(403, 404)},
        tags=["rooms"],
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.CALLER)
        return Response(ConsoleSeqSerializer({"streams": console.stream_seqs(room)}).data)


class ConsoleScreensView(HallAPIView):
    @extend_schema(
        operation_id="rooms_console_screens",
        summary="Has each screen of the room shown the current ball? (caller; from the screens' acks)",
        description=(
            "The room's game drawing, its last ball, and per active screen whether it acknowledged showing "
            "it; `late` once HALL_ACK_LATE_SECONDS have passed without that acknowledgement."
        ),
        responses={200: ConsoleScreensSerializer, **error_responses(403, 404)},
        tags=["rooms"],
    )
    def get(self, request: Request, room_id: int) -> Response:
        room = _room(request, room_id, Role.CALLER)
        return Response(ConsoleScreensSerializer(screen_acks.console_screens(room)).data)


# --- Card series ----------------------------------------------------------------------------------------


class SeriesListView(HallAPIView):
    @extend_schema(
        operation_id="series_list",
        summary="Card series of your venues",
        parameters=[SeriesQuerySerializer],
        responses={200: SeriesSerializer(many=True), **error_responses(400, 404)},
        tags=["series"],
    )
    def get(self, request: Request) -> Response:
        query = valid(SeriesQuerySerializer, request.query_params)
        found = CardSeries.objects.select_related("created_by").order_by("venue_id", "code")
        if query.get("venue") is not None:
            found = found.filter(venue=_venue(request, query["venue"], *ANY_ROLE))
        else:
            found = found.filter(venue_id__in=access.venue_ids_for(request.user))
        return Response(SeriesSerializer(found, many=True).data)

    @extend_schema(
        operation_id="series_create",
        summary="Generate a series of cards (operator)",
        description="400 bad_strips / bad_face_value; 409 series_exists when the venue has the code already.",
        request=SeriesCreateSerializer,
        responses={201: SeriesSerializer, **error_responses(400, 403, 404, 409)},
        tags=["series"],
    )
    def post(self, request: Request) -> Response:
        data = valid(SeriesCreateSerializer, request.data)
        venue = _venue(request, data.pop("venue"), Role.OPERATOR)
        created = series.create_series(venue=venue, actor=actor(request), **data)
        return Response(SeriesSerializer(created).data, status=status.HTTP_201_CREATED)


class MasterCardView(HallAPIView):
    @extend_schema(
        operation_id="series_card_retrieve",
        summary="A master card: its grid and security code (caller)",
        responses={200: MasterCardSerializer, **error_responses(403, 404)},
        tags=["series"],
    )
    def get(self, request: Request, series_id: int, serial: int) -> Response:
        found = access.get_for_user(
            CardSeries.objects.all(), request.user, Role.CALLER, label="series", pk=series_id
        )
        card = access.get_for_user(
            Card.objects.filter(series=found).select_related("series"),
            request.user,
            Role.CALLER,
            venue_path="series.venue_id",
            label="card",
            serial=serial,
        )
        return Response(MasterCardSerializer(card).data)


# --- Games ----------------------------------------------------------------------------------------------


class GameListView(HallAPIView):
    @extend_schema(
        operation_id="games_list",
        summary="Games of your venues, newest first",
        parameters=[GameQuerySerializer],
        responses={200: GameListItemSerializer(many=True), **error_responses(400, 404)},
        tags=["games"],
    )
    def get(self, request: Request) -> Response:
        query = valid(GameQuerySerializer, request.query_params)
        found = Game.objects.filter(room__venue_id__in=access.venue_ids_for(request.user))
        if query.get("room") is not None:
            found = found.filter(room=_room(request, query["room"], *ANY_ROLE))
        if query.get("state"):
            found = found.filter(state=query["state"])
        found = found.order_by("-created_at", "-pk")[: query["limit"]]
        return Response(GameListItemSerializer(found, many=True).data)

    @extend_schema(
        operation_id="games_create",
        summary="Create the room's next game (caller)",
        description=(
            "409 no_session without an open session, 409 game_in_play while a game is live there. Without "
            "ball_set, the venue's first set in use; 400 bad_ball_set, 409 ball_set_retired."
        ),
        request=GameCreateSerializer,
        responses={201: GameViewSerializer, **error_responses(400, 403, 404, 409)},
        tags=["games"],
    )
    def post(self, request: Request) -> Response:
        data = valid(GameCreateSerializer, request.data)
        room = _room(request, data["room"], Role.CALLER)
        ball_set = None
        if data.get("ball_set") is not None:
            ball_set = access.get_for_user(
                BallSet.objects.all(), request.user, Role.CALLER, label="ball_set", pk=data["ball_set"]
            )
        game = games.create_game(
            room=room,
            actor=actor(request),
            draw_source=data["draw_source"],
            pace_seconds=data.get("pace_seconds"),
            ball_set=ball_set,
        )
        return Response(_game_view(game), status=status.HTTP_201_CREATED)


class GameDetailView(HallAPIView):
    @extend_schema(
        operation_id="games_retrieve",
        summary="The caller's view of a game",
        description=(
            "State, prizes, balls with colours, the latest claims, the first unclaimed winning cards with "
            "their counts, the claim window. Never the sold cards: see .../sold-cards/."
        ),
        responses={200: GameViewSerializer, **error_responses(403, 404)},
        tags=["games"],
    )
    def get(self, request: Request, game_id: int) -> Response:
        return Response(_game_view(_game(request, game_id, Role.CALLER, Role.CASHIER)))


GameStep = Callable[..., Game]


def game_step(step: GameStep, name: str, summary: str) -> type[HallAPIView]:
    """A view for one lifecycle step of a game, taken by the caller: no body, answers the game view."""

    class GameStepView(HallAPIView):
        @extend_schema(
            operation_id=f"games_{name}",
            summary=summary,
            description="Caller. A step the game's state does not allow answers 409 wrong_state, naming it.",
            request=None,
            responses={200: GameViewSerializer, **error_responses(403, 404, 409)},
            tags=["games"],
        )
        def post(self, request: Request, game_id: int) -> Response:
            game = step(game=_game(request, game_id, Role.CALLER), actor=actor(request))
            return Response(_game_view(game))

    GameStepView.__name__ = GameStepView.__qualname__ = f"Game{name.title().replace('_', '')}View"
    return GameStepView


class GameVoidView(HallAPIView):
    @extend_schema(
        operation_id="games_void",
        summary="Propose voiding a live game, with a reason (caller; a second person approves)",
        description=(
            "Caller. Four eyes: answers 202 with the proposal (kind game.void); the game is voided when a "
            "second caller or operator approves it with their own password (POST "
            "/api/proposals/{id}/approve/). 400 reason_required, message_too_long; 409 wrong_state for a "
            "closed or void game (nothing written)."
        ),
        request=VoidSerializer,
        responses={202: ProposalSerializer, **error_responses(400, 403, 404, 409)},
        tags=["games"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(VoidSerializer, request.data)
        proposal = proposals.propose(
            venue=game.room.venue,
            kind=four_eyes.GAME_VOID,
            target=foureyes.target_of("game", game.pk),
            params={"reason": data["reason"], "public_message": data["public_message"]},
            actor=actor(request),
        )
        return proposed(proposal)


class SoldCardsView(HallAPIView):
    @extend_schema(
        operation_id="games_sold_cards",
        summary="The game's sold cards, a page at a time (caller, cashier)",
        description='In (series, serial) order; follow "next" with ?after= until it is null.',
        parameters=[SoldCardsQuerySerializer],
        responses={200: SoldCardsPageSerializer, **error_responses(400, 403, 404)},
        tags=["sales"],
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER, Role.CASHIER)
        query = valid(SoldCardsQuerySerializer, request.query_params)
        after = None
        if query.get("after"):
            code, serial = query["after"].rsplit(":", 1)
            after = (code, int(serial))
        page = readmodels.sold_cards_page(game, after=after, limit=query["limit"])
        return Response(SoldCardsPageSerializer(page).data)


class GameRecallView(HallAPIView):
    @extend_schema(
        operation_id="games_recall",
        summary="The full record of a game (caller, operator)",
        responses={200: GameRecallSerializer, **error_responses(403, 404)},
        tags=["games"],
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        return Response(GameRecallSerializer(readmodels.game_recall(game)).data)


# --- Sales ----------------------------------------------------------------------------------------------

RANGE_ERRORS = (
    "400 bad_range (runs backwards) or range_not_in_series; 404 unknown_series; 409 wrong_state (not on "
    "sale), idempotency_key_reused (the key named another range), no_open_shift (the cashier has no open "
    "shift: the money goes into the drawer of the seller's shift)"
)


def _range_operation(request: Request, game_id: int, service: Callable[..., SaleOperation]) -> Response:
    """Sell or return a range: the same input, checks and answer, a different service."""
    game = _game(request, game_id, Role.CASHIER)
    data = valid(RangeSerializer, request.data)
    card_series = _series_of_game(request, game, data["series"], Role.CASHIER)
    started = timezone.now()
    operation = service(
        game=game,
        series=card_series,
        first=data["first"],
        last=data["last"],
        actor=actor(request),
        idempotency_key=data.get("idempotency_key") or None,
    )
    return Response(SaleOperationSerializer(operation).data, status=_created(operation.created_at, started))


class SalesView(HallAPIView):
    @extend_schema(
        operation_id="games_sales_list",
        summary="The game's sale operations and totals (cashier)",
        responses={200: SalesSerializer, **error_responses(403, 404)},
        tags=["sales"],
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CASHIER)
        operations = (
            SaleOperation.objects.filter(game=game).select_related("series", "cashier").order_by("pk")
        )
        return Response(SalesSerializer({"operations": operations, **readmodels.sales_totals(game)}).data)

    @extend_schema(
        operation_id="games_sales_sell",
        summary="Sell a range of cards of a series (cashier)",
        description=f"201 for a new sale, 200 for a retry with the same idempotency key. {RANGE_ERRORS}, "
        "already_sold.",
        request=RangeSerializer,
        responses={
            201: SaleOperationSerializer,
            200: OpenApiResponse(SaleOperationSerializer, description="A retry: the first operation."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["sales"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        return _range_operation(request, game_id, sales.sell_range)


class ReturnsView(HallAPIView):
    @extend_schema(
        operation_id="games_sales_return",
        summary="Return a range of sold cards (cashier)",
        description=f"201 for a new return, 200 for a retry with the same idempotency key. {RANGE_ERRORS}, "
        "not_sold, drawer_short (the shift's cash drawer does not hold the money to give back).",
        request=RangeSerializer,
        responses={
            201: SaleOperationSerializer,
            200: OpenApiResponse(SaleOperationSerializer, description="A retry: the first operation."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["sales"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        return _range_operation(request, game_id, sales.return_range)


# --- Draw and claims ------------------------------------------------------------------------------------


class BallsView(HallAPIView):
    @extend_schema(
        operation_id="games_balls_enter",
        summary="Enter the ball the reader read (caller, manual games)",
        description=(
            "201 for a new ball, 200 for a retry of the same number and ordinal. 400 ball_out_of_range; 409 "
            "ball_already_drawn, wrong_ordinal, wrong_state, rng_game."
        ),
        request=BallEntrySerializer,
        responses={
            201: BallSerializer,
            200: OpenApiResponse(BallSerializer, description="A retry: the ball already entered."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["draw"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(BallEntrySerializer, request.data)
        started = timezone.now()
        ball = draw.enter_ball(
            game=game, number=data["number"], ordinal=data.get("ordinal"), actor=actor(request)
        )
        return Response(BallSerializer(ball).data, status=_created(ball.drawn_at, started))


class BallCorrectionView(HallAPIView):
    @extend_schema(
        operation_id="games_balls_correct",
        summary="Correct a mis-keyed ball (caller, manual games); after a claim, a second person approves",
        description=(
            "The ball keeps its ordinal and time and takes the new number; the old one is kept with who, "
            "when and why. Completions, unclaimed winners and unpaid claims are computed again. Four eyes: "
            "once a claim was made in the game the correction is proposed instead (202 with the proposal, "
            "kind ball.correct) and made when a second caller or operator approves it. 400 "
            "ball_out_of_range, same_number, reason_required; 404 unknown_ball; 409 ball_already_drawn, "
            "claim_confirmed, wrong_state, rng_game."
        ),
        request=BallCorrectionRequestSerializer,
        responses={
            201: BallCorrectionSerializer,
            202: ProposalSerializer,
            **error_responses(400, 403, 404, 409),
        },
        tags=["draw"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(BallCorrectionRequestSerializer, request.data)
        correction = four_eyes.request_correction(
            game=game,
            ordinal=data["ordinal"],
            number=data["number"],
            reason=data["reason"],
            actor=actor(request),
        )
        if isinstance(correction, Proposal):
            return proposed(correction)
        body = readmodels.correction_view(correction)
        return Response(BallCorrectionSerializer(body).data, status=status.HTTP_201_CREATED)


class ClaimsView(HallAPIView):
    @extend_schema(
        operation_id="games_claims_file",
        summary="Verify a Line or Bingo claim by card serial (caller)",
        description=(
            "An invalid claim is still a recorded verification: 201 with valid=false and the reason. "
            "200 for a retry with the same idempotency key. 404 unknown_series / unknown_card; "
            "409 game_closed (nothing written), wrong_state, line_already_won, bingo_window, already_claimed."
        ),
        request=ClaimRequestSerializer,
        responses={
            201: ClaimSerializer,
            200: OpenApiResponse(ClaimSerializer, description="A retry: the first claim."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["claims"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(ClaimRequestSerializer, request.data)
        started = timezone.now()
        claim = claims.file_claim(
            game=game,
            kind=data["kind"],
            series_code=data["series"],
            serial=data["serial"],
            actor=actor(request),
            idempotency_key=data.get("idempotency_key") or None,
        )
        return Response(ClaimSerializer(claim).data, status=_created(claim.created_at, started))


class ConfirmView(HallAPIView):
    @extend_schema(
        operation_id="games_claims_confirm",
        summary='Close "any more lines / bingos?" and pay the prize (caller)',
        description="A Line resumes the draw, a Bingo closes the game. 409 nothing_to_confirm.",
        request=ConfirmSerializer,
        responses={200: PrizeResultSerializer, **error_responses(400, 403, 404, 409)},
        tags=["claims"],
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, Role.CALLER)
        data = valid(ConfirmSerializer, request.data)
        result = claims.confirm_claims(game=game, kind=data["kind"], actor=actor(request))
        return Response(PrizeResultSerializer(result).data)


STEPS = [
    ("open-sales", games.open_sales, "open_sales", "Open the sale of cards"),
    ("close-sales", games.close_sales, "close_sales", "Close sales: count them, fix and announce the prizes"),
    ("start-draw", games.start_draw, "start_draw", "Start the draw"),
    ("pause", games.pause_draw, "pause", "Pause the draw"),
    ("resume", games.resume_draw, "resume", "Resume the draw (409 claims_pending while a window is open)"),
]

urlpatterns = [
    path("voice/clips/", VoiceClipsView.as_view(), name="api-voice-clips"),
    path("rooms/", RoomListView.as_view(), name="api-rooms"),
    path("rooms/<int:room_id>/", RoomDetailView.as_view(), name="api-room"),
    path("rooms/<int:room_id>/console/", ConsoleSnapshotView.as_view(), name="api-room-console"),
    path("rooms/<int:room_id>/console/seq/", ConsoleSeqView.as_view(), name="api-room-console-seq"),
    path(
        "rooms/<int:room_id>/console/screens/", ConsoleScreensView.as_view(), name="api-room-console-screens"
    ),
    path("series/", SeriesListView.as_view(), name="api-series"),
    path("series/<int:series_id>/cards/<int:serial>/", MasterCardView.as_view(), name="api-series-card"),
    path("games/", GameListView.as_view(), name="api-games"),
    path("games/<int:game_id>/", GameDetailView.as_view(), name="api-game"),
    *[
        path(
            f"games/<int:game_id>/{route}/",
            game_step(step, name, summary).as_view(),
            name=f"api-game-{route}",
        )
        for route, step, name, summary in STEPS
    ],
    path("games/<int:game_id>/void/", GameVoidView.as_view(), name="api-game-void"),
    path("games/<int:game_id>/sales/", SalesView.as_view(), name="api-game-sales"),
    path("games/<int:game_id>/returns/", ReturnsView.as_view(), name="api-game-returns"),
    path("games/<int:game_id>/balls/", BallsView.as_view(), name="api-game-balls"),
    path("games/<int:game_id>/corrections/", BallCorrectionView.as_view(), name="api-game-corrections"),
    path("games/<int:game_id>/claims/", ClaimsView.as_view(), name="api-game-claims"),
    path("games/<int:game_id>/confirm/", ConfirmView.as_view(), name="api-game-confirm"),
    path("games/<int:game_id>/recall/", GameRecallView.as_view(), name="api-game-recall"),
    path("games/<int:game_id>/sold-cards/", SoldCardsView.as_view(), name="api-game-sold-cards"),
]
