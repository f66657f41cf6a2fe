"""Electronic bingo's archive and statistics doors (R-01...R-03), read-only, for the venue's operator:
a game's recall (and its purchases and cards a page at a time), a terminal's or a player card's part of a
game, and the statistics per local day and speciality (JSON, or CSV like the cashier's day report).

Another venue's game, terminal, card or speciality answers 404 as if it did not exist.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from typing import Any

from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from bingo.electronic.models import ElectronicGame, Speciality, Terminal
from bingo.electronic.services import recall, reports
from halls import access
from halls.api import HallAPIView, valid
from halls.cashier.models import PlayerCard
from halls.errors import NotFound
from halls.models import Role, Venue
from halls.serializers import error_responses

TAGS = ["electronic"]
MAX_ID = 2**63 - 1
FIRST_DAY, LAST_DAY = date(2000, 1, 1), date(2999, 12, 31)
ANSWER = OpenApiResponse(OpenApiTypes.OBJECT, description="bingo.electronic.services.recall / reports")


def _day(value: date) -> None:
    if not FIRST_DAY <= value <= LAST_DAY:
        raise serializers.ValidationError(_("A day between 2000 and 2999."))


class StatisticsQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    date_from = serializers.DateField(validators=[_day], help_text="the first day (the venue's)")
    date_to = serializers.DateField(validators=[_day], help_text="the last day, included")
    speciality = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, default=None, help_text="default: every one"
    )


class PageQuerySerializer(serializers.Serializer[Any]):
    after = serializers.IntegerField(min_value=0, max_value=MAX_ID, required=False, default=None)
    limit = serializers.IntegerField(
        min_value=1, max_value=recall.MAX_PAGE, required=False, default=recall.PAGE
    )


class SubjectQuerySerializer(serializers.Serializer[Any]):
    terminal = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False, default=None)
    card = serializers.CharField(
        max_length=40, required=False, default="", help_text="a player card's number"
    )


def _game(request: Request, game_id: int) -> ElectronicGame:
    return access.get_for_user(
        ElectronicGame.objects.select_related("speciality", "version"),
        request.user,
        Role.OPERATOR,
        venue_path="speciality.venue_id",
        label="game",
        pk=game_id,
    )


def _statistics(request: Request) -> reports.Report:
    query = valid(StatisticsQuerySerializer, request.query_params)
    venue = access.get_for_user(
        Venue.objects.all(), request.user, Role.OPERATOR, venue_path="pk", label="venue", pk=query["venue"]
    )
    speciality = None
    if query["speciality"] is not None:
        speciality = Speciality.objects.filter(pk=query["speciality"], venue=venue).first()
        if speciality is None:
            raise NotFound(
                _("No speciality %(id)s in this venue.") % {"id": query["speciality"]},
                code="unknown_speciality",
            )
    return reports.statistics(
        venue=venue, first=query["date_from"], last=query["date_to"], speciality=speciality
    )


class StatisticsView(HallAPIView):
    @extend_schema(
        operation_id="electronic_statistics",
        summary="Electronic bingo's statistics per local day and speciality (R-02, R-03)",
        description=(
            "Operator. Games played, cards sold, amounts played, prizes by combination (won and not won), "
            "pool funding and awards, return to players; a game counts on the venue's day it finished. "
            "400 bad_range / range_too_long (more than 93 days); 404 unknown_venue / unknown_speciality."
        ),
        parameters=[StatisticsQuerySerializer],
        responses={200: ANSWER, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request) -> Response:
        return Response(_statistics(request).as_dict())


class StatisticsCsvView(HallAPIView):
    @extend_schema(
        operation_id="electronic_statistics_csv",
        summary="The statistics as CSV (day, speciality, section, item, count, amount)",
        description="Operator. The same query and refusals as the JSON report.",
        parameters=[StatisticsQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV"),
            **error_responses(400, 403, 404),
        },
        tags=TAGS,
    )
    def get(self, request: Request) -> HttpResponse:
        report = _statistics(request)
        out = io.StringIO()
        csv.writer(out).writerows(reports.rows(report))
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        name = f"electronic-{report.venue_id}-{report.first.isoformat()}-{report.last.isoformat()}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class GameRecallView(HallAPIView):
    @extend_schema(
        operation_id="electronic_game_recall",
        summary="A game's whole record (R-01): sales, first page of purchases, balls, prizes, pools, ledger",
        description="Operator. `limit`: purchases in the first page (next pages: recall/purchases/).",
        parameters=[PageQuerySerializer],
        responses={200: ANSWER, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        query = valid(PageQuerySerializer, request.query_params)
        return Response(recall.game_recall(game, limit=query["limit"]))


class GamePurchasesView(HallAPIView):
    @extend_schema(
        operation_id="electronic_game_recall_purchases",
        summary="A page of a game's purchases, after the purchase id `after`",
        parameters=[PageQuerySerializer],
        responses={200: ANSWER, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        query = valid(PageQuerySerializer, request.query_params)
        return Response(recall.purchases_page(game, after=query["after"], limit=query["limit"]))


class GameCardsView(HallAPIView):
    @extend_schema(
        operation_id="electronic_game_recall_cards",
        summary="A page of a game's cards (cells, purchase, prizes won), after the card id `after`",
        parameters=[PageQuerySerializer],
        responses={200: ANSWER, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        query = valid(PageQuerySerializer, request.query_params)
        return Response(recall.cards_page(game, after=query["after"], limit=query["limit"]))


class TerminalRecallView(HallAPIView):
    @extend_schema(
        operation_id="electronic_terminal_recall",
        summary="A terminal's (or a player card's) part of a game: cards, marks per ball, prizes, ledger",
        description=(
            "Operator. `terminal` (id) and/or `card` (a player card's number) of the game's venue; "
            "400 no_subject when neither; 404 unknown_terminal / unknown_card."
        ),
        parameters=[SubjectQuerySerializer],
        responses={200: ANSWER, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        query = valid(SubjectQuerySerializer, request.query_params)
        venue_id = game.speciality.venue_id
        terminal = None
        if query["terminal"] is not None:
            terminal = (
                Terminal.objects.select_related("device")
                .filter(pk=query["terminal"], speciality__venue_id=venue_id)
                .first()
            )
            if terminal is None:
                raise NotFound(
                    _("No terminal %(id)s in this venue.") % {"id": query["terminal"]},
                    code="unknown_terminal",
                )
        card = None
        if query["card"]:
            card = PlayerCard.objects.filter(number=query["card"].strip(), venue_id=venue_id).first()
            if card is None:
                raise NotFound(_("No such player card in this venue."), code="unknown_card")
        return Response(recall.terminal_recall(game, terminal=terminal, player_card=card))


urlpatterns = [
    path("reports/statistics/", StatisticsView.as_view(), name="electronic-statistics"),
    path("reports/statistics/csv/", StatisticsCsvView.as_view(), name="electronic-statistics-csv"),
    path("games/<int:game_id>/recall/", GameRecallView.as_view(), name="electronic-game-recall"),
    path(
        "games/<int:game_id>/recall/purchases/",
        GamePurchasesView.as_view(),
        name="electronic-game-recall-purchases",
    ),
    path("games/<int:game_id>/recall/cards/", GameCardsView.as_view(), name="electronic-game-recall-cards"),
    path(
        "games/<int:game_id>/recall/terminal/",
        TerminalRecallView.as_view(),
        name="electronic-terminal-recall",
    ),
]
