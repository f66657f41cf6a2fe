"""The terminals' device API (/api/electronic/terminal/...): a terminal authenticates as its cash device
('Authorization: CashDevice <id>:<token>', halls.cashier.api.devices) and sends its messages: hello, a card
inserted, a purchase, a cash-out, and the reads its page draws from (snapshot, games).

Every door is thin: the body validated, one service (bingo.electronic.services.messages / sales) called, its
answer rendered. A message that writes is idempotent (its seq, or the purchase's key): 201 the first time, 200
with the first answer for a retry. Requests that carry a player card number are POSTs, so the number stays
out of URLs and access logs.

A purchase may also go over the terminal's WebSocket (``ws/electronic/terminal/``, authenticated when it
opens), as the terminal page sends it: a ``purchase`` frame with this door's fields and key, answered by a
``purchase.answer`` frame with the same key, this door's status and its body or error (the frames:
bingo.electronic.purchase_frames). The same service answers both doors.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bingo.electronic.models import Terminal
from bingo.electronic.services import messages, sales
from halls.api import valid
from halls.cashier.api.devices import CashDeviceAuthentication
from halls.cashier.models import CashDevice
from halls.serializers import error_responses

TAGS = ["electronic terminal"]
AUTH = "Authenticate with 'Authorization: CashDevice <id>:<token>' (the terminal's device token). "
CARD_HELP = 'The player card\'s number or QR payload "TJ:<number>".'

# --- Permission -----------------------------------------------------------------------------------------


class IsTerminal(BasePermission):
    """A cash device that is a registered terminal (a bill reader or a kiosk is refused, 403)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        device = request.auth
        if not isinstance(device, CashDevice):
            return False
        found = (
            Terminal.objects.select_related("device", "speciality", "speciality__room")
            .filter(device=device)
            .first()
        )
        if found is None:
            raise exceptions.PermissionDenied(
                gettext("This cash device is not a player terminal."), code="not_a_terminal"
            )
        request.terminal = found  # type: ignore[attr-defined]  # the view's terminal
        return True


class TerminalView(APIView):
    authentication_classes = [CashDeviceAuthentication]
    permission_classes = [IsTerminal]

    def terminal(self, request: Request) -> Terminal:
        found = getattr(request, "terminal", None)
        assert isinstance(found, Terminal)  # IsTerminal let the request in
        return found


def _answer(result: dict[str, Any], replayed: bool) -> Response:
    return Response(result, status=status.HTTP_200_OK if replayed else status.HTTP_201_CREATED)


# --- Shapes ---------------------------------------------------------------------------------------------


class SeqField(serializers.IntegerField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            min_value=0,
            max_value=messages.MAX_SEQ,
            help_text="The terminal's own message number, once each (a retry resends it).",
            **kwargs,
        )


class TerminalHelloRequestSerializer(serializers.Serializer[Any]):
    seq = SeqField()
    software_version = serializers.CharField(max_length=40, help_text="The software the terminal runs.")
    clock = serializers.DateTimeField(help_text="The terminal's clock, ISO 8601 with its time zone.")


class TerminalHelloSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    terminal = serializers.IntegerField()
    server_time = serializers.DateTimeField()
    clock_offset_ms = serializers.IntegerField(help_text="The terminal's clock minus the server's.")
    software_approved = serializers.BooleanField(help_text="An approved version for this venue.")
    state = serializers.CharField(help_text="in_service, failed or out_of_service.")
    refusal = serializers.CharField(
        allow_null=True,
        help_text="Why it cannot play now (terminal_out_of_service, no_session, terminal_not_verified).",
    )


class TerminalCardRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)


class TerminalWinSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    name = serializers.CharField()
    amount = serializers.CharField()


class TerminalECardSerializer(serializers.Serializer[Any]):
    card = serializers.IntegerField()
    purchase = serializers.IntegerField()
    cells = serializers.ListField(
        child=serializers.IntegerField(), help_text="The layout's cell order; 0 = the free cell."
    )
    missing = serializers.DictField(
        child=serializers.IntegerField(), help_text='Pattern -> cells still lacking ("falta N").'
    )
    won = TerminalWinSerializer(many=True)


class TerminalCardGameSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.CharField(help_text="selling or drawing.")
    cards = TerminalECardSerializer(many=True)


class TerminalCardSerializer(serializers.Serializer[Any]):
    number = serializers.CharField()
    balance = serializers.CharField(help_text="A decimal string, '20.00'.")
    games = TerminalCardGameSerializer(many=True, help_text="Its cards in the selling and drawing games.")
    reality = serializers.DictField(
        help_text="Its play session here: the reality check due (or null), every_seconds, next_at, "
        "played_seconds, staked, won, net (terminal/reality/'s body)."
    )


class TerminalPurchaseRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)
    cards = serializers.IntegerField(help_text="How many cards (one of the speciality's purchase sizes).")
    key = serializers.CharField(
        max_length=sales.KEY_LENGTH, help_text="The terminal's key for this purchase: a retry resends it."
    )
    game = serializers.IntegerField(
        required=False, help_text="The game on sale it buys for (409 sales_closed if it is not)."
    )


class TerminalBoughtCardSerializer(serializers.Serializer[Any]):
    card = serializers.IntegerField()
    position = serializers.IntegerField()
    cells = serializers.ListField(child=serializers.IntegerField())


class TerminalPurchaseSerializer(serializers.Serializer[Any]):
    purchase = serializers.IntegerField()
    game = serializers.IntegerField()
    key = serializers.CharField()
    card = serializers.CharField()
    cards = TerminalBoughtCardSerializer(many=True)
    amount = serializers.CharField()
    balance = serializers.CharField(help_text="The card's balance now.")
    replayed = serializers.BooleanField()


class TerminalCashoutRequestSerializer(serializers.Serializer[Any]):
    seq = SeqField()
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)
    amount = serializers.CharField(
        max_length=40, required=False, help_text="A decimal string; all of the balance when left out."
    )


class TerminalCashoutSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    card = serializers.CharField()
    ticket = serializers.CharField(help_text="The ticket's validation number, to print.")
    amount = serializers.CharField()
    expires_at = serializers.DateTimeField()
    balance = serializers.CharField(help_text="The card's balance after it.")


class TerminalSnapshotRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, required=False, help_text="The inserted card, if any.")


class TerminalIdentitySerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    state = serializers.CharField()
    refusal = serializers.CharField(allow_null=True)
    stream = serializers.CharField(help_text="Its own event stream: its cards, prizes and balance.")


class TerminalSpecialitySerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    family = serializers.CharField()
    running = serializers.BooleanField()
    stream = serializers.CharField(help_text="The room's stream: balls, prizes, meters.")


class TerminalLayoutSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    rows = serializers.IntegerField()
    columns = serializers.IntegerField()
    max_number = serializers.IntegerField()
    free = serializers.ListField(child=serializers.IntegerField())
    lines = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))


class TerminalMaxBallStepSerializer(serializers.Serializer[Any]):
    from_sales = serializers.CharField()
    max_ball = serializers.IntegerField()


class TerminalPrizeRuleSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    pattern = serializers.CharField()
    figure = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()), help_text="A figure's cells."
    )
    percent = serializers.CharField(allow_null=True)
    fixed = serializers.CharField(allow_null=True)
    accumulated = serializers.BooleanField()
    network = serializers.BooleanField()
    max_ball = serializers.IntegerField(allow_null=True)
    max_ball_by_sales = TerminalMaxBallStepSerializer(many=True)
    info = serializers.CharField(help_text="What players must be told of it (R-16).")


class TerminalRulesSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField()
    family = serializers.CharField()
    layout = TerminalLayoutSerializer()
    card_price = serializers.CharField()
    purchase_sizes = serializers.ListField(child=serializers.IntegerField())
    max_cards = serializers.IntegerField()
    extractions = serializers.IntegerField()
    extra_balls = serializers.IntegerField()
    pace_seconds = serializers.CharField()
    sale_seconds = serializers.IntegerField()
    prizes = TerminalPrizeRuleSerializer(many=True)


class TerminalSellingSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField()
    number = serializers.IntegerField()
    sales_close_at = serializers.DateTimeField()
    card_price = serializers.CharField()
    mine = serializers.IntegerField(help_text="The cards this terminal bought for it.")


class TerminalPrizeResultSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    ordinal = serializers.IntegerField(help_text="The ball that decided it.")
    won = serializers.BooleanField()
    winners = serializers.IntegerField()
    amount = serializers.CharField()
    share = serializers.CharField()


class TerminalGamePrizeSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    name = serializers.CharField()
    type = serializers.CharField()
    in_play = serializers.BooleanField()
    amount = serializers.CharField(allow_null=True, help_text="A sales prize's amount (a pool's: its meter).")
    max_ball = serializers.IntegerField(allow_null=True)
    decided = serializers.BooleanField()
    result = TerminalPrizeResultSerializer(allow_null=True)


class TerminalDrawingSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.CharField()
    cards_sold = serializers.IntegerField()
    sales_total = serializers.CharField()
    balls = serializers.ListField(child=serializers.IntegerField(), help_text="In the order drawn.")
    golden_ball = serializers.IntegerField(allow_null=True)
    prizes = TerminalGamePrizeSerializer(many=True)


class TerminalMeterSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    name = serializers.CharField()
    amount = serializers.CharField()
    max_ball = serializers.IntegerField(allow_null=True)
    info = serializers.CharField()


class TerminalNetworkMeterSerializer(serializers.Serializer[Any]):
    prize = serializers.CharField(help_text="The network prize's code.")
    kind = serializers.CharField(help_text="gran_linea or gran_bingo (AB-05, AB-08).")
    name = serializers.CharField()
    amount = serializers.CharField(help_text="As the central last sent it.")
    max_ball = serializers.IntegerField(
        allow_null=True, help_text="The speciality's own Gran prize's, if its table sets one."
    )
    at = serializers.DateTimeField()


class TerminalPastGameSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.CharField()
    closed_at = serializers.DateTimeField(allow_null=True)
    cards_sold = serializers.IntegerField()
    balls = serializers.ListField(child=serializers.IntegerField())
    prizes = TerminalPrizeResultSerializer(many=True, help_text="The prizes won.")


class TerminalSnapshotSerializer(serializers.Serializer[Any]):
    server_time = serializers.DateTimeField()
    terminal = TerminalIdentitySerializer()
    speciality = TerminalSpecialitySerializer()
    rules = TerminalRulesSerializer(allow_null=True)
    selling = TerminalSellingSerializer(allow_null=True)
    drawing = TerminalDrawingSerializer(allow_null=True)
    meters = TerminalMeterSerializer(many=True)
    network = TerminalNetworkMeterSerializer(many=True, help_text="The network prizes' meters.")
    last_games = TerminalPastGameSerializer(many=True)
    card = TerminalCardSerializer(allow_null=True)
    # The terminal page's read model (services.readmodels.terminal_snapshot) besides the above:
    streams = serializers.DictField(
        child=serializers.CharField(),
        help_text='The streams the terminal follows: {"room": ..., "terminal": ...}.',
    )
    seqs = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Each stream's seq as of this snapshot: an event at or below it is in it; a gap after it "
        "means the page reloads this.",
    )
    reality = serializers.DictField(
        allow_null=True,
        help_text="The inserted card's play session here (terminal/reality/'s body), or null for none.",
    )
    player = serializers.DictField(
        allow_null=True,
        help_text="The inserted card: number, state, balance, and its cards by game id (cells, wins).",
    )


class TerminalGamesRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=messages.MAX_GAMES)


class TerminalCardWinSerializer(TerminalWinSerializer):
    card = serializers.IntegerField()


class TerminalCardPastGameSerializer(TerminalPastGameSerializer):
    cards = serializers.IntegerField(help_text="The card's cards in it.")
    spent = serializers.CharField()
    won = serializers.CharField()
    wins = TerminalCardWinSerializer(many=True)


class TerminalGamesSerializer(serializers.Serializer[Any]):
    card = serializers.CharField()
    balance = serializers.CharField()
    games = TerminalCardPastGameSerializer(many=True)


# --- Views ----------------------------------------------------------------------------------------------


class HelloView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_hello",
        summary="A terminal is alive: its software version and its clock (device)",
        description=AUTH + "201 the first time, 200 with the first answer for the same seq; 409 seq_reused.",
        request=TerminalHelloRequestSerializer,
        responses={
            201: TerminalHelloSerializer,
            200: OpenApiResponse(TerminalHelloSerializer, description="A retry: the first answer."),
            **error_responses(400, 403, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalHelloRequestSerializer, request.data)
        answer = messages.hello(
            terminal=self.terminal(request),
            seq=data["seq"],
            software_version=data["software_version"],
            clock=data["clock"],
        )
        return _answer(answer.result, answer.replayed)


class CardView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_card",
        summary="A player card inserted: its balance and its cards in play (device)",
        description=AUTH + "400 bad_card_number; 404 unknown_card (also another venue's); 409 card_blocked.",
        request=TerminalCardRequestSerializer,
        responses={200: TerminalCardSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalCardRequestSerializer, request.data)
        return Response(messages.insert_card(terminal=self.terminal(request), card_number=data["card"]))


class PurchaseView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_purchase",
        summary="Buy cards for the game on sale with the inserted card's balance (device)",
        description=AUTH
        + "201 bought, 200 the first answer for the same key; 409 key_reused (the key of another purchase). "
        "The same purchase over the terminal's WebSocket (ws/electronic/terminal/): the frame "
        '{"type": "purchase", "key", "card", "cards", "game", "lang"?} is answered by '
        '{"type": "purchase.answer", "key", "status", "result" (this body) or "error"}. '
        "Refused with nothing written: 400 bad_card_number; 404 unknown_card; 409 terminal_out_of_service, "
        "no_session, terminal_not_verified, sales_closed, bad_count, max_cards, card_blocked, "
        "insufficient_balance, reality_check_due (acknowledge it: terminal/reality/ack/), limit_reached "
        "(the player's loss or spend limit: which, what is left, when it resets).",
        request=TerminalPurchaseRequestSerializer,
        responses={
            201: TerminalPurchaseSerializer,
            200: OpenApiResponse(TerminalPurchaseSerializer, description="A retry: the first purchase."),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalPurchaseRequestSerializer, request.data)
        bought = sales.purchase(
            terminal=self.terminal(request),
            card_number=data["card"],
            cards=data["cards"],
            key=data["key"],
            game=data.get("game"),
        )
        return _answer(messages.purchase_answer(bought), bought.replayed)


class CashoutView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_cashout",
        summary="Cash out the inserted card's balance onto a ticket the terminal prints (device)",
        description=AUTH
        + "201 a new ticket, 200 the same seq again (the same ticket); 409 seq_reused. 400 bad_amount, "
        "bad_card_number; 404 unknown_card; 409 card_blocked, insufficient_balance, ticket_above_maximum "
        "(the venue's maximum ticket value: nothing moved).",
        request=TerminalCashoutRequestSerializer,
        responses={
            201: TerminalCashoutSerializer,
            200: OpenApiResponse(
                TerminalCashoutSerializer, description="A retry: the ticket already issued."
            ),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalCashoutRequestSerializer, request.data)
        answer = messages.cashout(
            terminal=self.terminal(request),
            seq=data["seq"],
            card_number=data["card"],
            amount=data.get("amount"),
        )
        return _answer(answer.result, answer.replayed)


class TerminalRealityRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)


class TerminalRealityAckRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)
    check = serializers.IntegerField(min_value=1, help_text="The reality check's number (its `due`).")


class TerminalRealitySerializer(serializers.Serializer[Any]):
    session = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    due = serializers.IntegerField(
        allow_null=True, help_text="The reality check waiting to be acknowledged (a purchase is refused)."
    )
    acknowledged = serializers.IntegerField()
    every_seconds = serializers.IntegerField()
    next_at = serializers.DateTimeField(help_text="When the next check comes due.")
    played_seconds = serializers.IntegerField()
    staked = serializers.CharField()
    won = serializers.CharField()
    net = serializers.CharField(help_text="Staked less won since the session began.")


class TerminalRealityAckSerializer(TerminalRealitySerializer):
    check = serializers.IntegerField()
    acknowledged_at = serializers.DateTimeField()


class CardOutView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_card_out",
        summary="The player card taken out: its play session at this terminal ends (device)",
        description=AUTH + "400 bad_card_number; 404 unknown_card.",
        request=TerminalCardRequestSerializer,
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 403, 404)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalCardRequestSerializer, request.data)
        return Response(messages.take_out_card(terminal=self.terminal(request), card_number=data["card"]))


class RealityView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_reality",
        summary="The inserted card's reality check: time played, staked, won, net, the check due (device)",
        description=AUTH + "400 bad_card_number; 404 unknown_card; 409 card_blocked, no_play_session.",
        request=TerminalRealityRequestSerializer,
        responses={200: TerminalRealitySerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalRealityRequestSerializer, request.data)
        return Response(messages.reality(terminal=self.terminal(request), card_number=data["card"]))


class RealityAckView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_reality_ack",
        summary="The player acknowledged the reality check on the screen (device)",
        description=AUTH
        + "201 recorded, 200 the same check again (nothing written). 400 bad_check, bad_card_number; 404 "
        "unknown_card; 409 card_blocked, no_play_session, reality_check_not_due.",
        request=TerminalRealityAckRequestSerializer,
        responses={
            201: TerminalRealityAckSerializer,
            200: OpenApiResponse(TerminalRealityAckSerializer, description="A retry: the first answer."),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalRealityAckRequestSerializer, request.data)
        answer = messages.acknowledge_reality(
            terminal=self.terminal(request), card_number=data["card"], check=data["check"]
        )
        return _answer(answer.result, answer.replayed)


class TerminalLimitRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)
    kind = serializers.CharField(max_length=10, help_text="loss or spend.")
    period = serializers.CharField(max_length=10, help_text="day, week or month.")
    amount = serializers.CharField(
        allow_null=True, max_length=40, help_text='A decimal string ("50.00"); null removes the limit.'
    )


class LimitsView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_limits",
        summary="The inserted card's loss and spend limits: in force, pending, used, left (device)",
        description=AUTH + "400 bad_card_number; 404 unknown_card; 409 card_blocked, no_play_session.",
        request=TerminalRealityRequestSerializer,
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalRealityRequestSerializer, request.data)
        return Response(messages.card_limits(terminal=self.terminal(request), card_number=data["card"]))


class LimitSetView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_limit_set",
        summary="The player sets a limit at the terminal: lowered at once, raised after the cooling-off",
        description=AUTH
        + "200 in force at once (or unchanged), 202 waiting its cooling-off. 400 bad_kind, bad_period, "
        "bad_amount, bad_card_number; 404 unknown_card; 409 card_blocked, no_play_session, "
        "limit_cooling_off.",
        request=TerminalLimitRequestSerializer,
        responses={
            200: OpenApiTypes.OBJECT,
            202: OpenApiResponse(OpenApiTypes.OBJECT, description="A raise waiting its cooling-off."),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalLimitRequestSerializer, request.data)
        body, waiting = messages.set_card_limit(
            terminal=self.terminal(request),
            card_number=data["card"],
            kind=data["kind"],
            period=data["period"],
            amount=data["amount"],
        )
        return Response(body, status=status.HTTP_202_ACCEPTED if waiting else status.HTTP_200_OK)


class SnapshotView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_snapshot",
        summary="Everything the terminal page draws itself from; with the inserted card's part (device)",
        description=AUTH
        + "The speciality's rules (prices, sizes, prizes with their max balls and info, figures as cells), "
        "the game on sale, the game drawing with its balls and prizes decided, the meters, the last games. "
        "Read at start and after a gap in the terminal's streams.",
        request=TerminalSnapshotRequestSerializer,
        responses={200: TerminalSnapshotSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalSnapshotRequestSerializer, request.data)
        return Response(messages.snapshot(terminal=self.terminal(request), card_number=data.get("card")))


class GamesView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_games",
        summary="The last games the inserted card played, with its results (device)",
        description=AUTH + "400 bad_card_number; 404 unknown_card; 409 card_blocked.",
        request=TerminalGamesRequestSerializer,
        responses={200: TerminalGamesSerializer, **error_responses(400, 403, 404, 409)},
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalGamesRequestSerializer, request.data)
        return Response(
            messages.games(terminal=self.terminal(request), card_number=data["card"], limit=data["limit"])
        )


class TerminalRecallRequestSerializer(serializers.Serializer[Any]):
    card = serializers.CharField(max_length=40, help_text=CARD_HELP)
    game = serializers.IntegerField(min_value=1)


class RecallView(TerminalView):
    @extend_schema(
        operation_id="electronic_terminal_card_recall",
        summary="The inserted card's part of one game: cards, balls, marks, prizes, ledger entries (device)",
        description=AUTH + "400 bad_card_number; 404 unknown_card, unknown_game; 409 card_blocked.",
        request=TerminalRecallRequestSerializer,
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description="bingo.electronic.services.recall.terminal_recall"
            ),
            **error_responses(400, 403, 404, 409),
        },
        tags=TAGS,
    )
    def post(self, request: Request) -> Response:
        data = valid(TerminalRecallRequestSerializer, request.data)
        return Response(
            messages.game_recall(terminal=self.terminal(request), card_number=data["card"], game=data["game"])
        )


urlpatterns = [
    path("terminal/hello/", HelloView.as_view(), name="electronic-terminal-hello"),
    path("terminal/card/", CardView.as_view(), name="electronic-terminal-card"),
    path("terminal/card/out/", CardOutView.as_view(), name="electronic-terminal-card-out"),
    path("terminal/reality/", RealityView.as_view(), name="electronic-terminal-reality"),
    path("terminal/reality/ack/", RealityAckView.as_view(), name="electronic-terminal-reality-ack"),
    path("terminal/limits/", LimitsView.as_view(), name="electronic-terminal-limits"),
    path("terminal/limits/set/", LimitSetView.as_view(), name="electronic-terminal-limit-set"),
    path("terminal/purchase/", PurchaseView.as_view(), name="electronic-terminal-purchase"),
    path("terminal/cashout/", CashoutView.as_view(), name="electronic-terminal-cashout"),
    path("terminal/snapshot/", SnapshotView.as_view(), name="electronic-terminal-snapshot"),
    path("terminal/games/", GamesView.as_view(), name="electronic-terminal-games"),
    path("terminal/recall/", RecallView.as_view(), name="electronic-terminal-recall"),
]
