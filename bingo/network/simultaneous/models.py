"""Rows of simultaneous bingo. The central's: the network game, its allocations, the sales and claims the
halls reported, its balls and its prizes. A venue's: its hall game (the allocation it received, mirrored
by a traditional bingo.Game in one of its rooms) and the awards it paid. One schema for both roles: which
rows fill up is the installation's role."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from bingo.traditional.models import CardSeries, Claim, Game
from halls import money
from halls.fields import MoneyField
from halls.models import Network, Venue, append_only


class NetworkGameState(models.TextChoices):
    SETUP = "setup", _("Being set up")
    ON_SALE = "on_sale", _("On sale")
    SALES_CLOSED = "sales_closed", _("Sales closed")
    DRAWING = "drawing", _("Drawing")
    CLOSED = "closed", _("Closed")
    VOID = "void", _("Void")  # nothing sold in any hall: voided, nothing drawn or paid


class NetworkGame(models.Model):
    """Central: one game played at once in every member hall (SB-01), from one network series of cards."""

    network = models.ForeignKey(Network, on_delete=models.PROTECT, related_name="simultaneous_games")
    code = models.CharField(max_length=30, unique=True)
    state = models.CharField(max_length=12, choices=NetworkGameState.choices, default=NetworkGameState.SETUP)
    card_price = MoneyField(max_digits=12, decimal_places=2, validators=[MinValueValidator(money.CENT)])
    # The prizes, each a percentage of the network's total sales (the game's configuration).
    line_percent = models.DecimalField(max_digits=5, decimal_places=2)
    bingo_percent = models.DecimalField(max_digits=5, decimal_places=2)
    hall_percent = models.DecimalField(max_digits=5, decimal_places=2)  # the prize in every hall
    sales_deadline = models.DateTimeField()
    pace_seconds = models.DecimalField(max_digits=5, decimal_places=2, default=Decimal("4"))
    # The master cards: the network series, recomputed from its seed (bingo.cardgen).
    seed = models.CharField(max_length=64, blank=True)
    generator = models.CharField(max_length=8, blank=True)
    rederived_strips = models.JSONField(default=list, blank=True)
    strips = models.PositiveIntegerField(default=0)
    # Fixed at the close of sales (TB-41).
    cards_sold = models.PositiveIntegerField(default=0)
    sales_total = MoneyField(max_digits=14, decimal_places=2, default=Decimal("0"))
    line_prize = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True)
    bingo_prize = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True)
    hall_prize = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True)
    prize_rounding_residue = MoneyField(max_digits=16, decimal_places=6, default=Decimal("0"))
    balls_drawn = models.PositiveSmallIntegerField(default=0)
    draw_started_at = models.DateTimeField(null=True, blank=True)
    last_ball_at = models.DateTimeField(null=True, blank=True)
    # A valid claim arrived and waits for the decision: no ball is drawn meanwhile.
    claims_pending_since = models.DateTimeField(null=True, blank=True)
    # Each hall's answer to "¿alguna línea más? ¿algún bingo más?": {licence: the last ball it answered}.
    no_more_claims = models.JSONField(default=dict, blank=True)
    operation_id = models.CharField(max_length=80, unique=True)
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")

    class Meta:
        verbose_name = _("simultaneous game")
        verbose_name_plural = _("simultaneous games")

    def __str__(self) -> str:
        return self.code

    @property
    def stream(self) -> str:
        """The link stream every member hall follows."""
        return f"network.{self.network.code}"


class Allocation(models.Model):
    """Central: the cards of the network series a member hall sells (whole strips, disjoint runs)."""

    game = models.ForeignKey(NetworkGame, on_delete=models.PROTECT, related_name="allocations")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    first_serial = models.PositiveIntegerField()
    last_serial = models.PositiveIntegerField()

    class Meta:
        verbose_name = _("card allocation")
        verbose_name_plural = _("card allocations")
        constraints = [
            models.UniqueConstraint(fields=["game", "venue"], name="sb_allocation_once_per_hall"),
            models.CheckConstraint(
                condition=Q(first_serial__lte=F("last_serial")), name="sb_allocation_ordered"
            ),
        ]
        triggers = [append_only()]


class ReportedSale(models.Model):
    """Central, append-only: a hall's sale (or return) of a range of its cards, as its outbox reported it."""

    game = models.ForeignKey(NetworkGame, on_delete=models.PROTECT, related_name="reported_sales")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    operation = models.BigIntegerField()  # the venue's own SaleOperation id
    returned = models.BooleanField(default=False)
    first_serial = models.PositiveIntegerField()
    last_serial = models.PositiveIntegerField()
    cards = models.PositiveIntegerField()
    amount = MoneyField(max_digits=12, decimal_places=2)
    received_at = models.DateTimeField()

    class Meta:
        verbose_name = _("reported sale")
        verbose_name_plural = _("reported sales")
        constraints = [
            models.UniqueConstraint(fields=["game", "venue", "operation"], name="sb_sale_reported_once"),
        ]
        triggers = [append_only()]


class Reconciliation(models.Model):
    """Central, append-only: a hall's count of its cards in play as it started to play (after refunding
    the cards whose sale the central never counted) against the central's count for that hall: recorded
    whether or not they agree (a difference is named, never silently absorbed)."""

    game = models.ForeignKey(NetworkGame, on_delete=models.PROTECT, related_name="reconciliations")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    hall_cards = models.PositiveIntegerField()
    hall_amount = MoneyField(max_digits=14, decimal_places=2)
    central_cards = models.PositiveIntegerField()
    central_amount = MoneyField(max_digits=14, decimal_places=2)
    refunded = models.JSONField(default=list)  # [[first, last], ...] the hall refunded, never counted here
    agrees = models.BooleanField()
    received_at = models.DateTimeField()

    class Meta:
        verbose_name = _("reconciliation")
        verbose_name_plural = _("reconciliations")
        constraints = [models.UniqueConstraint(fields=["game", "venue"], name="sb_reconciled_once")]
        triggers = [append_only()]


class NetworkBall(models.Model):
    """Central, append-only: a ball of the central draw (CSPRNG), unique per (game, ordinal) and number."""

    game = models.ForeignKey(NetworkGame, on_delete=models.PROTECT, related_name="balls")
    ordinal = models.PositiveSmallIntegerField()
    number = models.PositiveSmallIntegerField()
    drawn_at = models.DateTimeField()

    class Meta:
        verbose_name = _("network ball")
        verbose_name_plural = _("network balls")
        constraints = [
            models.UniqueConstraint(fields=["game", "ordinal"], name="sb_ball_ordinal_once"),
            models.UniqueConstraint(fields=["game", "number"], name="sb_ball_number_once"),
            models.CheckConstraint(condition=Q(number__gte=1) & Q(number__lte=90), name="sb_ball_1_to_90"),
        ]
        ordering = ["game_id", "ordinal"]
        triggers = [append_only()]


class ClaimStatus(models.TextChoices):
    PENDING = "pending", _("Waiting for the decision")
    WON = "won", _("Won")
    LOST = "lost", _("Beaten by an earlier ball")


class NetworkClaim(models.Model):
    """Central: a valid claim a hall verified and reported; the central's decision sets its status."""

    game = models.ForeignKey(NetworkGame, on_delete=models.PROTECT, related_name="claims")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    claim = models.BigIntegerField()  # the venue's own bingo.Claim id
    kind = models.CharField(max_length=5)  # "line" or "bingo"
    serial = models.PositiveIntegerField()
    ordinal = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=8, choices=ClaimStatus.choices, default=ClaimStatus.PENDING)
    received_at = models.DateTimeField()

    class Meta:
        verbose_name = _("network claim")
        verbose_name_plural = _("network claims")
        constraints = [
            models.UniqueConstraint(fields=["game", "venue", "claim"], name="sb_claim_reported_once"),
            models.UniqueConstraint(fields=["game", "kind", "serial"], name="sb_claim_once_per_card"),
        ]


class PrizeKind(models.TextChoices):
    LINE = "line", _("Network Line")
    BINGO = "bingo", _("Network Bingo")
    HALL = "hall", _("Hall Bingo")


class NetworkPrize(models.Model):
    """Central, append-only: a prize decided; `scope` is "network" or the hall's licence number."""

    game = models.ForeignKey(NetworkGame, on_delete=models.PROTECT, related_name="prizes")
    kind = models.CharField(max_length=5, choices=PrizeKind.choices)
    scope = models.CharField(max_length=60)
    ordinal = models.PositiveSmallIntegerField()
    amount = MoneyField(max_digits=14, decimal_places=2)
    winners = models.PositiveSmallIntegerField()
    share = MoneyField(max_digits=14, decimal_places=2)
    remainder = MoneyField(max_digits=14, decimal_places=2)
    remainder_to = models.CharField(max_length=120)
    decided_at = models.DateTimeField()

    class Meta:
        verbose_name = _("network prize")
        verbose_name_plural = _("network prizes")
        constraints = [
            models.UniqueConstraint(fields=["game", "kind", "scope"], name="sb_prize_decided_once"),
        ]
        triggers = [append_only()]


class HallGameState(models.TextChoices):
    ALLOCATED = "allocated", _("Allocated")
    SELLING = "selling", _("Selling")
    # The central's close listed fewer sales than the hall made: the hall refunds the rest, then plays.
    RECONCILING = "reconciling", _("Refunding unconfirmed sales")
    PLAYING = "playing", _("Playing")
    CLOSED = "closed", _("Closed")


class HallGame(models.Model):
    """Venue: a network game as this hall received it, mirrored by a traditional game in one of its rooms
    (its sales, cashier and screens), from the local copy of the network series."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="simultaneous_games")
    network_code = models.CharField(max_length=40)
    code = models.CharField(max_length=30)
    state = models.CharField(max_length=12, choices=HallGameState.choices, default=HallGameState.ALLOCATED)
    card_price = MoneyField(max_digits=12, decimal_places=2)
    sales_deadline = models.DateTimeField()
    seed = models.CharField(max_length=64)
    generator = models.CharField(max_length=8)
    rederived_strips = models.JSONField(default=list, blank=True)
    strips = models.PositiveIntegerField()
    first_serial = models.PositiveIntegerField()
    last_serial = models.PositiveIntegerField()
    faces = models.CharField(max_length=64, blank=True)  # the central's digest of the run's cards
    no_more_claims_at = models.PositiveSmallIntegerField(null=True, blank=True)  # the last ball answered
    central_open = models.BooleanField(default=False)  # the central's "sales open" entry was applied
    game = models.OneToOneField(Game, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    series = models.ForeignKey(CardSeries, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # From the central's close: the sale operations it counted, the totals and prizes it announced.
    confirmed_operations = models.JSONField(default=list, blank=True)
    announcement = models.JSONField(default=dict, blank=True)
    # The central's balls in order (applied to the local game once it plays).
    balls = models.JSONField(default=list, blank=True)
    line_won_at = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        verbose_name = _("hall game")
        verbose_name_plural = _("hall games")
        constraints = [models.UniqueConstraint(fields=["venue", "code"], name="sb_hall_game_once")]


class HallEntry(models.Model):
    """Venue: a central stream entry for one of this installation's halls, kept by the stream's handler and
    applied after, in a transaction of its own per hall and entry, in sequence order (the hall's game, its
    cashier and its screens are written there, never inside the link's apply of a batch of entries)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    stream = models.CharField(max_length=80)
    sequence = models.BigIntegerField()
    kind = models.CharField(max_length=60)
    payload = models.JSONField()
    received_at = models.DateTimeField()
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("hall entry")
        verbose_name_plural = _("hall entries")
        constraints = [
            models.UniqueConstraint(fields=["venue", "stream", "sequence"], name="sb_hall_entry_once"),
        ]
        indexes = [
            models.Index(
                fields=["venue", "stream", "sequence"],
                name="sb_hall_entry_pending",
                condition=Q(applied_at__isnull=True),
            )
        ]


class HallAward(models.Model):
    """Venue, append-only: a winner's share of a prize the central decided, made a payable here once."""

    hall_game = models.ForeignKey(HallGame, on_delete=models.PROTECT, related_name="awards")
    kind = models.CharField(max_length=5, choices=PrizeKind.choices)
    claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="+")
    amount = MoneyField(max_digits=14, decimal_places=2)
    decided_at = models.DateTimeField()

    class Meta:
        verbose_name = _("hall award")
        verbose_name_plural = _("hall awards")
        constraints = [
            models.UniqueConstraint(fields=["hall_game", "kind", "claim"], name="sb_award_once"),
        ]
        triggers = [append_only()]
