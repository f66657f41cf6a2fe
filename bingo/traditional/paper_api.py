"""REST doors of paper cards (bingo.traditional.services.paper): import a pre-printed series, print sheets of
a series for
a game, sell and print a player's cards at the table, the printed-card register of a game, the paper stock."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.traditional.models import CardSeries, Game, PrintedCards, StockState
from bingo.traditional.serializers import SaleOperationSerializer, SeriesSerializer
from bingo.traditional.services import paper, stock
from halls import access
from halls.api import HallAPIView, actor, valid
from halls.cashier.api.printed import till_to_print_at
from halls.errors import InvalidInput
from halls.models import Role, Venue
from halls.serializers import error_responses, money_field, slug

MAX_FILE_BYTES = 12 * 1024 * 1024  # 120,000 cards of about 60 characters, with room to spare


class SeriesImportSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    code = serializers.CharField(max_length=40)
    face_value = money_field(min_value=0)
    reference = serializers.CharField(max_length=120, required=False, default="", allow_blank=True)
    file = serializers.FileField(
        help_text="The series' CSV: serial,n1..n15[,security_code] (bingo.traditional.cardimport)."
    )


class PrintSheetsSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField(help_text="The game the cards are printed for.")
    first = serializers.IntegerField(min_value=1, required=False, help_text="First serial (default 1).")
    last = serializers.IntegerField(min_value=1, required=False, help_text="Last serial (default the last).")


class TablePrintSerializer(serializers.Serializer[Any]):
    series = serializers.CharField(max_length=40, help_text="Code of a series of the game's venue.")
    count = serializers.IntegerField(min_value=1, max_value=60)
    till = serializers.IntegerField(required=False, allow_null=True, help_text="Default: your open shift's.")
    idempotency_key = serializers.CharField(max_length=80, required=False, allow_null=True, allow_blank=True)


class StockMoveSerializer(serializers.Serializer[Any]):
    to_state = serializers.ChoiceField(choices=StockState.choices)
    first = serializers.IntegerField(required=False, help_text="First serial moved (default 1).")
    last = serializers.IntegerField(required=False, help_text="Last serial moved (default the series' last).")
    game = serializers.IntegerField(
        required=False, allow_null=True, help_text="Issued: the game (required). Returned: checked if given."
    )
    note = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True, help_text="Received: the delivery note."
    )


class StockRangeSerializer(serializers.Serializer[Any]):
    first = serializers.IntegerField()
    last = serializers.IntegerField()
    cards = serializers.IntegerField()
    state = serializers.ChoiceField(choices=StockState.choices)
    game = serializers.IntegerField(allow_null=True, help_text="Issued: to which game; returned: from which.")
    game_number = serializers.IntegerField(allow_null=True)


class StockCountsSerializer(serializers.Serializer[Any]):
    not_received = serializers.IntegerField()
    received = serializers.IntegerField()
    in_stock = serializers.IntegerField()
    issued = serializers.IntegerField()
    returned = serializers.IntegerField()
    destroyed = serializers.IntegerField()


class StockSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    card_count = serializers.IntegerField()
    ranges = StockRangeSerializer(many=True)
    counts = StockCountsSerializer()


def stock_data(held: stock.Stock) -> dict[str, Any]:
    """A series' paper: its ranges in serial order and the cards in each state (they add up to the series)."""
    counts = held.counts
    return {
        "series": held.series.code,
        "card_count": held.series.card_count,
        "ranges": [
            {
                "first": s.first,
                "last": s.last,
                "cards": s.cards,
                "state": s.state,
                "game": s.game,
                "game_number": held.games[s.game].number if s.game in held.games else None,
            }
            for s in held.spans
        ],
        "counts": {"not_received": counts.pop(""), **counts},
    }


class PrintedCardsSerializer(serializers.ModelSerializer[PrintedCards]):
    series = slug("code")
    printed_by = slug("username")

    class Meta:
        model = PrintedCards
        fields = ["id", "series", "first_serial", "last_serial", "cards", "medium", "sale", "sha256"]
        fields += ["printed_by", "printed_at"]
        read_only_fields = fields


class CardCheckSerializer(serializers.Serializer[Any]):
    venue = serializers.CharField()
    series = serializers.CharField()
    serial = serializers.IntegerField()
    face_value = money_field()
    series_cards = serializers.IntegerField()
    grid = serializers.JSONField()
    game = serializers.IntegerField(allow_null=True)
    game_number = serializers.IntegerField(allow_null=True)
    room = serializers.CharField(allow_null=True)
    game_state = serializers.CharField(allow_null=True)
    sold = serializers.BooleanField()


def check_data(check: paper.CardCheck) -> dict[str, Any]:
    game = check.game
    return {
        "venue": check.venue,
        "series": check.series,
        "serial": check.serial,
        "face_value": check.face_value,
        "series_cards": check.series_cards,
        "grid": check.grid,
        "game": game.pk if game else None,
        "game_number": game.number if game else None,
        "room": game.room.name if game else None,
        "game_state": game.state if game else None,
        "sold": check.sold,
    }


def _series(request: Request, series_id: int, *roles: str) -> CardSeries:
    return access.get_for_user(
        CardSeries.objects.select_related("venue"), request.user, *roles, label="series", pk=series_id
    )


def _game_of(request: Request, series: CardSeries, game_id: int, *roles: str) -> Game:
    return access.get_for_user(
        Game.objects.filter(room__venue_id=series.venue_id).select_related("room__venue"),
        request.user,
        *roles,
        venue_path="room.venue_id",
        label="game",
        pk=game_id,
    )


def base_url(request: Request | Any) -> str:
    return str(request.build_absolute_uri("/"))


class SeriesImportView(HallAPIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="series_import",
        summary="Import a pre-printed series from its CSV file, all or nothing (operator)",
        description=(
            "400 bad_cards with details.problems (line, serial, code, message of every problem) and "
            "details.bad_serials when any card or strip is wrong: nothing is stored. 409 series_exists."
        ),
        request={"multipart/form-data": SeriesImportSerializer},
        responses={201: SeriesSerializer, **error_responses(400, 403, 404, 409)},
        tags=["series"],
    )
    def post(self, request: Request) -> Response:
        data = valid(SeriesImportSerializer, request.data)
        venue = access.get_for_user(
            Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=data["venue"]
        )
        upload = data["file"]
        if upload.size > MAX_FILE_BYTES:
            raise InvalidInput(gettext("The file is larger than 12 MB."), code="file_too_large")
        created = paper.import_series(
            venue=venue,
            code=data["code"],
            face_value=data["face_value"],
            data=upload.read(),
            actor=actor(request),
            reference=data["reference"],
        )
        return Response(SeriesSerializer(created).data, status=status.HTTP_201_CREATED)


class PrintSheetsView(HallAPIView):
    @extend_schema(
        operation_id="series_print_sheets",
        summary="Print cards of a series for a game as a PDF of strips, registered to the game (operator)",
        request=PrintSheetsSerializer,
        responses={
            (200, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(400, 403, 404, 409),
        },
        tags=["series"],
    )
    def post(self, request: Request, series_id: int) -> HttpResponse:
        series = _series(request, series_id, Role.OPERATOR)
        data = valid(PrintSheetsSerializer, request.data)
        game = _game_of(request, series, data["game"], Role.OPERATOR)
        first, last = data.get("first", 1), data.get("last", series.card_count)
        _row, pdf = paper.print_sheets(
            series=series, game=game, first=first, last=last, actor=actor(request), base_url=base_url(request)
        )
        response = HttpResponse(pdf, content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="series-{series.code}-{first}-{last}.pdf"'
        return response


class StockView(HallAPIView):
    @extend_schema(
        operation_id="series_stock",
        summary="A series' paper stock: its ranges of serials with their state, and the cards in each state",
        responses={200: StockSerializer, **error_responses(403, 404)},
        tags=["series"],
    )
    def get(self, request: Request, series_id: int) -> Response:
        series = _series(request, series_id, Role.OPERATOR, Role.CASHIER, Role.CALLER, Role.INSPECTOR)
        return Response(stock_data(stock.stock_of(series)))

    @extend_schema(
        operation_id="series_stock_move",
        summary="Move a range of a series' paper: received, in stock, issued to a game, returned, destroyed "
        "(operator)",
        description=(
            "Serials first..last (default the whole series) move only if every one of them may: "
            "received ← not yet recorded; in stock ← received or returned; issued (to a game) ← in stock; "
            "returned ← issued (one game's at a time); destroyed ← received, in stock or returned. Otherwise "
            "409 bad_stock_move naming the ranges at fault (details.offending: first, last, state, game; "
            "details.serials), several_games, issued_elsewhere, game_not_open; 400 range_not_in_series, "
            "bad_range, game_required. Nothing changes when refused. Answers the series' stock after it."
        ),
        request=StockMoveSerializer,
        responses={200: StockSerializer, **error_responses(400, 403, 404, 409)},
        tags=["series"],
    )
    def post(self, request: Request, series_id: int) -> Response:
        series = _series(request, series_id, Role.OPERATOR)
        data = valid(StockMoveSerializer, request.data)
        game = _game_of(request, series, data["game"], Role.OPERATOR) if data.get("game") else None
        held = stock.move_paper(
            series=series,
            to_state=data["to_state"],
            actor=actor(request),
            first=data.get("first"),
            last=data.get("last"),
            game=game,
            note=data["note"],
        )
        return Response(stock_data(held))


class PrintedRegisterView(HallAPIView):
    @extend_schema(
        operation_id="games_printed_cards",
        summary="The register of cards printed for a game (R-04)",
        responses={200: PrintedCardsSerializer(many=True), **error_responses(403, 404)},
        tags=["games"],
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = access.get_for_user(
            Game.objects.select_related("room"),
            request.user,
            Role.OPERATOR,
            Role.CALLER,
            Role.CASHIER,
            venue_path="room.venue_id",
            label="game",
            pk=game_id,
        )
        rows = PrintedCards.objects.filter(game=game).select_related("series", "printed_by")
        return Response(PrintedCardsSerializer(rows, many=True).data)


class TablePrintView(HallAPIView):
    @extend_schema(
        operation_id="games_table_print",
        summary="Sell a player's cards and print them at once as a ticket, registered to the game (cashier)",
        description=(
            "The next unsold cards of the series, sold into your open shift's drawer and printed at the "
            "till's ESC/POS printer (or answered as a PDF when it has none). 503 printer_unreachable: the "
            "sale stands; retry with the same idempotency_key to print the same cards."
        ),
        request=TablePrintSerializer,
        responses={
            (201, "application/json"): SaleOperationSerializer,
            (201, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(400, 403, 404, 409),
        },
        tags=["games"],
    )
    def post(self, request: Request, game_id: int) -> HttpResponse:
        game = access.get_for_user(
            Game.objects.select_related("room__venue"),
            request.user,
            Role.CASHIER,
            venue_path="room.venue_id",
            label="game",
            pk=game_id,
        )
        data = valid(TablePrintSerializer, request.data)
        series = access.get_for_user(
            CardSeries.objects.filter(venue_id=game.room.venue_id).select_related("venue"),
            request.user,
            Role.CASHIER,
            label="series",
            code=data["series"],
        )
        till = till_to_print_at(request, game.room.venue_id, data.get("till"))
        done = paper.print_at_table(
            game=game,
            series=series,
            count=data["count"],
            actor=actor(request),
            till=till,
            base_url=base_url(request),
            idempotency_key=data.get("idempotency_key") or None,
        )
        if done.result.pdf is not None:
            response = HttpResponse(done.result.pdf, content_type="application/pdf", status=201)
            response["Content-Disposition"] = f'inline; filename="cards-{game.pk}-{done.sale.pk}.pdf"'
            return response
        body = {**SaleOperationSerializer(done.sale).data, "printer": done.result.printer}
        return Response(body, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("series/import/", SeriesImportView.as_view(), name="api-series-import"),
    path("series/<int:series_id>/print/", PrintSheetsView.as_view(), name="api-series-print"),
    path("series/<int:series_id>/stock/", StockView.as_view(), name="api-series-stock"),
    path("games/<int:game_id>/printed-cards/", PrintedRegisterView.as_view(), name="api-game-printed"),
    path("games/<int:game_id>/table-print/", TablePrintView.as_view(), name="api-game-table-print"),
]
