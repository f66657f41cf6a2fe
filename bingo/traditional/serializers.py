"""Shapes of the bingo part of the REST API: request bodies, and read models with money as strings.

Read models (bingo.traditional.services.readmodels) return plain dicts holding Decimals and datetimes; they
are
rendered through the output serializers below, so amounts leave as "12.50" (never floats) and the schema
documents them.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from bingo.traditional import hooks
from bingo.traditional.models import (
    Ball,
    Card,
    CardSeries,
    Claim,
    ClaimKind,
    DrawSource,
    Game,
    GameState,
    PrizeResult,
    SaleOperation,
    SoldCard,
)
from bingo.traditional.program_serializers import AnnouncedProgramSerializer, GameProgramSerializer
from bingo.traditional.services.readmodels import claim_verdict, current_game
from halls import money
from halls.cashier.api.payables import PayoutSerializer
from halls.models import GameSession, Room
from halls.serializers import money_field, slug

# A card's 3×9 grid: rows of nine cells, a number or null for a blank.
GRID_SCHEMA = {
    "type": "array",
    "items": {"type": "array", "items": {"type": "integer", "nullable": True}, "minItems": 9, "maxItems": 9},
    "minItems": 3,
    "maxItems": 3,
}


@extend_schema_field(GRID_SCHEMA)
class GridField(serializers.JSONField):
    """A master card: 3 rows × 9 cells."""


# A pattern, not an enum: the schema's enum components are named after the field, and "kind" is taken
# by the claim kinds (line / bingo).
@extend_schema_field({"type": "string", "pattern": "^(sell|return)$", "description": "sell or return"})
class SaleKindField(serializers.CharField):
    """sell or return."""


@extend_schema_field({"type": "string", "enum": ["", "line", "bingo"]})
class ClaimWindowField(serializers.CharField):
    """The open "any more lines / bingos?" question: "", "line" or "bingo"."""


# --- Rooms ----------------------------------------------------------------------------------------------


class RoomSerializer(serializers.ModelSerializer[Room]):
    open_session = serializers.SerializerMethodField(help_text="Id of the open session, or null.")
    last_session = serializers.SerializerMethodField(
        help_text=(
            "Id of the room's latest session (open or closed), or null: the one its next session follows "
            "(the caller console keeps the next session's typed inspection draw under it)."
        )
    )
    current_game = serializers.SerializerMethodField(
        help_text="Id of the game in play, else of the room's last game, or null."
    )
    autoplay = serializers.SerializerMethodField(help_text="The room plays by itself (the demo's rooms).")

    class Meta:
        model = Room
        fields = [
            "id",
            "venue",
            "name",
            "ball_pace_seconds",
            "claim_window_seconds",
            "autoplay",
            "open_session",
            "last_session",
            "current_game",
        ]

    def get_open_session(self, room: Room) -> int | None:
        return (
            GameSession.objects.filter(room=room, closed_at__isnull=True).values_list("pk", flat=True).first()
        )

    def get_last_session(self, room: Room) -> int | None:
        return GameSession.objects.filter(room=room).order_by("-pk").values_list("pk", flat=True).first()

    def get_autoplay(self, room: Room) -> bool:
        return room.pk in hooks.self_playing([room.pk])

    def get_current_game(self, room: Room) -> int | None:
        game = current_game(room)
        return game.pk if game else None


# --- Card series ----------------------------------------------------------------------------------------


class SeriesQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, help_text="Only the series of this venue.")


class SeriesCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    code = serializers.CharField(max_length=40)
    face_value = money_field(help_text='Price of one card, e.g. "2.00".')
    strips = serializers.IntegerField(help_text="Strips of 6 cards (1 to 20,000).")
    seed = serializers.CharField(
        max_length=64, required=False, help_text="Seed the cards are generated from; random when left out."
    )


class SeriesSerializer(serializers.ModelSerializer[CardSeries]):
    face_value = money_field(read_only=True)
    card_count = serializers.IntegerField(read_only=True)
    created_by = slug("username")

    class Meta:
        model = CardSeries
        fields = ["id", "venue", "code", "face_value", "strips", "card_count", "created_at", "created_by"]
        read_only_fields = fields


class MasterCardSerializer(serializers.ModelSerializer[Card]):
    series = slug("code")
    grid = GridField(read_only=True)

    class Meta:
        model = Card
        fields = ["series", "serial", "grid", "security_code"]
        read_only_fields = fields


# --- Games: requests ------------------------------------------------------------------------------------


class GameQuerySerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField(required=False, help_text="Only the games of this room.")
    state = serializers.ChoiceField(choices=GameState.choices, required=False)
    limit = serializers.IntegerField(
        required=False, default=100, min_value=1, max_value=500, help_text="At most this many games."
    )


class GameCreateSerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField()
    draw_source = serializers.ChoiceField(choices=DrawSource.choices, default=DrawSource.RNG)
    pace_seconds = serializers.DecimalField(
        max_digits=5,
        decimal_places=2,
        required=False,
        allow_null=True,
        help_text="Seconds between RNG balls (at least 0.05); the room's pace when left out.",
    )
    ball_set = serializers.IntegerField(
        required=False, allow_null=True, help_text="The ball set (the venue's first in use when left out)."
    )


class VoidSerializer(serializers.Serializer[Any]):
    reason = serializers.CharField(
        max_length=2000,
        help_text=_("Why the game is cancelled: recorded, shown to staff, never on the screens."),
    )
    public_message = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text=_("What the hall's screens say about it (optional; without it they say the game is void)."),
    )


class RangeSerializer(serializers.Serializer[Any]):
    series = serializers.CharField(max_length=40, help_text="Code of a series of the game's venue.")
    first = serializers.IntegerField(min_value=1, help_text="First serial of the range.")
    last = serializers.IntegerField(min_value=1, help_text="Last serial of the range (inclusive).")
    idempotency_key = serializers.CharField(
        max_length=80,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="A retry with the same key answers with the first operation and writes nothing.",
    )


class BallEntrySerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField(help_text="The ball the reader read, 1 to 90.")
    ordinal = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Which ball of the game this is; a retry of the same ordinal and number is a no-op.",
    )


class ClaimRequestSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=ClaimKind.choices)
    series = serializers.CharField(max_length=40, help_text="Code of the card's series.")
    serial = serializers.IntegerField(help_text="Serial of the claimed card in its series.")
    idempotency_key = serializers.CharField(
        max_length=80,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="A retry with the same key answers with the first claim and writes nothing.",
    )


class ConfirmSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=ClaimKind.choices, help_text="The prize whose window closes.")


# --- Games: results of commands -------------------------------------------------------------------------


class SaleOperationSerializer(serializers.ModelSerializer[SaleOperation]):
    kind = SaleKindField(read_only=True)
    series = slug("code")
    first = serializers.IntegerField(source="first_serial", read_only=True)
    last = serializers.IntegerField(source="last_serial", read_only=True)
    amount = money_field(read_only=True)
    cashier = slug("username")

    class Meta:
        model = SaleOperation
        fields = [
            "id",
            "game",
            "kind",
            "series",
            "first",
            "last",
            "cards",
            "amount",
            "cashier",
            "shift",  # the cashier's shift whose drawer took the money (null before sales used the ledger)
            "created_at",
            "idempotency_key",
        ]
        read_only_fields = fields


class SalesSerializer(serializers.Serializer[Any]):
    operations = SaleOperationSerializer(many=True)
    cards_sold = serializers.IntegerField()
    sales_total = money_field()


class BallSerializer(serializers.ModelSerializer[Ball]):
    colour = serializers.SerializerMethodField()

    class Meta:
        model = Ball
        fields = ["ordinal", "number", "colour", "drawn_at"]
        read_only_fields = fields

    def get_colour(self, ball: Ball) -> str:
        ball_set = ball.game.ball_set
        return ball_set.colour_of(ball.number) if ball_set else ""


class ClaimSerializer(serializers.ModelSerializer[Claim]):
    kind = serializers.ChoiceField(choices=ClaimKind.choices, read_only=True)
    series = slug("code")
    master_card = serializers.SerializerMethodField(
        help_text="The master card shown during verification, or null when the card is not sold in the game."
    )
    code = serializers.SerializerMethodField(
        help_text="The verdict as a stable code (bingo.claims.VerdictCode: bingo, line, "
        "not_sold, no_balls, game_closed, bingo_incomplete, line_incomplete, line_already_won, "
        "line_already_paid)."
    )
    facts = serializers.SerializerMethodField(
        help_text="The verdict's figures: serial, bound (the claim's ball), and as the code has them at "
        "(completed at), row (1-based), line_at (the Line's ball), missing (numbers not drawn)."
    )

    class Meta:
        model = Claim
        fields = [
            "id",
            "kind",
            "series",
            "serial",
            "valid",
            "refusal",
            "reason",
            "code",
            "facts",
            "bound_ordinal",
            "winning_row",
            "completed_at",
            "created_at",
            "master_card",
        ]
        read_only_fields = fields

    def get_code(self, claim: Claim) -> str:
        return claim_verdict(claim, line_won_at=claim.game.line_won_at, balls=())[
            0
        ]  # the code needs no balls

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_facts(self, claim: Claim) -> dict[str, Any]:
        return dict(claim_verdict(claim, line_won_at=claim.game.line_won_at)[1])

    @extend_schema_field({**GRID_SCHEMA, "nullable": True})
    def get_master_card(self, claim: Claim) -> Any:
        sold = SoldCard.objects.filter(game_id=claim.game_id, card_id=claim.card_id).exists()
        return claim.card.grid if sold else None


class AwardSerializer(serializers.Serializer[Any]):
    series = serializers.CharField(source="claim.series.code")
    serial = serializers.IntegerField(source="claim.serial")
    amount = money_field()


class PrizeResultSerializer(serializers.ModelSerializer[PrizeResult]):
    kind = serializers.ChoiceField(choices=ClaimKind.choices, read_only=True)
    amount = money_field(read_only=True)
    share = money_field(read_only=True)
    remainder = money_field(read_only=True)
    confirmed_by = slug("username")
    awards = serializers.SerializerMethodField()

    class Meta:
        model = PrizeResult
        fields = [
            "kind",
            "ordinal",
            "amount",
            "winners",
            "share",
            "remainder",
            "remainder_to",
            "awards",
            "confirmed_by",
            "confirmed_at",
        ]
        read_only_fields = fields

    @extend_schema_field(AwardSerializer(many=True))
    def get_awards(self, result: PrizeResult) -> Any:
        awards = result.awards.select_related("claim__series").order_by(
            "claim__series__code", "claim__serial"
        )
        return AwardSerializer(awards, many=True).data


# --- Games: read models (bingo.traditional.services.readmodels)
# -----------------------------------------------------


class AnnouncedSeriesSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    face_value = money_field()
    cards = serializers.IntegerField()
    ranges = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text="Sold serials as [first, last] pairs.",
    )


class OfferedSeriesSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    face_value = money_field()
    cards = serializers.IntegerField(help_text="Cards in the series.")


class AnnouncementSerializer(serializers.Serializer[Any]):
    """Fixed at the close of sales; before, only the series on sale of the session's first game (S3)."""

    offered = OfferedSeriesSerializer(
        many=True,
        required=False,
        help_text="S3: the series on sale and their face value (first game of a session).",
    )
    offered_voice = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="The voice clips of the S3 announcement, in order.",
    )
    voice = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="The voice clips of the sales announcement (S6–S8), in order: GET /voice/{clip}.wav.",
    )

    formula = serializers.CharField(required=False, help_text="What the caller reads out.")
    series = AnnouncedSeriesSerializer(many=True, required=False)
    cards_sold = serializers.IntegerField(required=False)
    sales_total = money_field(required=False)
    line_prize = money_field(required=False)
    bingo_prize = money_field(required=False)
    programs = AnnouncedProgramSerializer(
        many=True, required=False, help_text="Accumulated prizes in play (BA-G4)."
    )


class DrawnBallSerializer(serializers.Serializer[Any]):
    ordinal = serializers.IntegerField()
    ball = serializers.IntegerField()
    colour = serializers.CharField()
    drawn_at = serializers.DateTimeField()
    corrected_from = serializers.IntegerField(
        allow_null=True, help_text="The number the ball was first entered as, if it was corrected."
    )


class BallCorrectionRequestSerializer(serializers.Serializer[Any]):
    ordinal = serializers.IntegerField(
        min_value=1, max_value=90, help_text="Which ball of the game to correct."
    )
    number = serializers.IntegerField(help_text="The number the ball really is, 1 to 90.")
    reason = serializers.CharField(max_length=500, help_text="Why: it is kept with the correction.")


class BallCorrectionSerializer(serializers.Serializer[Any]):
    ordinal = serializers.IntegerField()
    old = serializers.IntegerField()
    new = serializers.IntegerField()
    reason = serializers.CharField()
    corrected_by = serializers.CharField()
    corrected_at = serializers.DateTimeField()


class WinnerSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    serial = serializers.IntegerField()
    amount = money_field()


class PrizeSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=ClaimKind.choices)
    ordinal = serializers.IntegerField()
    amount = money_field()
    share = money_field()
    remainder = money_field()
    winners = WinnerSerializer(many=True)


class ClaimRowSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ClaimKind.choices)
    series = serializers.CharField()
    serial = serializers.IntegerField()
    bound_ordinal = serializers.IntegerField()
    valid = serializers.BooleanField()
    refusal = serializers.CharField()
    reason = serializers.CharField(help_text="The verdict in English (the audit's).")
    code = serializers.CharField(help_text="The verdict as a stable code (bingo.claims.VerdictCode).")
    facts = serializers.DictField(
        help_text="The verdict's figures (serial, bound, at, row, line_at, missing)."
    )
    winning_row = serializers.IntegerField(allow_null=True)
    completed_at = serializers.IntegerField(allow_null=True)
    claimed_by = serializers.CharField()
    created_at = serializers.DateTimeField()


class UnclaimedCardSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    serial = serializers.IntegerField()
    since_ball = serializers.IntegerField()


class UnclaimedSerializer(serializers.Serializer[Any]):
    """The first cards of each kind (readmodels.UNCLAIMED_SHOWN at most) and how many there are."""

    ordinal = serializers.IntegerField(help_text="The ball the list is computed at.")
    line = UnclaimedCardSerializer(many=True)
    bingo = UnclaimedCardSerializer(many=True)
    line_count = serializers.IntegerField()
    bingo_count = serializers.IntegerField()


class BallSetUsageSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    games_played = serializers.IntegerField()
    certified_games = serializers.IntegerField(help_text="The manufacturer's number of games (TB-07).")
    games_left = serializers.IntegerField()
    at_limit = serializers.BooleanField(help_text="The set must be replaced (TB-07).")
    retired = serializers.BooleanField()
    colours = serializers.ListField(child=serializers.CharField())


class DrawDeviceRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()


class DrawProofSerializer(serializers.Serializer[Any]):
    """The draw as published (issue 28): verifiable by seed, with its commitment, or not (a blower's)."""

    verifiable = serializers.BooleanField(
        help_text="True: the balls follow from a seed committed before the sales opened (RNG); "
        "false: not verifiable by seed (a blower's balls, or verifiable draws off)."
    )
    commitment = serializers.CharField(
        allow_blank=True, help_text="SHA-256 of the draw's seed, 64 hex digits; empty when not verifiable."
    )
    url = serializers.CharField(allow_blank=True, help_text="The draw's public page (no login).")


class DrawRecordSerializer(DrawProofSerializer):
    """The recall's draw: the commitment, the sales digest fixed at the close of sales, the seed revealed."""

    sales_digest = serializers.CharField(
        required=False, allow_blank=True, help_text="bingo-sales/v1 digest of the cards sold; empty before."
    )
    cards = serializers.IntegerField(required=False, allow_null=True, help_text="Cards in the sales digest.")
    seed = serializers.CharField(
        required=False, allow_blank=True, help_text="The seed, 64 hex digits, once revealed after the game."
    )
    revealed_at = serializers.DateTimeField(required=False, allow_null=True)


class DeviceSwitchSerializer(serializers.Serializer[Any]):
    at_ordinal = serializers.IntegerField(help_text="Balls drawn before the switch.")
    from_device = serializers.CharField(allow_null=True)
    to_device = serializers.CharField()
    to_kind = serializers.CharField()
    from_source = serializers.CharField()
    to_source = serializers.CharField()
    reason = serializers.CharField()
    switched_by = serializers.CharField()
    switched_at = serializers.DateTimeField()


class BallSetEventSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    balls = serializers.ListField(child=serializers.IntegerField())
    note = serializers.CharField()
    game = serializers.IntegerField(allow_null=True)
    replacement = serializers.IntegerField(allow_null=True)
    games_played = serializers.IntegerField()
    recorded_by = serializers.CharField()
    recorded_at = serializers.DateTimeField()


class GameSummarySerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.ChoiceField(choices=GameState.choices)
    state_label = serializers.CharField()
    draw_source = serializers.ChoiceField(choices=DrawSource.choices)
    cards_sold = serializers.IntegerField()
    sales_total = money_field()
    line_prize = money_field(allow_null=True)
    bingo_prize = money_field(allow_null=True)
    announcement = AnnouncementSerializer()
    claim_window = ClaimWindowField()
    line_won_at = serializers.IntegerField(allow_null=True)
    balls = DrawnBallSerializer(many=True)
    prizes = PrizeSerializer(many=True)
    programs = GameProgramSerializer(
        many=True, help_text="Programs in play, with their result after the Bingo."
    )
    void_reason = serializers.CharField(allow_blank=True, help_text=_("Internal: staff only."))
    void_message = serializers.CharField(allow_blank=True, help_text=_("What the hall's screens say."))
    draw = DrawProofSerializer(help_text="The draw's commitment: verifiable by seed or not.")
    ball_set = BallSetUsageSerializer(
        allow_null=True, required=False, help_text="The game's ball set and its count (staff only)."
    )
    draw_device = DrawDeviceRefSerializer(
        allow_null=True, required=False, help_text="The device drawing the balls now (staff only)."
    )


class GameViewSerializer(GameSummarySerializer):
    """The caller's view: the summary, the latest claims and the winning cards nobody has claimed.

    Never the sold cards: the announcement gives them as ranges, and GET .../sold-cards/ pages them.
    """

    claims = ClaimRowSerializer(many=True, help_text="The latest claims (100 at most), oldest first.")
    claims_count = serializers.IntegerField(help_text="Every claim of the game (the recall lists them).")
    unclaimed = UnclaimedSerializer()


class SoldCardsQuerySerializer(serializers.Serializer[Any]):
    after = serializers.RegexField(
        r"^[^:]{1,40}:[0-9]{1,9}$",
        required=False,
        help_text='The "next" of the previous page ("<series>:<serial>"); the first page without it.',
    )
    limit = serializers.IntegerField(required=False, default=500, min_value=1, max_value=2000)


class SoldCardRowSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    serial = serializers.IntegerField()


class SoldCardsPageSerializer(serializers.Serializer[Any]):
    count = serializers.IntegerField(help_text="Cards sold in the game.")
    next = serializers.CharField(
        allow_null=True, help_text="Pass as ?after= for the next page; null at the end."
    )
    results = SoldCardRowSerializer(many=True)


class ConsoleSnapshotSerializer(serializers.Serializer[Any]):
    """What the caller console loads before applying its stream's events (and on a gap or reconnect)."""

    streams = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Sequence number of each stream the console socket delivers (the room's, the staff one).",
    )
    room = RoomSerializer()
    game = GameViewSerializer(allow_null=True)


class ConsoleSeqSerializer(serializers.Serializer[Any]):
    streams = serializers.DictField(child=serializers.IntegerField())


class ConsoleScreenSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    shown = serializers.BooleanField(help_text="The screen acknowledged showing the current ball.")
    late = serializers.BooleanField(help_text="Not shown, and the ball was drawn more than late_after s ago.")
    shown_at = serializers.DateTimeField(allow_null=True, help_text="When it rendered the ball (its clock).")
    last_ack_at = serializers.DateTimeField(
        allow_null=True, help_text="Its latest acknowledgement of anything."
    )


class ConsoleScreensSerializer(serializers.Serializer[Any]):
    game = serializers.IntegerField(allow_null=True)
    ball = serializers.IntegerField(allow_null=True)
    ordinal = serializers.IntegerField(required=False)
    drawn_at = serializers.DateTimeField(required=False)
    late_after = serializers.FloatField()
    screens = ConsoleScreenSerializer(many=True)


class RecallSaleSerializer(serializers.Serializer[Any]):
    kind = SaleKindField()
    series = serializers.CharField()
    first = serializers.IntegerField()
    last = serializers.IntegerField()
    cards = serializers.IntegerField()
    amount = money_field()
    cashier = serializers.CharField()
    at = serializers.DateTimeField()


class RecallPayoutSerializer(serializers.Serializer[Any]):
    """A winner's share and its payment at the cashier."""

    prize = serializers.CharField(help_text="line, bingo, or program (an accumulated prize).")
    program = serializers.CharField(help_text="The program's code, for a program's prize.")
    series = serializers.CharField()
    serial = serializers.IntegerField()
    amount = money_field(money.PAYMENT_DIGITS)
    payout = PayoutSerializer(allow_null=True, help_text="The payable: waiting or paid, when, by whom, how.")


class GameRecallSerializer(GameSummarySerializer):
    """The full record of a game: sales, prizes, balls in order with their times, claims and awards."""

    room = serializers.CharField()
    venue = serializers.CharField()
    session = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    sales_closed_at = serializers.DateTimeField(allow_null=True)
    draw_started_at = serializers.DateTimeField(allow_null=True)
    closed_at = serializers.DateTimeField(allow_null=True)
    prize_rounding_residue = money_field(money.PAYMENT_DIGITS, money.METER_PLACES)
    sale_operations = RecallSaleSerializer(many=True)
    claims = ClaimRowSerializer(many=True)
    ball_corrections = BallCorrectionSerializer(many=True)
    device_switches = DeviceSwitchSerializer(many=True, help_text="Draws moved to another device (TB-31).")
    ball_set_events = BallSetEventSerializer(
        many=True, help_text="The ball set's incidents and replacements while the game was on (R-06)."
    )
    payouts = RecallPayoutSerializer(many=True)
    draw = DrawRecordSerializer(help_text="The draw's commitment, sales digest and, after the game, seed.")


class GameListItemSerializer(serializers.ModelSerializer[Game]):
    state = serializers.ChoiceField(choices=GameState.choices, read_only=True)
    sales_total = money_field(read_only=True)
    line_prize = money_field(read_only=True, allow_null=True)
    bingo_prize = money_field(read_only=True, allow_null=True)

    class Meta:
        model = Game
        fields = [
            "id",
            "room",
            "session",
            "number",
            "state",
            "draw_source",
            "cards_sold",
            "sales_total",
            "line_prize",
            "bingo_prize",
            "balls_drawn",
            "created_at",
            "closed_at",
        ]
        read_only_fields = fields


class VoiceClipsSerializer(serializers.Serializer[Any]):
    state = serializers.ChoiceField(
        choices=["ready", "building", "missing", "failed"],
        help_text="ready: every clip made; building: being made; missing: not made; failed: see error.",
    )
    made = serializers.IntegerField(help_text="Clips made so far.")
    total = serializers.IntegerField(help_text="Clips in the catalogue.")
    error = serializers.CharField(allow_blank=True, help_text="Why the last build failed (failed only).")
