"""/api/cashier/venues/<venue>/cards/ and /players/: player cards at the cashier (cashier role).

A card in a path is its number as printed (spaces or dashes allowed, URL-encoded) or its QR payload
"TJ:<number>"; a mistyped number answers 400 bad_card_number, a card of another venue 404 unknown_card.
Money moves take an optional `idempotency_key`: 201 for a new move, 200 for a retry (the first move).
Amounts are decimal strings ("12.50"); zero, negative or not whole cents answers 400 bad_amount naming the
field.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpResponse
from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from halls import access
from halls.api import HallAPIView, actor, valid
from halls.cashier import cardnumber
from halls.cashier.api.printed import printed_answer, till_to_print_at
from halls.cashier.models import Means, Player, PlayerCard
from halls.cashier.services import player_cards
from halls.errors import NotFound
from halls.models import Role, Venue
from halls.money import PAYMENT_DIGITS
from halls.serializers import ErrorSerializer, error_responses, money_field

# --- Shapes ---------------------------------------------------------------------------------------------


class PlayerCardSerializer(serializers.Serializer[Any]):
    number = serializers.CharField(help_text="16 digits, the last a Luhn check digit.")
    printed = serializers.SerializerMethodField(help_text="The number grouped in fours, as printed.")
    qr = serializers.SerializerMethodField(help_text='The QR payload a scanner reads: "TJ:<number>".')
    state = serializers.CharField(help_text="active or blocked.")
    blocked_reason = serializers.CharField()
    balance = serializers.SerializerMethodField(help_text="What the hall owes the bearer, e.g. '12.50'.")
    player = serializers.IntegerField(source="player_id", allow_null=True)
    replaced_by = serializers.SerializerMethodField(help_text="The replacement card's number, if replaced.")
    created_at = serializers.DateTimeField()

    def get_printed(self, card: PlayerCard) -> str:
        return cardnumber.printed(card.number)

    def get_qr(self, card: PlayerCard) -> str:
        return cardnumber.qr_payload(card.number)

    def get_balance(self, card: PlayerCard) -> str:
        return str(player_cards.balance(card))

    def get_replaced_by(self, card: PlayerCard) -> str | None:
        return card.replaced_by.number if card.replaced_by_id and card.replaced_by else None


class PlayerCardIssueSerializer(serializers.Serializer[Any]):
    player = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="A registered player to link (optional)."
    )


class PlayerCardMoveSerializer(serializers.Serializer[Any]):
    card = PlayerCardSerializer()
    transaction = serializers.IntegerField(source="transaction.pk")
    kind = serializers.CharField(source="transaction.kind")
    amount = money_field(PAYMENT_DIGITS)
    balance = money_field(PAYMENT_DIGITS, help_text="The card's balance now.")
    shift = serializers.IntegerField(source="transaction.shift_id", allow_null=True)
    at = serializers.DateTimeField(source="transaction.created_at")


KEY_HELP = "Optional; a retry with the same key answers the first move (200) and moves nothing."


class PlayerCardCashInSerializer(serializers.Serializer[Any]):
    amount = serializers.CharField(max_length=40, help_text="Decimal string above 0 in whole cents.")
    means = serializers.ChoiceField(choices=Means.choices, default=Means.CASH)
    idempotency_key = serializers.CharField(
        max_length=player_cards.KEY_LENGTH, required=False, help_text=KEY_HELP
    )


class PlayerCardCashOutSerializer(serializers.Serializer[Any]):
    amount = serializers.CharField(
        max_length=40,
        required=False,
        allow_null=True,
        help_text="Omit (or null) to pay out the whole balance.",
    )
    idempotency_key = serializers.CharField(
        max_length=player_cards.KEY_LENGTH, required=False, help_text=KEY_HELP
    )
    identification = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="The bearer's identification at the cage (required at or above the AML threshold).",
    )


class PlayerCardHistoryQuerySerializer(serializers.Serializer[Any]):
    limit = serializers.IntegerField(min_value=1, max_value=500, default=100)


class PlayerCardHistoryEntrySerializer(serializers.Serializer[Any]):
    transaction = serializers.IntegerField(source="transaction_id")
    kind = serializers.CharField()
    kind_label = serializers.CharField()
    amount = money_field(PAYMENT_DIGITS, help_text="+ money in, - money out.")
    balance = money_field(PAYMENT_DIGITS, help_text="The card's balance after this move.")
    at = serializers.DateTimeField()
    by = serializers.CharField()
    device = serializers.CharField()
    memo = serializers.CharField()


class PlayerCardHistorySerializer(serializers.Serializer[Any]):
    card = PlayerCardSerializer()
    entries = PlayerCardHistoryEntrySerializer(many=True)


class PlayerCardBlockSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(max_length=200, help_text="Why: lost, stolen...")


class PlayerCardReplacementSerializer(serializers.Serializer[Any]):
    old = PlayerCardSerializer()
    new = PlayerCardSerializer()
    moved = money_field(PAYMENT_DIGITS, help_text="The balance the new card received.")
    transaction = serializers.IntegerField(source="transaction.pk", allow_null=True, default=None)


class CashierPlayerRequestSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=150)
    id_document = serializers.CharField(max_length=40, required=False, allow_blank=True, default="")


class CashierPlayerSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    id_document = serializers.CharField()
    created_at = serializers.DateTimeField()
    cards = serializers.SerializerMethodField()

    def get_cards(self, player: Player) -> list[str]:
        return list(player.cards.order_by("pk").values_list("number", flat=True))


class PlayerCardLinkSerializer(serializers.Serializer[Any]):
    player = serializers.IntegerField(
        allow_null=True, min_value=1, help_text="The player's id; null unlinks."
    )


class PlayerCardPrintSerializer(serializers.Serializer[Any]):
    till = serializers.IntegerField(
        required=False, min_value=1, help_text="The till to print at; left out: your open shift's till."
    )


class PlayerCardPrintedSerializer(serializers.Serializer[Any]):
    medium = serializers.CharField(help_text="printer (sent to the till's printer).")
    printer = serializers.CharField(help_text="tcp://host:port")
    sha256 = serializers.CharField()


# --- Lookups --------------------------------------------------------------------------------------------


def _venue(request: Request, venue_id: int, *roles: str) -> Venue:
    return access.venue_for(request.user, venue_id, *roles)


def card_of(request: Request, venue_id: int, code: str, *roles: str) -> PlayerCard:
    """The venue's card named by `code` (number or QR payload), for a user with one of `roles` there."""
    venue = _venue(request, venue_id, *roles)
    card = player_cards.find_card(venue_id=venue.pk, code=code, field="card")
    return PlayerCard.objects.select_related("replaced_by").get(pk=card.pk)


def _player(venue: Venue, player_id: int) -> Player:
    player = Player.objects.filter(venue=venue, pk=player_id).first()
    if player is None:
        raise NotFound(
            gettext("No player %(player)s in this venue.") % {"player": player_id}, code="unknown_player"
        )
    return player


def _key(data: dict[str, Any]) -> str:
    return str(data.get("idempotency_key") or uuid.uuid4().hex)


def _answer(move: player_cards.CardMove) -> Response:
    code = status.HTTP_200_OK if move.replayed else status.HTTP_201_CREATED
    card = PlayerCard.objects.select_related("replaced_by").get(pk=move.card.pk)
    return Response(
        PlayerCardMoveSerializer(
            {"card": card, "transaction": move.transaction, "amount": move.amount, "balance": move.balance}
        ).data,
        status=code,
    )


CARD_PARAMS = [
    OpenApiParameter(
        "code", str, OpenApiParameter.PATH, description='The card\'s number or QR payload "TJ:<number>".'
    )
]


# --- Views ----------------------------------------------------------------------------------------------


class CardsView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_issue",
        summary="Issue a new anonymous player card (cashier)",
        description="201 with the card (balance 0). 404 unknown_player.",
        request=PlayerCardIssueSerializer,
        responses={201: PlayerCardSerializer, **error_responses(400, 403, 404)},
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.CASHIER)
        data = valid(PlayerCardIssueSerializer, request.data)
        player = _player(venue, data["player"]) if data.get("player") else None
        card = player_cards.issue_card(venue_id=venue.pk, actor=actor(request), player=player)
        return Response(PlayerCardSerializer(card).data, status=status.HTTP_201_CREATED)


class CardView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_show",
        summary="A card by its number or QR payload: state and balance (cashier)",
        description="400 bad_card_number (a digit mistyped); 404 unknown_card.",
        parameters=CARD_PARAMS,
        responses={200: PlayerCardSerializer, **error_responses(400, 403, 404)},
        tags=["cashier cards"],
    )
    def get(self, request: Request, venue_id: int, code: str) -> Response:
        return Response(PlayerCardSerializer(card_of(request, venue_id, code, Role.CASHIER)).data)


class CardHistoryView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_history",
        summary="A card's moves, newest first, with the balance after each (cashier)",
        parameters=[*CARD_PARAMS, PlayerCardHistoryQuerySerializer],
        responses={200: PlayerCardHistorySerializer, **error_responses(400, 403, 404)},
        tags=["cashier cards"],
    )
    def get(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        query = valid(PlayerCardHistoryQuerySerializer, request.query_params)
        entries = player_cards.history(card, limit=query["limit"])
        return Response(PlayerCardHistorySerializer({"card": card, "entries": entries}).data)


class CardCashInView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_cash_in",
        summary="Load money onto a card, paid in cash or by bank card (cashier, on an open shift)",
        description=(
            "201 for a new move, 200 for a retry. 400 bad_amount (field amount), bad_card_number; 404 "
            "unknown_card; 409 card_blocked, no_open_shift, idempotency_key_reused."
        ),
        parameters=CARD_PARAMS,
        request=PlayerCardCashInSerializer,
        responses={
            201: PlayerCardMoveSerializer,
            200: OpenApiResponse(PlayerCardMoveSerializer, description="A retry: the first move."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        data = valid(PlayerCardCashInSerializer, request.data)
        move = player_cards.cash_in(
            card=card, amount=data["amount"], means=data["means"], key=_key(data), actor=actor(request)
        )
        return _answer(move)


class CardCashOutView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_cash_out",
        summary="Pay a card's balance out in cash, part or all of it (cashier, on an open shift)",
        description=(
            "201 for a new move, 200 for a retry. 400 bad_amount (field amount); 404 unknown_card; 409 "
            "card_blocked, insufficient_balance, drawer_short, no_open_shift, idempotency_key_reused, "
            "identification_required (at or above the AML threshold), identification_stale; 404 "
            "unknown_identification."
        ),
        parameters=CARD_PARAMS,
        request=PlayerCardCashOutSerializer,
        responses={
            201: PlayerCardMoveSerializer,
            200: OpenApiResponse(PlayerCardMoveSerializer, description="A retry: the first move."),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        data = valid(PlayerCardCashOutSerializer, request.data)
        amount = data.get("amount")
        move = player_cards.cash_out(
            card=card,
            amount=None if amount is None else amount,
            key=_key(data),
            actor=actor(request),
            identification=data.get("identification"),
        )
        return _answer(move)


class CardBlockView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_block",
        summary="Block a lost or stolen card (cashier): it refuses every operation",
        description="Blocking a blocked card changes nothing. 400 reason_required.",
        parameters=CARD_PARAMS,
        request=PlayerCardBlockSerializer,
        responses={200: PlayerCardSerializer, **error_responses(400, 403, 404)},
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        data = valid(PlayerCardBlockSerializer, request.data)
        card = player_cards.block_card(card=card, reason=data["reason"], actor=actor(request))
        return Response(PlayerCardSerializer(card).data)


class CardUnblockView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_unblock",
        summary="Unblock a card found again (operator)",
        description="409 card_replaced (its balance is on the replacement).",
        parameters=CARD_PARAMS,
        request=None,
        responses={200: PlayerCardSerializer, **error_responses(400, 403, 404, 409)},
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.OPERATOR)
        return Response(PlayerCardSerializer(player_cards.unblock_card(card=card, actor=actor(request))).data)


class CardReplaceView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_replace",
        summary="Replace a blocked (lost) card: a new card receives its balance (cashier)",
        description="201 with both cards; 200 when it was replaced already (that replacement). "
        "409 card_not_blocked.",
        parameters=CARD_PARAMS,
        request=None,
        responses={
            201: PlayerCardReplacementSerializer,
            200: OpenApiResponse(
                PlayerCardReplacementSerializer, description="Replaced already: that replacement."
            ),
            **error_responses(400, 403, 404, 409),
        },
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        done = player_cards.replace_card(card=card, actor=actor(request))
        old = PlayerCard.objects.select_related("replaced_by").get(pk=done.old.pk)
        body = PlayerCardReplacementSerializer(
            {"old": old, "new": done.new, "moved": done.moved, "transaction": done.transaction}
        ).data
        return Response(body, status=status.HTTP_200_OK if done.replayed else status.HTTP_201_CREATED)


class CardPlayerView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_link_player",
        summary="Link the card to a registered player, or unlink it (cashier)",
        description="404 unknown_player; 409 card_blocked.",
        parameters=CARD_PARAMS,
        request=PlayerCardLinkSerializer,
        responses={200: PlayerCardSerializer, **error_responses(400, 403, 404, 409)},
        tags=["cashier cards"],
    )
    def put(self, request: Request, venue_id: int, code: str) -> Response:
        card = card_of(request, venue_id, code, Role.CASHIER)
        data = valid(PlayerCardLinkSerializer, request.data)
        player = _player(card.venue, data["player"]) if data["player"] is not None else None
        card = player_cards.link_player(card=card, player=player, actor=actor(request))
        return Response(PlayerCardSerializer(card).data)


class PlayersView(HallAPIView):
    @extend_schema(
        operation_id="cashier_players_register",
        summary="Register a player: name and, optionally, ID document (cashier)",
        request=CashierPlayerRequestSerializer,
        responses={201: CashierPlayerSerializer, **error_responses(400, 403, 404)},
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id, Role.CASHIER)
        data = valid(CashierPlayerRequestSerializer, request.data)
        player = player_cards.register_player(
            venue_id=venue.pk, name=data["name"], id_document=data["id_document"], actor=actor(request)
        )
        return Response(CashierPlayerSerializer(player).data, status=status.HTTP_201_CREATED)


class PlayerView(HallAPIView):
    @extend_schema(
        operation_id="cashier_players_show",
        summary="A registered player and their cards' numbers (cashier)",
        responses={200: CashierPlayerSerializer, **error_responses(403, 404)},
        tags=["cashier cards"],
    )
    def get(self, request: Request, venue_id: int, player_id: int) -> Response:
        venue = _venue(request, venue_id, Role.CASHIER)
        return Response(CashierPlayerSerializer(_player(venue, player_id)).data)


class CardPrintView(HallAPIView):
    @extend_schema(
        operation_id="cashier_cards_print",
        summary="Print a player card (number, QR code, barcode) at a till: its printer, or a PDF",
        description=(
            "200 with application/pdf when the till has no printer, JSON when it was sent to the printer. "
            "404 unknown_card, unknown_till; 409 card_blocked, no_open_shift, printer_address_invalid; 503 "
            "printer_unreachable."
        ),
        parameters=CARD_PARAMS,
        request=PlayerCardPrintSerializer,
        responses={
            (200, "application/json"): PlayerCardPrintedSerializer,
            (200, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(400, 403, 404, 409),
            503: OpenApiResponse(ErrorSerializer, description="The till's printer did not answer."),
        },
        tags=["cashier cards"],
    )
    def post(self, request: Request, venue_id: int, code: str) -> HttpResponse:
        card = card_of(request, venue_id, code, Role.CASHIER)
        data = valid(PlayerCardPrintSerializer, request.data)
        till = till_to_print_at(request, card.venue_id, data.get("till"))
        result = player_cards.print_card(card=card, till=till, actor=actor(request))
        return printed_answer(result, f"card-{card.number}.pdf")


CARD = "venues/<int:venue_id>/cards/<str:code>/"
urlpatterns = [
    path("venues/<int:venue_id>/cards/", CardsView.as_view(), name="cashier-cards"),
    path(CARD, CardView.as_view(), name="cashier-card"),
    path(CARD + "history/", CardHistoryView.as_view(), name="cashier-card-history"),
    path(CARD + "cash-in/", CardCashInView.as_view(), name="cashier-card-cash-in"),
    path(CARD + "cash-out/", CardCashOutView.as_view(), name="cashier-card-cash-out"),
    path(CARD + "block/", CardBlockView.as_view(), name="cashier-card-block"),
    path(CARD + "unblock/", CardUnblockView.as_view(), name="cashier-card-unblock"),
    path(CARD + "replace/", CardReplaceView.as_view(), name="cashier-card-replace"),
    path(CARD + "player/", CardPlayerView.as_view(), name="cashier-card-player"),
    path(CARD + "print/", CardPrintView.as_view(), name="cashier-card-print"),
    path("venues/<int:venue_id>/players/", PlayersView.as_view(), name="cashier-players"),
    path("venues/<int:venue_id>/players/<int:player_id>/", PlayerView.as_view(), name="cashier-player"),
]
