"""Shapes of the casino-table part of the REST API: request bodies and read models, money as strings."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from halls import money
from halls.cashier.api.payables import PayoutSerializer
from halls.serializers import money_field
from jackpots.tables.models import TableGame, TableState
from jackpots.tables.rules import MAX_SEATS

# --- requests -------------------------------------------------------------------------------------------


class HandOpenSerializer(serializers.Serializer[Any]):
    idempotency_key = serializers.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        help_text="The console's key for this command: a retry answers with the hand it opened (200).",
    )


class SeatBetRequestSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(
        min_value=1, max_value=99, help_text="Betting box, 1 to the table's seats."
    )
    initial_bet = money_field(
        min_value=0,
        required=False,
        default="0",
        help_text="The table's initial bet at this seat (0: none). AN10 and EU draw poker require it.",
    )
    pool_bet = money_field(min_value=0, help_text="The pool (carrusel / jackpot / bolsa) bet at this seat.")


class BetsRequestSerializer(serializers.Serializer[Any]):
    bets = SeatBetRequestSerializer(many=True, required=False, help_text="Seats' bets; each contributes.")
    total = money_field(
        min_value=0,
        required=False,
        allow_null=True,
        help_text="EU b.1 (manual entry) only: the hand's total jackpot bets, which contributes once.",
    )


class SeatCardsRequestSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(min_value=1, max_value=99)
    cards = serializers.CharField(
        max_length=60,
        help_text=(
            'Rank then suit, e.g. "AS KS QS JS TS" (ten is T). Poker: the five cards that count (Melilla '
            "progresivo: the first five, before any bought card); tripóquer: three; blackjack: the first "
            "cards in deal order (1 to 3)."
        ),
    )
    discard = serializers.BooleanField(
        required=False, default=False, help_text="Póquer con descarte: the hand was made after discarding."
    )
    extra_card = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Póquer sin descarte: the player bought an extra card (Euskadi: forfeits the pool bet).",
    )


class CardsRequestSerializer(serializers.Serializer[Any]):
    seats = SeatCardsRequestSerializer(many=True, required=False)
    community = serializers.CharField(
        max_length=20,
        required=False,
        allow_blank=True,
        help_text="Tripóquer tables of an interconnected poker carrusel: the two community cards.",
    )


class HandVoidSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(max_length=2000, help_text="Why the hand is void (recorded).")


class TableQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, help_text="Only the tables of this venue.")


class TableCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    number = serializers.IntegerField(min_value=1, max_value=9999)
    name = serializers.CharField(max_length=80)
    game = serializers.ChoiceField(choices=TableGame.choices)
    table_minimum = money_field(help_text='The table minimum, e.g. "10.00".')
    rule_pack = serializers.CharField(max_length=40, help_text="A rule pack of the venue's jurisdiction.")
    seats = serializers.IntegerField(required=False, min_value=1, max_value=MAX_SEATS)
    layout = serializers.CharField(max_length=40, required=False, allow_blank=True, default="")


class TableJoinSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField(help_text="The pool (carrusel) the table plays into.")


class CarruselFormSerializer(serializers.Serializer[Any]):
    tables = serializers.ListField(
        child=serializers.IntegerField(), min_length=1, max_length=200, help_text="Ids of the tables to join."
    )


class TableStateSerializer(serializers.Serializer[Any]):
    state = serializers.ChoiceField(
        choices=TableState.choices, help_text='"closed" (for a while, e.g. the night) or "open" again.'
    )
    reason = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why the table closes (required to close; kept in the audit).",
    )


class CarruselCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    name = serializers.CharField(max_length=120, help_text='The carrusel\'s name, e.g. "Carrusel Póquer".')
    code = serializers.CharField(max_length=40, help_text="Its code, unique among pools.")
    rule_pack = serializers.CharField(
        max_length=40, help_text="A table rule pack of the venue's jurisdiction."
    )
    authorisation_ref = serializers.CharField(max_length=120, help_text="The authorisation it runs under.")
    carousel_bet = money_field(
        money.PAYMENT_DIGITS, required=False, allow_null=True, default=None, help_text="The stipulated bet."
    )
    seed = money_field(money.METER_DIGITS, money.METER_PLACES, min_value=0, help_text="The initial amount.")
    contribution_rate = serializers.DecimalField(
        max_digits=7,
        decimal_places=6,
        min_value=0,
        max_value=1,
        help_text='Fraction of each pool bet to the meter ("0.70" = 70 %).',
    )
    tables = serializers.ListField(
        child=serializers.IntegerField(), min_length=1, max_length=200, help_text="Ids of its tables."
    )


# --- read models ----------------------------------------------------------------------------------------


class LevelMeterSerializer(serializers.Serializer[Any]):
    level = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    amount = money_field(
        money.METER_DIGITS, help_text="Live amount, capped at the ceiling, rounded down to the cent."
    )
    seed = money_field(money.METER_DIGITS)
    ceiling = money_field(money.METER_DIGITS, allow_null=True)
    hits = serializers.IntegerField()
    total_paid = money_field(money.METER_DIGITS)


class HitSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    member = serializers.CharField(help_text='Where it hit: the source label, e.g. "table:3".')
    hand = serializers.CharField()
    seat = serializers.CharField()
    category = serializers.CharField()
    amount = money_field()


class MeterSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    currency = serializers.CharField()
    carousel_bet = money_field(
        allow_null=True, help_text="The pool's single stipulated bet (OP-37), if it has one."
    )
    active = serializers.BooleanField()
    amount = money_field(
        money.METER_DIGITS, help_text="The first level's live amount: what the table's meter shows."
    )
    levels = LevelMeterSerializer(many=True)
    last_hits = HitSerializer(many=True)
    as_of = serializers.DateTimeField()


class PaytableRowSerializer(serializers.Serializer[Any]):
    category = serializers.CharField()
    prize = serializers.CharField(
        help_text="The prize in English; prize_kind and prize_value say it as data."
    )
    prize_kind = serializers.CharField(help_text="percent (of the meter), multiple (of the bet) or amount.")
    prize_value = serializers.CharField(
        help_text="The percent, the multiple or the amount (a decimal string)."
    )
    ties = serializers.CharField()


class CardRangeSerializer(serializers.Serializer[Any]):
    min = serializers.IntegerField()
    max = serializers.IntegerField()


class TableRulesSerializer(serializers.Serializer[Any]):
    code = serializers.CharField()
    title = serializers.CharField()
    citation = serializers.CharField(help_text="The spec section and seed article of the rules.")
    max_pool_bet = money_field(allow_null=True, help_text="Half the table minimum where the pack caps it.")
    requires_initial_bet = serializers.BooleanField()
    manual_total = serializers.BooleanField(help_text="EU b.1: the croupier enters the hand's total.")
    extra_card_forfeits = serializers.BooleanField()
    first_five_cards_only = serializers.BooleanField()
    discards = serializers.BooleanField()
    community_cards = serializers.IntegerField()
    cards_per_seat = CardRangeSerializer()
    paytable = PaytableRowSerializer(many=True)
    discard_paytable = PaytableRowSerializer(many=True)


class SeatViewSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    initial_bet = money_field(allow_null=True)
    pool_bet = money_field(allow_null=True)
    extra_card = serializers.BooleanField()
    forfeited = serializers.BooleanField()
    forfeit_reason = serializers.CharField(allow_blank=True)
    cards = serializers.CharField(allow_blank=True)
    discard = serializers.BooleanField()
    category = serializers.CharField(allow_blank=True)
    rank = serializers.CharField(allow_blank=True)
    payout = money_field(allow_null=True, help_text="Paid by the pool for this hand (whole cents).")
    payout_order = serializers.IntegerField(allow_null=True)
    payout_note = serializers.CharField(allow_blank=True)
    from_operator = money_field(allow_null=True, help_text="Part of the payout the meter lacked (OP-23).")
    payment = PayoutSerializer(
        allow_null=True, help_text="The payout's payment at the cashier: waiting or paid, when, by whom, how."
    )


class HandViewSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    table = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.CharField(help_text="open, settled or void.")
    opened_at = serializers.DateTimeField()
    opened_by = serializers.CharField()
    settled_at = serializers.DateTimeField(allow_null=True)
    manual_total = money_field(allow_null=True)
    community_cards = serializers.CharField(allow_blank=True)
    pool_bets = money_field()
    total_paid = money_field()
    meter_before = money_field(
        money.METER_DIGITS,
        money.METER_PLACES,
        allow_null=True,
        help_text="The pool meter before the hand's payments.",
    )
    meter_after_payouts = money_field(
        money.METER_DIGITS, money.METER_PLACES, allow_null=True, help_text="The meter the payments left."
    )
    meter_after = money_field(
        money.METER_DIGITS,
        money.METER_PLACES,
        allow_null=True,
        help_text="The meter after the reset to the seed, if one was needed.",
    )
    void_reason = serializers.CharField(allow_blank=True)
    seats = SeatViewSerializer(many=True)


class TableSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    venue = serializers.IntegerField()
    number = serializers.IntegerField()
    name = serializers.CharField()
    game = serializers.ChoiceField(choices=TableGame.choices)
    table_minimum = money_field()
    seats = serializers.IntegerField(max_value=MAX_SEATS)
    layout = serializers.CharField(allow_blank=True)
    rule_pack = serializers.CharField()
    state = serializers.CharField(help_text="open, or closed (temporarily: takes no hands).")
    meter = MeterSerializer(
        allow_null=True, help_text="The pool's meter, or null when the table has no pool."
    )
    open_hand = serializers.IntegerField(allow_null=True, help_text="Id of the open hand, or null.")


class TableDetailSerializer(TableSerializer):
    rules = TableRulesSerializer()
    current_hand = HandViewSerializer(allow_null=True, help_text="The open hand, else the last one.")
