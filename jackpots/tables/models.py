"""Casino tables and their hands at the pool (spec §6): tables, hands, seats' bets, cards and payouts.

A table's pool is a `jackpots.Pool` it is a member of (source type "table", through the engine's
`add_member`); `CasinoTable.pool` points at it so a hand finds its pool without a second lookup. Only
`jackpots.tables.services` writes these rows.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from halls import money
from halls.fields import MoneyField
from halls.models import Venue, append_only
from jackpots.rulepacks import PACKS
from jackpots.tables.rules import MAX_SEATS

# The engine's member source type for tables.
SOURCE_TYPE = "table"


class TableGame(models.TextChoices):
    """Same values as `jackpots.rulepacks.Game`."""

    POKER_SIN_DESCARTE = "poker_sin_descarte", _("Póquer sin descarte")
    POKER_CON_DESCARTE = "poker_con_descarte", _("Póquer con descarte")
    TRIPOQUER = "tripoquer", _("Tripóquer")
    BLACKJACK = "blackjack", _("Blackjack")


class TableState(models.TextChoices):
    OPEN = "open", _("Open")
    # Euskadi ep. 11.VII / 12.VII: closed for a while; still a pool member, takes no pool bets (§6.15).
    CLOSED = "closed", _("Temporarily closed")


RULE_PACK_CHOICES = [(code, pack.title) for code, pack in PACKS.items()]


class CasinoTable(models.Model):
    venue = models.ForeignKey(
        Venue, on_delete=models.PROTECT, related_name="casino_tables", verbose_name=_("venue")
    )
    number = models.PositiveIntegerField(verbose_name=_("number"))
    name = models.CharField(max_length=80, verbose_name=_("name"))
    game = models.CharField(max_length=20, choices=TableGame.choices, verbose_name=_("game"))
    table_minimum = MoneyField(
        max_digits=12,
        decimal_places=2,
        validators=[MinValueValidator(money.CENT)],
        verbose_name=_("table minimum"),
    )
    seats = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SEATS)], verbose_name=_("seats")
    )
    # The paño: reversible layouts have a number each, with its own accounting book (EU ep. 12.II.2.2).
    layout = models.CharField(max_length=40, blank=True, verbose_name=_("layout"))
    rule_pack = models.CharField(max_length=40, choices=RULE_PACK_CHOICES, verbose_name=_("rule pack"))
    state = models.CharField(
        max_length=10, choices=TableState.choices, default=TableState.OPEN, verbose_name=_("state")
    )
    pool = models.ForeignKey(
        "jackpots.Pool",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="casino_tables",
        verbose_name=_("pool"),
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("casino table")
        verbose_name_plural = _("casino tables")
        constraints = [
            models.UniqueConstraint(fields=["venue", "number"], name="casino_table_number_unique_per_venue"),
            models.CheckConstraint(condition=Q(table_minimum__gt=0), name="casino_table_minimum_positive"),
            models.CheckConstraint(
                condition=Q(seats__gte=1) & Q(seats__lte=MAX_SEATS), name="casino_table_seats_in_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} (table {self.number})"

    @property
    def stream(self) -> str:
        return f"table.{self.pk}"


class HandState(models.TextChoices):
    OPEN = "open", _("Open")
    SETTLED = "settled", _("Settled")
    VOID = "void", _("Void")


class Hand(models.Model):
    """One mano at a table: pool bets, the seats' cards, then one settlement against the pool."""

    table = models.ForeignKey(
        CasinoTable, on_delete=models.PROTECT, related_name="hands", verbose_name=_("table")
    )
    number = models.PositiveIntegerField(verbose_name=_("number"))
    state = models.CharField(
        max_length=10, choices=HandState.choices, default=HandState.OPEN, verbose_name=_("state")
    )
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("opened by")
    )
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    # The console's (or device's) key: a retried "open hand" answers with this hand.
    idempotency_key = models.CharField(
        max_length=80, null=True, blank=True, verbose_name=_("idempotency key")
    )
    # EU b.1 (JP-EU12-11): the hand's total jackpot bets keyed in by the croupier, contributed once.
    manual_total = MoneyField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("manual total")
    )
    manual_total_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("manual total by"),
    )
    # Tripóquer tables of an interconnected poker carrusel: the two community cards (TP-AN10-3).
    community_cards = models.CharField(max_length=20, blank=True, verbose_name=_("community cards"))
    settled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("settled at"))
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("settled by"),
    )
    # The engine's settlement of the hand (None when no seat won anything), and the pool meter at the
    # start of the hand's payments and after them (and after the reset to the seed, if one was needed).
    settlement = models.ForeignKey(
        "jackpots.PoolSettlement",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("settlement"),
    )
    meter_before = MoneyField(
        max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("meter before")
    )
    meter_after_payouts = MoneyField(
        max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("meter after payouts")
    )
    meter_after = MoneyField(
        max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("meter after")
    )
    void_reason = models.TextField(blank=True, verbose_name=_("void reason"))

    class Meta:
        verbose_name = _("hand")
        verbose_name_plural = _("hands")
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="hand_number_unique_per_table"),
            models.UniqueConstraint(fields=["table", "idempotency_key"], name="hand_idempotency_key_unique"),
            models.UniqueConstraint(
                fields=["table"], condition=Q(state="open"), name="one_open_hand_per_table"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table} · hand {self.number}"


class SeatBet(models.Model):
    """A seat's bets in a hand: the initial bet (eligibility) and the pool bet."""

    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="bets", verbose_name=_("hand"))
    seat = models.PositiveSmallIntegerField(verbose_name=_("seat"))
    initial_bet = MoneyField(
        max_digits=12, decimal_places=2, default=Decimal("0"), verbose_name=_("initial bet")
    )
    pool_bet = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("pool bet"))
    # Póquer sin descarte: the player bought an extra card (EU: forfeits the pool bet, JP-EU11-09).
    extra_card = models.BooleanField(default=False, verbose_name=_("extra card"))
    forfeited = models.BooleanField(default=False, verbose_name=_("forfeited"))
    forfeit_reason = models.CharField(max_length=40, blank=True, verbose_name=_("forfeit reason"))
    # The engine's contribution for this seat (None at b.1 tables, where the hand's total contributes).
    contribution_key = models.CharField(max_length=80, blank=True, verbose_name=_("contribution key"))
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("registered by")
    )
    registered_at = models.DateTimeField(verbose_name=_("registered at"))

    class Meta:
        verbose_name = _("seat bet")
        verbose_name_plural = _("seat bets")
        constraints = [
            models.UniqueConstraint(fields=["hand", "seat"], name="seat_bet_unique_in_hand"),
            models.CheckConstraint(condition=Q(pool_bet__gt=0), name="seat_pool_bet_positive"),
            models.CheckConstraint(condition=Q(initial_bet__gte=0), name="seat_initial_bet_not_negative"),
            models.CheckConstraint(
                condition=Q(forfeited=False) | ~Q(forfeit_reason=""), name="seat_forfeit_has_reason"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.hand} · seat {self.seat}"


class SeatCards(models.Model):
    """A seat's cards for the pool (the five that count, or blackjack's first cards) and their rank."""

    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="cards", verbose_name=_("hand"))
    seat = models.PositiveSmallIntegerField(verbose_name=_("seat"))
    cards = models.CharField(max_length=40, verbose_name=_("playing cards"))
    # Póquer con descarte: the combination was made after discarding (EU ep. 12.VIII.8.1 b).
    discard = models.BooleanField(default=False, verbose_name=_("discard"))
    # The category under the pack's ordering ('' for a blackjack hand with no seven) and its words.
    category = models.CharField(max_length=40, blank=True, verbose_name=_("category"))
    rank = models.CharField(max_length=80, blank=True, verbose_name=_("rank"))
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("registered by")
    )
    registered_at = models.DateTimeField(verbose_name=_("registered at"))

    class Meta:
        verbose_name = _("seat cards")
        verbose_name_plural = _("seats' cards")
        constraints = [models.UniqueConstraint(fields=["hand", "seat"], name="seat_cards_unique_in_hand")]

    def __str__(self) -> str:
        return f"{self.hand} · seat {self.seat}: {self.cards}"


class SeatPayout(models.Model):
    """What the pool paid a seat for the hand, in payment order (the table's accounting book)."""

    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="payouts", verbose_name=_("hand"))
    seat = models.PositiveSmallIntegerField(verbose_name=_("seat"))
    order = models.PositiveSmallIntegerField(verbose_name=_("order"))
    category = models.CharField(max_length=40, verbose_name=_("category"))
    discard = models.BooleanField(default=False, verbose_name=_("discard"))
    amount = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    from_meter = MoneyField(max_digits=12, decimal_places=2, verbose_name=_("from meter"))
    # OP-23: the part of a fixed prize the meter could not cover, paid by the operator.
    from_operator = MoneyField(
        max_digits=12, decimal_places=2, default=Decimal("0"), verbose_name=_("from operator")
    )
    basis = MoneyField(max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("basis"))
    note = models.CharField(max_length=200, blank=True, verbose_name=_("note"))
    # The engine's award row (the pool's ledger) this payout mirrors.
    award = models.ForeignKey(
        "jackpots.Award", on_delete=models.PROTECT, related_name="+", verbose_name=_("award")
    )

    class Meta:
        verbose_name = _("seat payout")
        verbose_name_plural = _("seat payouts")
        constraints = [
            models.UniqueConstraint(fields=["hand", "seat"], name="seat_payout_unique_in_hand"),
            models.UniqueConstraint(fields=["hand", "order"], name="seat_payout_order_unique_in_hand"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="seat_payout_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.hand} · seat {self.seat}: {self.amount}"


class TableDrop(models.Model):
    """A table's drop for a venue-local day: the cash and chips counted from its drop box (what the gaming
    tax calls the table drop, halls.tax). Written once per table and day by
    jackpots.tables.services.drops (audited), never edited (append-only)."""

    table = models.ForeignKey(
        CasinoTable, on_delete=models.PROTECT, related_name="drops", verbose_name=_("table")
    )
    day = models.DateField(verbose_name=_("day"))
    amount = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("drop"))
    counted_at = models.DateTimeField(verbose_name=_("counted at"))
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("counted by"),
    )
    counted_by_label = models.CharField(max_length=150, verbose_name=_("counted by (label)"))

    class Meta:
        verbose_name = _("table drop")
        verbose_name_plural = _("table drops")
        constraints = [
            models.UniqueConstraint(fields=["table", "day"], name="table_drop_once_a_day"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="table_drop_not_negative"),
        ]
        triggers = [append_only()]

    def __str__(self) -> str:
        return f"{self.table} · {self.day}: {self.amount}"
