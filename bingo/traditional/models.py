"""Card series and cards, games, sales, balls, claims and prize results of traditional bingo (spec §2)."""

from __future__ import annotations

from decimal import Decimal

import pgtrigger
from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from django_fsm import FSMField, FSMModelMixin, transition

from halls import money
from halls.fields import MoneyField
from halls.models import GameSession, Room, Venue, append_only


class BallSet(models.Model):
    """A homologated set of 90 balls with the colour of each number (TB-05, TB-06, R-06).

    Only bingo.traditional.services.ballsets writes it: its games are counted when each game ends (R-06), and
    at
    ``certified_games`` (the manufacturer's number, TB-07) the console and the setup page warn that it must
    be replaced. A set replaced whole is retired (``retired_at``) and chosen for no new game.
    """

    venue = models.ForeignKey(
        Venue, on_delete=models.PROTECT, related_name="ball_sets", verbose_name=_("venue")
    )
    name = models.CharField(max_length=80, verbose_name=_("name"))
    # {"1": "red", ...}: every number 1..90, at least four colours (OP-09).
    colours = models.JSONField(verbose_name=_("colours"))
    certified_games = models.PositiveIntegerField(default=10_000, verbose_name=_("certified games"))
    games_played = models.PositiveIntegerField(default=0, verbose_name=_("games played"))
    manufacturer = models.CharField(max_length=120, blank=True, verbose_name=_("manufacturer"))
    homologation_ref = models.CharField(max_length=120, blank=True, verbose_name=_("homologation ref"))
    created_at = models.DateTimeField(null=True, blank=True, verbose_name=_("created at"))
    retired_at = models.DateTimeField(null=True, blank=True, verbose_name=_("retired at"))
    # The set that replaced this one whole (BallSetEvent kind "set_replaced").
    replaced_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="replaces",
        verbose_name=_("replaced by"),
    )

    class Meta:
        verbose_name = _("ball set")
        verbose_name_plural = _("ball sets")
        constraints = [
            models.UniqueConstraint(fields=["venue", "name"], name="ball_set_name_unique_per_venue")
        ]

    def __str__(self) -> str:
        return self.name

    def colour_of(self, number: int) -> str:
        return str(self.colours.get(str(number), ""))

    @property
    def at_limit(self) -> bool:
        """The manufacturer's number of games is reached: the set must be replaced (TB-07)."""
        return self.games_played >= self.certified_games

    @property
    def games_left(self) -> int:
        return max(self.certified_games - self.games_played, 0)


class BallSetEventKind(models.TextChoices):
    INCIDENT = "incident", _("Incident")
    BALLS_REPLACED = "balls_replaced", _("Balls replaced")
    SET_REPLACED = "set_replaced", _("Set replaced")


class BallSetEvent(models.Model):
    """What happened to a ball set (R-06): a condition incident (a ball chipped, faded, the wrong weight),
    balls replaced, or the whole set replaced by another. Append-only, with who and when."""

    ball_set = models.ForeignKey(BallSet, on_delete=models.PROTECT, related_name="events")
    kind = models.CharField(max_length=16, choices=BallSetEventKind.choices)
    # The ball numbers concerned (none: the set as a whole).
    balls = models.JSONField(default=list, blank=True)
    note = models.TextField()
    game = models.ForeignKey("Game", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    replacement = models.ForeignKey(
        BallSet, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    games_played = models.PositiveIntegerField()  # the set's count when it happened
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField()

    class Meta:
        verbose_name = _("ball set event")
        verbose_name_plural = _("ball set events")
        ordering = ["pk"]
        triggers = [append_only()]


class DrawDeviceKind(models.TextChoices):
    """TB-30: a pneumatic or air-turbine blower (its balls read by the reader and entered), or the RNG."""

    PNEUMATIC = "pneumatic", _("Pneumatic blower")
    TURBINE = "turbine", _("Air-turbine blower")
    RNG = "rng", _("RNG (CSPRNG)")


class DrawDevice(models.Model):
    """A room's ball-drawing device (TB-30) or its reserve (TB-31), written by
    bingo.traditional.services.devices."""

    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="draw_devices")
    name = models.CharField(max_length=80)
    kind = models.CharField(max_length=10, choices=DrawDeviceKind.choices)
    reserve = models.BooleanField(default=False)
    homologation_ref = models.CharField(max_length=120, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        verbose_name = _("drawing device")
        verbose_name_plural = _("drawing devices")
        constraints = [
            models.UniqueConstraint(fields=["room", "name"], name="draw_device_name_unique_in_room")
        ]
        ordering = ["room_id", "reserve", "pk"]

    def __str__(self) -> str:
        return self.name

    @property
    def draw_source(self) -> str:
        return DrawSource.RNG if self.kind == DrawDeviceKind.RNG else DrawSource.MANUAL


class CardSeries(models.Model):
    """A numbered batch of paper cards of one face value, generated from a stored seed (TB-21..24)."""

    venue = models.ForeignKey(
        Venue, on_delete=models.PROTECT, related_name="card_series", verbose_name=_("venue")
    )
    code = models.CharField(max_length=40, verbose_name=_("code"))
    face_value = MoneyField(
        max_digits=12,
        decimal_places=2,
        validators=[MinValueValidator(money.CENT)],
        verbose_name=_("face value"),
    )
    strips = models.PositiveIntegerField(validators=[MinValueValidator(1)], verbose_name=_("strips"))
    # The seed every master card is recomputed from (cartón matriz).
    seed = models.CharField(max_length=64, verbose_name=_("seed"))
    # Version of bingo.cardgen that made the cards: recomputing a master card must use the same one.
    generator = models.CharField(max_length=8, default="v2", verbose_name=_("generator"))
    # [strip index, attempt] of the strips derived again because they repeated an earlier card (v2).
    rederived_strips = models.JSONField(default=list, blank=True, verbose_name=_("rederived strips"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("created by")
    )

    class Meta:
        verbose_name = _("card series")
        verbose_name_plural = pgettext_lazy("plural", "card series")
        constraints = [models.UniqueConstraint(fields=["venue", "code"], name="series_code_unique_per_venue")]

    def __str__(self) -> str:
        return self.code

    @property
    def card_count(self) -> int:
        return self.strips * 6


class Card(models.Model):
    """A card of a series: its master card (the 3×9 grid) and its security code."""

    series = models.ForeignKey(CardSeries, on_delete=models.PROTECT, related_name="cards")
    serial = models.PositiveIntegerField()
    grid = models.JSONField()
    # Hex of the 90-bit set of its numbers: equal keys, equal numbers.
    key = models.CharField(max_length=23, db_index=True)
    security_code = models.CharField(max_length=16)
    # bingo.cards.pack_numbers: 15 bytes, row by row, written once from the validated grid.
    numbers = models.BinaryField(max_length=15)

    class Meta:
        verbose_name = _("bingo card")
        verbose_name_plural = _("bingo cards")
        constraints = [
            models.UniqueConstraint(fields=["series", "serial"], name="card_serial_unique_in_series")
        ]
        ordering = ["series_id", "serial"]

    def __str__(self) -> str:
        return f"{self.series.code} #{self.serial}"


class GameState(models.TextChoices):
    SCHEDULED = "scheduled", _("Scheduled")
    ON_SALE = "on_sale", _("On sale")
    SALES_CLOSED = "sales_closed", _("Sales closed")
    DRAWING = "drawing", _("Drawing")
    PAUSED = "paused", _("Paused")
    CLOSED = "closed", _("Closed")
    VOID = "void", _("Void")


class DrawSource(models.TextChoices):
    RNG = "rng", _("RNG (CSPRNG)")
    MANUAL = "manual", _("Blower with ball reader")


class ClaimWindow(models.TextChoices):
    """The "any more lines / bingos?" question open after a valid claim (spec §2.7 S14)."""

    NONE = "", _("None")
    LINE = "line", _("Any more lines?")
    BINGO = "bingo", _("Any more bingos?")


LIVE_STATES = (
    GameState.SCHEDULED,
    GameState.ON_SALE,
    GameState.SALES_CLOSED,
    GameState.DRAWING,
    GameState.PAUSED,
)


class Game(FSMModelMixin, models.Model):
    """One partida. Its state changes only through the transitions below, called by
    bingo.traditional.services."""

    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="games", verbose_name=_("room"))
    session = models.ForeignKey(
        GameSession, on_delete=models.PROTECT, related_name="games", verbose_name=_("session")
    )
    number = models.PositiveIntegerField(verbose_name=_("number"))
    state = FSMField(
        default=GameState.SCHEDULED, choices=GameState.choices, protected=True, verbose_name=_("state")
    )
    draw_source = models.CharField(
        max_length=6, choices=DrawSource.choices, default=DrawSource.RNG, verbose_name=_("draw source")
    )
    pace_seconds = models.DecimalField(max_digits=5, decimal_places=2, verbose_name=_("pace seconds"))
    ball_set = models.ForeignKey(
        BallSet,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="games",
        verbose_name=_("ball set"),
    )
    # The device drawing the balls now (a reserve after a switch, DeviceSwitch); None: not recorded.
    draw_device = models.ForeignKey(
        DrawDevice,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="games",
        verbose_name=_("draw device"),
    )
    line_percent = models.DecimalField(max_digits=5, decimal_places=2, verbose_name=_("line percent"))
    bingo_percent = models.DecimalField(max_digits=5, decimal_places=2, verbose_name=_("bingo percent"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    # The published SHA-256 commitment of the draw's seed (bingo.draws), set when an RNG game is created
    # with verifiable draws on; "" for a blower's game (not verifiable by seed) or with the setting off.
    draw_commitment = models.CharField(max_length=64, blank=True, verbose_name=_("draw commitment"))

    # Fixed at the close of sales and announced before the first ball (TB-41).
    cards_sold = models.PositiveIntegerField(default=0, verbose_name=_("cards sold"))
    sales_total = MoneyField(
        max_digits=12, decimal_places=2, default=Decimal("0"), verbose_name=_("sales total")
    )
    line_prize = MoneyField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("line prize")
    )
    bingo_prize = MoneyField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("bingo prize")
    )
    # Sub-cent parts of the prize percentages, kept by the house and recorded (OP-10).
    prize_rounding_residue = MoneyField(
        max_digits=14, decimal_places=6, default=Decimal("0"), verbose_name=_("prize rounding residue")
    )
    announcement = models.JSONField(default=dict, blank=True, verbose_name=_("announcement"))
    sales_closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("sales closed at"))

    draw_started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("draw started at"))
    last_ball_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last ball at"))
    balls_drawn = models.PositiveSmallIntegerField(default=0, verbose_name=_("balls drawn"))
    # How many of its balls were corrected (BallCorrection): part of the detector's fingerprint, so no
    # process applies the next ball to an index built from the balls before a correction.
    balls_corrected = models.PositiveSmallIntegerField(default=0, verbose_name=_("balls corrected"))
    # Ordinal of the ball at which the Line was confirmed; later line claims are refused (TB-08).
    line_won_at = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("line won at"))
    claim_window = models.CharField(
        max_length=5, choices=ClaimWindow.choices, default="", blank=True, verbose_name=_("claim window")
    )
    paused_by_claim = models.BooleanField(default=False, verbose_name=_("paused by claim"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    void_reason = models.TextField(
        blank=True, verbose_name=_("void reason")
    )  # internal: audit, recall and the caller, never the screens
    # What the hall's screens say about the void (the caller's words for the public; may be empty).
    void_message = models.CharField(max_length=200, blank=True, verbose_name=_("void message"))

    class Meta:
        verbose_name = _("game")
        verbose_name_plural = _("games")
        constraints = [
            models.UniqueConstraint(fields=["session", "number"], name="game_number_unique_in_session"),
            models.UniqueConstraint(
                fields=["room"],
                condition=Q(state__in=[s.value for s in LIVE_STATES]),
                name="one_live_game_per_room",
            ),
            models.CheckConstraint(condition=Q(balls_drawn__lte=90), name="game_at_most_90_balls"),
        ]

    def __str__(self) -> str:
        return str(_("Game %(number)s · %(room)s")) % {"number": self.number, "room": self.room}

    @property
    def venue_id(self) -> int:
        return self.room.venue_id

    @property
    def is_live(self) -> bool:
        return self.state in LIVE_STATES

    @transition(field=state, source=GameState.SCHEDULED, target=GameState.ON_SALE)
    def open_sales(self) -> None:
        """Cards may be sold and returned."""

    @transition(field=state, source=GameState.ON_SALE, target=GameState.SALES_CLOSED)
    def close_sales(self) -> None:
        """Sales are counted and the prizes fixed and announced."""

    @transition(field=state, source=GameState.SALES_CLOSED, target=GameState.DRAWING)
    def start_draw(self) -> None:
        """The first ball may be drawn."""

    @transition(field=state, source=GameState.DRAWING, target=GameState.PAUSED)
    def pause(self) -> None:
        """A claim or the caller interrupts the draw."""

    @transition(field=state, source=GameState.PAUSED, target=GameState.DRAWING)
    def resume(self) -> None:
        """The draw goes on."""

    @transition(field=state, source=GameState.PAUSED, target=GameState.CLOSED)
    def close(self) -> None:
        """The Bingo is confirmed: no claim is accepted any more (TB-12)."""

    @transition(field=state, source=[s.value for s in LIVE_STATES], target=GameState.VOID)
    def void(self) -> None:
        """The game is cancelled, with a reason."""


class SaleKind(models.TextChoices):
    SELL = "sell", _("Sell")
    RETURN = "return", _("Return")


class SaleOperation(models.Model):
    """One cashier operation: a contiguous range of a series sold to, or returned from, a game."""

    game = models.ForeignKey(
        Game, on_delete=models.PROTECT, related_name="sale_operations", verbose_name=_("game")
    )
    series = models.ForeignKey(
        CardSeries, on_delete=models.PROTECT, related_name="+", verbose_name=_("series")
    )
    kind = models.CharField(max_length=6, choices=SaleKind.choices, verbose_name=_("kind"))
    first_serial = models.PositiveIntegerField(verbose_name=_("first serial"))
    last_serial = models.PositiveIntegerField(verbose_name=_("last serial"))
    cards = models.PositiveIntegerField(verbose_name=_("number of cards"))
    amount = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    cashier = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("cashier")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    # A terminal's retry with the same key answers as the first time and writes nothing.
    idempotency_key = models.CharField(
        max_length=80, null=True, blank=True, verbose_name=_("idempotency key")
    )
    # The cashier's shift whose drawer took (or paid back) the money, and its ledger transaction; empty on
    # operations from before sales went through the ledger.
    shift = models.ForeignKey(
        "cashier.Shift",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="sale_operations",
        verbose_name=_("shift"),
    )
    ledger_tx = models.ForeignKey(
        "cashier.LedgerTransaction",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("ledger tx"),
    )

    class Meta:
        verbose_name = _("sale operation")
        verbose_name_plural = _("sale operations")
        constraints = [
            models.UniqueConstraint(fields=["game", "idempotency_key"], name="sale_idempotency_key_unique"),
            models.CheckConstraint(
                condition=Q(first_serial__lte=F("last_serial")), name="sale_range_ordered"
            ),
        ]
        ordering = ["pk"]
        triggers = [append_only()]  # a return is a row of its own, never an edit


class SoldCard(models.Model):
    """A card sold in a game. A paper card serves one game only; a returned card's row is deleted."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="sold_cards")
    card = models.OneToOneField(Card, on_delete=models.PROTECT, related_name="sale")
    # Copy of the card's key: the database itself refuses two cards with the same numbers in one game.
    card_key = models.CharField(max_length=23)
    sale = models.ForeignKey(SaleOperation, on_delete=models.PROTECT, related_name="+")

    class Meta:
        verbose_name = _("sold card")
        verbose_name_plural = _("sold cards")
        constraints = [
            models.UniqueConstraint(fields=["game", "card_key"], name="sold_card_numbers_unique_in_game")
        ]


# The PostgreSQL body of Ball's UPDATE trigger (SQLite's twin: halls.sqlite_triggers).
BALL_CORRECTED_ONLY_SQL = """
IF (NEW.id, NEW.game_id, NEW.ordinal, NEW.source, NEW.drawn_at) IS DISTINCT FROM
       (OLD.id, OLD.game_id, OLD.ordinal, OLD.source, OLD.drawn_at)
   OR NEW.entered_by_id IS DISTINCT FROM OLD.entered_by_id
   OR NOT EXISTS (
       SELECT 1 FROM bingo_ballcorrection c
        WHERE c.ball_id = OLD.id AND c.old_number = OLD.number AND c.new_number = NEW.number)
THEN
    RAISE EXCEPTION 'bingo_ball: a ball changes only its number, and only through its correction';
END IF;
RETURN NEW;
"""


class Ball(models.Model):
    """A drawn ball, stored with its ordinal and time before it is shown (append-only, DESIGN §4)."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="balls", verbose_name=_("game"))
    ordinal = models.PositiveSmallIntegerField(verbose_name=_("ordinal"))
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    source = models.CharField(max_length=6, choices=DrawSource.choices, verbose_name=_("source"))
    drawn_at = models.DateTimeField(verbose_name=_("drawn at"))
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("entered by"),
    )

    class Meta:
        verbose_name = _("ball")
        verbose_name_plural = _("balls")
        constraints = [
            models.UniqueConstraint(fields=["game", "ordinal"], name="ball_ordinal_unique_in_game"),
            models.UniqueConstraint(fields=["game", "number"], name="ball_number_unique_in_game"),
            models.CheckConstraint(
                condition=Q(number__gte=1) & Q(number__lte=90), name="ball_number_1_to_90"
            ),
            models.CheckConstraint(
                condition=Q(ordinal__gte=1) & Q(ordinal__lte=90), name="ball_ordinal_1_to_90"
            ),
        ]
        ordering = ["game_id", "ordinal"]
        # Never deleted; changed only by a correction (bingo.traditional.services.corrections): its number
        # alone, and
        # only to what a BallCorrection row of this ball already records.
        triggers = [
            pgtrigger.Protect(name="append_only", operation=pgtrigger.Delete),
            pgtrigger.Trigger(
                name="number_corrected_only",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                func=BALL_CORRECTED_ONLY_SQL,
            ),
        ]


class BallCorrection(models.Model):
    """A mis-keyed ball set right (append-only): the ball keeps its ordinal and time and takes the new
    number; this row keeps the old one, with who corrected it, when and why
    (bingo.traditional.services.corrections)."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="ball_corrections")
    ball = models.ForeignKey(Ball, on_delete=models.PROTECT, related_name="corrections")
    ordinal = models.PositiveSmallIntegerField()
    old_number = models.PositiveSmallIntegerField()
    new_number = models.PositiveSmallIntegerField()
    reason = models.TextField()
    corrected_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    corrected_at = models.DateTimeField()

    class Meta:
        verbose_name = _("ball correction")
        verbose_name_plural = _("ball corrections")
        constraints = [
            models.CheckConstraint(
                condition=~Q(old_number=F("new_number")), name="ball_correction_changes_the_number"
            ),
        ]
        ordering = ["pk"]
        triggers = [append_only()]


class DeviceSwitch(models.Model):
    """The caller moved a game's draw to another device mid-game (TB-31, TB-46): who, when, after which
    ball, why. The balls already drawn stay as they are; the next one is ordinal ``at_ordinal + 1``."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="device_switches")
    from_device = models.ForeignKey(
        DrawDevice, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    to_device = models.ForeignKey(DrawDevice, on_delete=models.PROTECT, related_name="+")
    from_source = models.CharField(max_length=6, choices=DrawSource.choices)
    to_source = models.CharField(max_length=6, choices=DrawSource.choices)
    at_ordinal = models.PositiveSmallIntegerField()  # balls drawn before the switch
    reason = models.TextField()
    switched_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    switched_at = models.DateTimeField()

    class Meta:
        verbose_name = _("device switch")
        verbose_name_plural = _("device switches")
        ordering = ["pk"]
        triggers = [append_only()]


class ClaimKind(models.TextChoices):
    LINE = "line", _("Line")
    BINGO = "bingo", _("Bingo")


class Claim(models.Model):
    """A Line or Bingo call by card serial and its verification against the master card (§2.7 S11–S13)."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="claims", verbose_name=_("game"))
    kind = models.CharField(max_length=5, choices=ClaimKind.choices, verbose_name=_("kind"))
    series = models.ForeignKey(
        CardSeries, on_delete=models.PROTECT, related_name="+", verbose_name=_("series")
    )
    serial = models.PositiveIntegerField(verbose_name=_("serial"))
    card = models.ForeignKey(Card, on_delete=models.PROTECT, related_name="claims", verbose_name=_("card"))
    # The last ball drawn when play was interrupted: co-winners share a ball.
    bound_ordinal = models.PositiveSmallIntegerField(verbose_name=_("bound ordinal"))
    valid = models.BooleanField(verbose_name=_("valid"))
    refusal = models.CharField(max_length=30, blank=True, verbose_name=_("refusal"))
    reason = models.TextField(verbose_name=_("reason"))
    winning_row = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("winning row"))
    completed_at = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("completed at"))
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("claimed by")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    idempotency_key = models.CharField(
        max_length=80, null=True, blank=True, verbose_name=_("idempotency key")
    )

    class Meta:
        verbose_name = _("claim")
        verbose_name_plural = _("claims")
        constraints = [
            models.UniqueConstraint(fields=["game", "idempotency_key"], name="claim_idempotency_key_unique"),
            # One accepted claim per card and prize: a card cannot win the same Line twice.
            models.UniqueConstraint(
                fields=["game", "kind", "card"],
                condition=Q(valid=True),
                name="one_valid_claim_per_card_and_kind",
            ),
        ]
        ordering = ["pk"]


class Completion(models.Model):
    """The sold cards that completed their first line (or their bingo) with one ball of a game: one row per
    ball and kind, recorded in that ball's transaction (bingo.traditional.services.detection); none for a
    ball that
    completed nothing. The unclaimed-winners view and self-playing rooms read these.

    One row per ball, not per card: the late balls of a big game complete thousands of cards each (a sixth
    of the cards sold complete their bingo with the 90th ball), and a row per card made such a ball's
    step as slow as those inserts.
    """

    # The unique index below starts with the game: no index of its own.
    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="completions", db_index=False)
    kind = models.CharField(max_length=5, choices=ClaimKind.choices)
    ordinal = models.PositiveSmallIntegerField()
    # How many cards `cards` holds, so counts never read them.
    count = models.PositiveIntegerField()
    # The cards' ids, ascending, as little-endian int64 (bingo.detect_index.card_ids reads them).
    cards = models.BinaryField()

    class Meta:
        verbose_name = _("completion")
        verbose_name_plural = _("completions")
        constraints = [
            # One row per ball and kind: a repeated ball step cannot add rows.
            models.UniqueConstraint(
                fields=["game", "kind", "ordinal"], name="completion_once_per_ball_and_kind"
            ),
        ]


class PrizeResult(models.Model):
    """How one prize of a game was paid: the winners' equal shares and the remainder (spec TB-11, OP-10)."""

    game = models.ForeignKey(
        Game, on_delete=models.PROTECT, related_name="prize_results", verbose_name=_("game")
    )
    kind = models.CharField(max_length=5, choices=ClaimKind.choices, verbose_name=_("kind"))
    ordinal = models.PositiveSmallIntegerField(verbose_name=_("ordinal"))
    amount = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    winners = models.PositiveSmallIntegerField(verbose_name=_("winners"))
    share = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("share"))
    remainder = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("remainder"))
    remainder_to = models.CharField(max_length=120, verbose_name=_("remainder to"))
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("confirmed by")
    )
    confirmed_at = models.DateTimeField(verbose_name=_("confirmed at"))

    class Meta:
        verbose_name = _("prize result")
        verbose_name_plural = _("prize results")
        constraints = [models.UniqueConstraint(fields=["game", "kind"], name="one_result_per_prize")]


class Award(models.Model):
    """One winner's share of a prize."""

    result = models.ForeignKey(PrizeResult, on_delete=models.PROTECT, related_name="awards")
    claim = models.OneToOneField(Claim, on_delete=models.PROTECT, related_name="award")
    amount = MoneyField(max_digits=12, decimal_places=2)

    class Meta:
        verbose_name = _("prize award")
        verbose_name_plural = _("prize awards")
        triggers = [append_only()]


# --- accumulated prize programs (bolsa acumulada, spec §2.4; pure rules in bingo.traditional.programs)
# ---------------

PROGRAM_TYPE_CHOICES = [(f"BA-{n}", f"BA-{n}") for n in range(1, 21)]


class PrizeProgram(models.Model):
    """A prize program a room runs (BA-1 … BA-20): its parameters live in versions, its money in a pool.

    Sales-funded programs have their own pool (jackpots.Pool, one level); the Super Prima and the Colour
    Prima point at the room's Bolsa Acumulada pool (OP-36). A program is never deleted, only deactivated.
    """

    room = models.ForeignKey(
        Room, on_delete=models.PROTECT, related_name="prize_programs", verbose_name=_("room")
    )
    code = models.CharField(max_length=40, verbose_name=_("code"))
    program_type = models.CharField(
        max_length=6, choices=PROGRAM_TYPE_CHOICES, verbose_name=_("program type")
    )
    name = models.CharField(max_length=120, verbose_name=_("name"))
    pool = models.ForeignKey(
        "jackpots.Pool", on_delete=models.PROTECT, related_name="+", verbose_name=_("pool")
    )
    active = models.BooleanField(default=True, verbose_name=_("active"))
    # The step state before the program's first game (rules.initial_state, serialised by services.programs).
    initial_state = models.JSONField(default=dict, verbose_name=_("initial state"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("created by"),
    )
    deactivated_at = models.DateTimeField(null=True, blank=True, verbose_name=_("deactivated at"))

    class Meta:
        verbose_name = _("prize program")
        verbose_name_plural = _("prize programs")
        constraints = [models.UniqueConstraint(fields=["room", "code"], name="program_code_unique_in_room")]
        ordering = ["room_id", "pk"]

    def __str__(self) -> str:
        return f"{self.program_type} {self.name} · {self.room}"


class PrizeProgramVersion(models.Model):
    """One effective-dated version of a program's parameters (BA-G3): a change is a new row, never an update.

    `params` are exactly what bingo.traditional.programs.rules.make_program takes.
    """

    program = models.ForeignKey(
        PrizeProgram, on_delete=models.PROTECT, related_name="versions", verbose_name=_("program")
    )
    version = models.PositiveIntegerField(verbose_name=_("version"))
    effective_from = models.DateTimeField(verbose_name=_("effective from"))
    params = models.JSONField(verbose_name=_("params"))
    authorisation_ref = models.CharField(max_length=120, blank=True, verbose_name=_("authorisation ref"))
    # SHA-256 of the version's terms (bingo.traditional.programs.terms): the posted prize table prints it,
    # the screens show its short form. Blank for versions stored before digests were kept.
    digest = models.CharField(max_length=64, blank=True, default="", db_index=True, verbose_name=_("digest"))
    # The terms the digest was taken of, as proposed (bingo.traditional.programs.terms.program_terms).
    terms = models.JSONField(default=dict, blank=True, verbose_name=_("terms"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("prize program version")
        verbose_name_plural = _("prize program versions")
        constraints = [
            models.UniqueConstraint(fields=["program", "version"], name="program_version_once"),
            models.UniqueConstraint(
                fields=["program", "effective_from"], name="program_version_instant_once"
            ),
        ]
        ordering = ["program_id", "version"]


class RoomBolsa(models.Model):
    """The room's general Bolsa Acumulada (OP-36): funded at each close of sales, pays BA-19 and BA-20.

    Its percentage's history is the pool level's parameter changes (jackpots.ParameterChange).
    """

    room = models.OneToOneField(Room, on_delete=models.PROTECT, related_name="bolsa", verbose_name=_("room"))
    pool = models.OneToOneField(
        "jackpots.Pool", on_delete=models.PROTECT, related_name="+", verbose_name=_("pool")
    )
    funding_percent = models.DecimalField(max_digits=5, decimal_places=2, verbose_name=_("funding percent"))
    authorisation_ref = models.CharField(max_length=120, verbose_name=_("authorisation ref"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    updated_at = models.DateTimeField(verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("room bolsa")
        verbose_name_plural = _("room bolsas")
        constraints = [
            models.CheckConstraint(
                condition=Q(funding_percent__gt=0) & Q(funding_percent__lt=100), name="bolsa_percent_range"
            )
        ]


class GameProgram(models.Model):
    """What one program did in one game: the state before, the figures of the game, the terms in play
    announced before the first ball (BA-G4), the award, and the state after (set when the game closes)."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="programs", verbose_name=_("game"))
    program = models.ForeignKey(
        PrizeProgram, on_delete=models.PROTECT, related_name="games", verbose_name=_("program")
    )
    version = models.ForeignKey(
        PrizeProgramVersion, on_delete=models.PROTECT, related_name="+", verbose_name=_("version")
    )
    state_before = models.JSONField(verbose_name=_("state before"))
    state_after = models.JSONField(null=True, blank=True, verbose_name=_("state after"))
    # The game's context (rules.GameContext), kept so the state after is recomputed from the same figures.
    start = models.DateTimeField(verbose_name=_("start"))
    time_zone = models.CharField(max_length=64, verbose_name=_("time zone"))
    hall_category = models.CharField(max_length=1, verbose_name=_("hall category"))
    cards_sold = models.PositiveIntegerField(verbose_name=_("cards sold"))
    pool_amount = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("pool amount"))
    funding = MoneyField(max_digits=20, decimal_places=6, default=Decimal(0), verbose_name=_("funding"))
    picks = models.JSONField(default=list, blank=True, verbose_name=_("picks"))
    last_game_of_session = models.BooleanField(default=False, verbose_name=_("last game of session"))
    # The terms in play (rules.InPlay), or in_play False.
    in_play = models.BooleanField(default=False, verbose_name=_("in play"))
    max_ball = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("max ball"))
    colour = models.CharField(max_length=20, blank=True, verbose_name=_("colour"))
    # Exact (not rounded to the meter's 6 decimals): BA-3's prize is the pool less its carry percentage.
    amount = MoneyField(max_digits=24, decimal_places=10, null=True, blank=True, verbose_name=_("amount"))
    row = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("row"))
    slot = models.TimeField(null=True, blank=True, verbose_name=_("slot"))
    operating_day = models.DateField(null=True, blank=True, verbose_name=_("operating day"))
    step = models.PositiveIntegerField(default=0, verbose_name=_("step"))
    # The verified Bingo (rules.evaluate) and the award (rules.payout, paid by jackpots award_level).
    won = models.BooleanField(null=True, blank=True, verbose_name=_("won"))
    bingo_ordinal = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("bingo ordinal"))
    bingo_colour = models.CharField(max_length=20, blank=True, verbose_name=_("bingo colour"))
    prize = MoneyField(max_digits=24, decimal_places=10, null=True, blank=True, verbose_name=_("prize"))
    share = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True, verbose_name=_("share"))
    winners = models.PositiveSmallIntegerField(default=0, verbose_name=_("winners"))
    remainder = MoneyField(
        max_digits=24, decimal_places=10, null=True, blank=True, verbose_name=_("remainder")
    )
    carry = MoneyField(max_digits=24, decimal_places=10, null=True, blank=True, verbose_name=_("carry"))
    settlement = models.ForeignKey(
        "jackpots.PoolSettlement",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("settlement"),
    )

    class Meta:
        verbose_name = _("game program")
        verbose_name_plural = _("game programs")
        constraints = [models.UniqueConstraint(fields=["game", "program"], name="game_program_once")]
        ordering = ["game_id", "program_id"]


class ProgramAward(models.Model):
    """One winning card's share of a program's prize."""

    game_program = models.ForeignKey(
        GameProgram, on_delete=models.PROTECT, related_name="awards", verbose_name=_("game program")
    )
    claim = models.ForeignKey(
        Claim, on_delete=models.PROTECT, related_name="program_awards", verbose_name=_("claim")
    )
    amount = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("amount"))

    class Meta:
        verbose_name = _("program award")
        verbose_name_plural = _("program awards")
        constraints = [
            models.UniqueConstraint(fields=["game_program", "claim"], name="program_award_once_per_claim")
        ]
        triggers = [append_only()]


class GamePick(models.Model):
    """What the hall manager announces for a program in one game (BA-2 order, BA-19 amount + order,
    BA-20 amount + colour), set while the game is scheduled or on sale."""

    game = models.ForeignKey(
        Game, on_delete=models.PROTECT, related_name="program_picks", verbose_name=_("game")
    )
    program = models.ForeignKey(
        PrizeProgram, on_delete=models.PROTECT, related_name="picks", verbose_name=_("program")
    )
    amount = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True, verbose_name=_("amount"))
    max_ball = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("max ball"))
    colour = models.CharField(max_length=20, blank=True, verbose_name=_("colour"))
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("set by"),
    )
    set_at = models.DateTimeField(verbose_name=_("set at"))

    class Meta:
        verbose_name = _("game pick")
        verbose_name_plural = _("game picks")
        constraints = [models.UniqueConstraint(fields=["game", "program"], name="game_pick_once")]


class ScheduledNotice(models.Model):
    """The beat's "next game serves the scheduled hour" notice, recorded once per program, day and hour."""

    program = models.ForeignKey(
        PrizeProgram, on_delete=models.PROTECT, related_name="notices", verbose_name=_("program")
    )
    operating_day = models.DateField(verbose_name=_("operating day"))
    hour = models.TimeField(verbose_name=_("hour"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("scheduled notice")
        verbose_name_plural = _("scheduled notices")
        constraints = [
            models.UniqueConstraint(fields=["program", "operating_day", "hour"], name="scheduled_notice_once")
        ]


# --- paper cards: the stock of a series and the register of cards printed for each game (TB-21..24, R-04) --


class StockState(models.TextChoices):
    RECEIVED = "received", _("Received")
    IN_STOCK = "in_stock", _("In stock")
    ISSUED = "issued", _("Issued to a game")
    RETURNED = "returned", _("Returned")
    DESTROYED = "destroyed", _("Destroyed")


class PaperRange(models.Model):
    """Serials first..last of a series' paper, all in one state: received from the printer or the
    authority, in the store, issued to a game, returned from it, destroyed. A series' ranges are disjoint;
    a serial none holds has not been received. Changed only by bingo.traditional.services.paper (the
    arithmetic is
    bingo.traditional.paperstock's), each change one StockMovement per part moved."""

    series = models.ForeignKey(CardSeries, on_delete=models.PROTECT, related_name="paper_ranges")
    first_serial = models.PositiveIntegerField()
    last_serial = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=StockState.choices, default=StockState.RECEIVED)
    # issued: the game it went to; returned: the game it came back from
    game = models.ForeignKey(Game, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField()

    class Meta:
        verbose_name = _("paper range")
        verbose_name_plural = _("paper ranges")
        ordering = ["series", "first_serial"]
        constraints = [
            models.UniqueConstraint(fields=["series", "first_serial"], name="paper_range_once"),
            models.CheckConstraint(
                condition=models.Q(first_serial__gte=1, last_serial__gte=models.F("first_serial")),
                name="paper_range_forwards",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.series.code} {self.first_serial}–{self.last_serial}: {self.state}"


class StockMovement(models.Model):
    """One change of a range of a series' paper (append-only): which serials, from which state to which,
    who, when, why. A movement over serials in several states is one row per state it moved them from."""

    series = models.ForeignKey(CardSeries, on_delete=models.PROTECT, related_name="stock_movements")
    first_serial = models.PositiveIntegerField()
    last_serial = models.PositiveIntegerField()
    # "" when the serials are first recorded (received: the note holds the delivery reference)
    from_state = models.CharField(max_length=10, choices=StockState.choices, blank=True)
    to_state = models.CharField(max_length=10, choices=StockState.choices)
    game = models.ForeignKey(Game, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    note = models.CharField(max_length=200, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        verbose_name = _("stock movement")
        verbose_name_plural = _("stock movements")
        ordering = ["pk"]
        triggers = [append_only()]


class PrintMedium(models.TextChoices):
    HALL = "hall", _("Printed in the hall (sheets of strips)")
    TABLE = "table", _("Printed at the table (ticket)")


class PrintedCards(models.Model):
    """The register of cards printed for a game (R-04): one row per print, a contiguous range of a series;
    a reprint is a row of its own (append-only)."""

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="printed_cards")
    series = models.ForeignKey(CardSeries, on_delete=models.PROTECT, related_name="printed")
    first_serial = models.PositiveIntegerField()
    last_serial = models.PositiveIntegerField()
    cards = models.PositiveIntegerField()
    medium = models.CharField(max_length=5, choices=PrintMedium.choices)
    # The sale a table print is for (the player's purchase); empty for sheets printed in the hall.
    sale = models.ForeignKey(SaleOperation, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    sha256 = models.CharField(max_length=64)
    printed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    printed_at = models.DateTimeField()

    class Meta:
        verbose_name = _("printed cards")
        verbose_name_plural = _("printed cards")
        constraints = [
            models.CheckConstraint(
                condition=Q(first_serial__lte=F("last_serial")), name="printed_range_ordered"
            ),
        ]
        ordering = ["pk"]
        triggers = [append_only()]
