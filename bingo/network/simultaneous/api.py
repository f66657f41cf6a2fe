"""REST doors of simultaneous bingo (under /api/simultaneous/).

The central's operator (a staff user of the central installation: `is_staff`) creates a network game,
allocates its cards, opens and closes its sales, starts its draw and may end a claim window early. A hall's
staff place the game in a room (operator), sell, return and refund its cards (cashier) and file claims
(caller). Each view validates, finds its objects, calls ONE service and renders."""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.network.simultaneous.models import HallGame, NetworkGame
from bingo.network.simultaneous.services import central, commitments, venue
from bingo.traditional.models import ClaimKind
from halls import access
from halls.api import ANY_ROLE, HallAPIView, actor, valid
from halls.errors import NotFound, PermissionDenied
from halls.models import Network, Role, Room
from halls.serializers import error_responses

TAGS = ["simultaneous"]


class NetworkGameCreateSerializer(serializers.Serializer[Any]):
    network = serializers.CharField(max_length=40)
    code = serializers.RegexField(r"^[A-Za-z0-9_-]{1,30}$")
    card_price = serializers.DecimalField(max_digits=12, decimal_places=2)
    line_percent = serializers.DecimalField(max_digits=5, decimal_places=2)
    bingo_percent = serializers.DecimalField(max_digits=5, decimal_places=2)
    hall_percent = serializers.DecimalField(max_digits=5, decimal_places=2)
    sales_deadline = serializers.DateTimeField()
    operation_id = serializers.CharField(max_length=80)


class StripsSerializer(serializers.Serializer[Any]):
    hall = serializers.CharField(max_length=60)
    strips = serializers.IntegerField(min_value=1, max_value=20_000)


class AllocateSerializer(serializers.Serializer[Any]):
    halls = StripsSerializer(many=True)


class PlaceSerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField()


class HallRangeSerializer(serializers.Serializer[Any]):
    first = serializers.IntegerField(min_value=1)
    last = serializers.IntegerField(min_value=1)
    idempotency_key = serializers.CharField(max_length=80, required=False, allow_blank=True)


class HallClaimSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=ClaimKind.choices)
    serial = serializers.IntegerField(min_value=1)
    idempotency_key = serializers.CharField(max_length=80, required=False, allow_blank=True)


def _network_game(request: Request, code: str) -> NetworkGame:
    _central_operator(request)
    game = NetworkGame.objects.select_related("network").filter(code=code).first()
    if game is None:
        raise NotFound(_("No network game %(code)s.") % {"code": code}, code="unknown_network_game")
    return game


def _central_operator(request: Request) -> None:
    if not actor(request).is_staff:
        raise PermissionDenied(
            _("Only the central's operators run network games."), code="not_central_operator"
        )


def _hall_game(request: Request, hall_game_id: int, *roles: str) -> HallGame:
    return access.get_for_user(
        HallGame.objects.select_related("venue", "game", "series"),
        request.user,
        *roles,
        label="network game",
        pk=hall_game_id,
    )


def _shown(game: NetworkGame) -> dict[str, Any]:
    return {
        "code": game.code,
        "network": game.network.code,
        "state": game.state,
        "card_price": str(game.card_price),
        "sales_deadline": game.sales_deadline.isoformat(),
        "halls": [
            {"hall": a.venue.licence_number, "first": a.first_serial, "last": a.last_serial}
            for a in game.allocations.select_related("venue").order_by("first_serial")
        ],
        "cards_sold": game.cards_sold,
        "sales_total": str(game.sales_total),
        "prizes": {
            "line": None if game.line_prize is None else str(game.line_prize),
            "bingo": None if game.bingo_prize is None else str(game.bingo_prize),
            "hall": None if game.hall_prize is None else str(game.hall_prize),
        },
        "balls": list(game.balls.order_by("ordinal").values_list("number", flat=True)),
        "decided": [
            {
                "prize": p.kind,
                "scope": p.scope,
                "ordinal": p.ordinal,
                "amount": str(p.amount),
                "winners": p.winners,
            }
            for p in game.prizes.order_by("pk")
        ],
        "draw": commitments.draw_view(game),  # the commitment, the sales digest, the seed once revealed
    }


class NetworkGamesView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_create",
        summary="Create a network game (the central's operator)",
        description="201, or 200 for a retry with the same operation_id. 400 bad_card_price, bad_percent, "
        "bad_deadline; 409 game_exists, operation_id_reused.",
        request=NetworkGameCreateSerializer,
        responses={201: dict, 200: dict, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        _central_operator(request)
        data = valid(NetworkGameCreateSerializer, request.data)
        network = Network.objects.filter(code=data.pop("network")).first()
        if network is None:
            raise NotFound(_("No such network."), code="unknown_network")
        existed = NetworkGame.objects.filter(operation_id=data["operation_id"]).exists()
        game = central.create_game(network=network, actor=actor(request), **data)
        return Response(_shown(game), status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED)


class NetworkGameView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_detail",
        summary="A network game at the central",
        responses={200: dict, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, code: str) -> Response:
        return Response(_shown(_network_game(request, code)))


class AllocateView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_allocate",
        summary="Allocate the network series to the member halls (strips per hall)",
        request=AllocateSerializer,
        responses={200: dict, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, code: str) -> Response:
        game = _network_game(request, code)
        data = valid(AllocateSerializer, request.data)
        strips = [(row["hall"], row["strips"]) for row in data["halls"]]
        central.allocate(game=game, strips=strips, actor=actor(request))
        game.refresh_from_db()
        return Response(_shown(game))


def _step(name: str, summary: str, call: Any) -> type[HallAPIView]:
    class StepView(HallAPIView):
        @extend_schema(
            operation_id=f"simultaneous_{name}",
            summary=summary,
            request=None,
            responses={200: dict, **error_responses(403, 404, 409)},
            tags=TAGS,
        )
        def post(self, request: Request, code: str) -> Response:
            game = _network_game(request, code)
            call(game=game, actor=actor(request))
            game.refresh_from_db()
            return Response(_shown(game))

    StepView.__name__ = f"{name.title()}View"
    return StepView


class PlaceView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_place",
        summary="Place a network game in a room of the hall (operator)",
        request=PlaceSerializer,
        responses={200: dict, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, hall_game_id: int) -> Response:
        hall_game = _hall_game(request, hall_game_id, Role.OPERATOR)
        data = valid(PlaceSerializer, request.data)
        room = Room.objects.filter(pk=data["room"], venue_id=hall_game.venue_id).first()
        if room is None:
            raise NotFound(_("No such room in this venue."), code="unknown_room")
        hall_game = venue.place(hall_game=hall_game, room=room, actor=actor(request))
        return Response(venue.payload_of(hall_game))


class HallGameView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_hall_game",
        summary="A network game as this hall plays it",
        responses={200: dict, **error_responses(403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, hall_game_id: int) -> Response:
        return Response(venue.payload_of(_hall_game(request, hall_game_id, *ANY_ROLE)))


def _range_view(name: str, summary: str, call: Any) -> type[HallAPIView]:
    class RangeView(HallAPIView):
        @extend_schema(
            operation_id=f"simultaneous_{name}",
            summary=summary,
            request=HallRangeSerializer,
            responses={201: dict, **error_responses(400, 403, 404, 409)},
            tags=TAGS,
        )
        def post(self, request: Request, hall_game_id: int) -> Response:
            hall_game = _hall_game(request, hall_game_id, Role.CASHIER)
            data = valid(HallRangeSerializer, request.data)
            operation = call(
                hall_game=hall_game,
                first=data["first"],
                last=data["last"],
                actor=actor(request),
                idempotency_key=data.get("idempotency_key") or None,
            )
            shown = {"operation": operation.pk, "cards": operation.cards, "amount": str(operation.amount)}
            return Response(shown, status=status.HTTP_201_CREATED)

    RangeView.__name__ = f"{name.title()}View"
    return RangeView


class RefundView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_refund",
        summary="Refund the cards the central did not count (cashier)",
        request=None,
        responses={200: dict, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, hall_game_id: int) -> Response:
        hall_game = _hall_game(request, hall_game_id, Role.CASHIER)
        refunds = venue.refund_unconfirmed(hall_game=hall_game, actor=actor(request))
        hall_game.refresh_from_db()
        return Response({**venue.payload_of(hall_game), "refunds": [r.pk for r in refunds]})


class ClaimView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_claim",
        summary="File a Line or Bingo claim in the hall (caller)",
        request=HallClaimSerializer,
        responses={201: dict, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, hall_game_id: int) -> Response:
        hall_game = _hall_game(request, hall_game_id, Role.CALLER)
        data = valid(HallClaimSerializer, request.data)
        made = venue.claim(
            hall_game=hall_game,
            kind=data["kind"],
            serial=data["serial"],
            actor=actor(request),
            idempotency_key=data.get("idempotency_key") or None,
        )
        shown = {
            "claim": made.pk,
            "valid": made.valid,
            "refusal": made.refusal,
            "reason": made.reason,
            "bound_ordinal": made.bound_ordinal,
        }
        return Response(shown, status=status.HTTP_201_CREATED)


class NoMoreClaimsView(HallAPIView):
    @extend_schema(
        operation_id="simultaneous_no_more_claims",
        summary="No more claims in this hall for the last ball (caller): the answer to “any more?”",
        description=(
            "The central's claim window closes once every hall with cards in play answered for the last "
            "ball (else at its time limit). A repeat for the same ball is a no-op. 403; 404; 409 not_playing."
        ),
        request=None,
        responses={200: dict, **error_responses(403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request, hall_game_id: int) -> Response:
        hall_game = _hall_game(request, hall_game_id, Role.CALLER)
        hall_game = venue.no_more_claims(hall_game=hall_game, actor=actor(request))
        return Response({**venue.payload_of(hall_game), "no_more_claims_at": hall_game.no_more_claims_at})


urlpatterns = [
    path("simultaneous/games/", NetworkGamesView.as_view(), name="simultaneous-games"),
    path("simultaneous/games/<str:code>/", NetworkGameView.as_view(), name="simultaneous-game"),
    path("simultaneous/games/<str:code>/allocate/", AllocateView.as_view(), name="simultaneous-allocate"),
    path(
        "simultaneous/games/<str:code>/open/",
        _step("open", "Open the sales network-wide", central.open_sales).as_view(),
        name="simultaneous-open",
    ),
    path(
        "simultaneous/games/<str:code>/close/",
        _step("close", "Close the sales network-wide", central.close_sales).as_view(),
        name="simultaneous-close",
    ),
    path(
        "simultaneous/games/<str:code>/void/",
        _step("void", "Void a network game in which nothing was sold", central.void_game).as_view(),
        name="simultaneous-void",
    ),
    path(
        "simultaneous/games/<str:code>/start/",
        _step("start", "Start the central draw", central.start_draw).as_view(),
        name="simultaneous-start",
    ),
    path(
        "simultaneous/games/<str:code>/decide/",
        _step("decide", "End the claim window and decide the prizes", central.decide).as_view(),
        name="simultaneous-decide",
    ),
    path(
        "simultaneous/hall-games/<int:hall_game_id>/", HallGameView.as_view(), name="simultaneous-hall-game"
    ),
    path("simultaneous/hall-games/<int:hall_game_id>/place/", PlaceView.as_view(), name="simultaneous-place"),
    path(
        "simultaneous/hall-games/<int:hall_game_id>/sell/",
        _range_view("sell", "Sell cards of the hall's allocation (cashier)", venue.sell).as_view(),
        name="simultaneous-sell",
    ),
    path(
        "simultaneous/hall-games/<int:hall_game_id>/return/",
        _range_view("return", "Take back sold cards while on sale (cashier)", venue.return_cards).as_view(),
        name="simultaneous-return",
    ),
    path(
        "simultaneous/hall-games/<int:hall_game_id>/refund/", RefundView.as_view(), name="simultaneous-refund"
    ),
    path(
        "simultaneous/hall-games/<int:hall_game_id>/claims/", ClaimView.as_view(), name="simultaneous-claim"
    ),
    path(
        "simultaneous/hall-games/<int:hall_game_id>/no-more-claims/",
        NoMoreClaimsView.as_view(),
        name="simultaneous-no-more-claims",
    ),
]
