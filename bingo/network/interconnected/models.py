"""Interconnected bingo's rows. One schema for both roles (halls.link): the central's prizes, rounds,
contributions, results and shares; a venue's room memberships, the rounds it heard of and its round games.
In the loopback (one database in both roles) both sets fill up side by side."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from bingo.electronic.models import ECard, ElectronicGame, Speciality
from bingo.traditional.models import Game
from halls.fields import MoneyField
from halls.models import PERCENT, Network, Room, Venue, append_only
from jackpots.models import Pool, PoolSettlement

BALLS = [MinValueValidator(1), MaxValueValidator(90)]


# --- the central ------------------------------------------------------------------------------------------


class PrizeKind(models.TextChoices):
    """What a network prize is won with: the Bingo by the max ball in the halls' traditional rooms (IB-01),
    or automatic bingo's first Line / first Bingo in the whole network (AB-05, AB-08; no max ball)."""

    INTERCONNECTED = "interconnected", _("Interconnected prize")
    GRAN_LINEA = "gran_linea", _("Gran Línea")
    GRAN_BINGO = "gran_bingo", _("Gran Bingo")


class NetworkPrize(models.Model):
    """An interconnected prize of a network (IB-01): funded by `percent` of each member hall's round game
    sales (plus `reserve_percent` to the pool's hidden reserve), won by the Bingo at the lowest extraction
    ordinal at or below `max_ball` across the halls. Its money is the pool engine's (`pool`)."""

    network = models.ForeignKey(Network, on_delete=models.PROTECT, related_name="interconnected_prizes")
    kind = models.CharField(max_length=14, choices=PrizeKind.choices, default=PrizeKind.INTERCONNECTED)
    code = models.CharField(max_length=30, unique=True)
    name = models.CharField(max_length=120)
    percent = models.DecimalField(max_digits=5, decimal_places=2, validators=PERCENT)
    reserve_percent = models.DecimalField(
        max_digits=5, decimal_places=2, default=Decimal(0), validators=PERCENT
    )
    max_ball = models.PositiveSmallIntegerField(validators=BALLS)
    wait_seconds = models.PositiveIntegerField()  # a round's bounded wait, from its opening
    pool = models.OneToOneField(Pool, on_delete=models.PROTECT, related_name="interconnected_prize")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    meter_sent_at = models.DateTimeField(null=True, blank=True)  # the last meter entry (throttle)
    meter_sent_amount = MoneyField(max_digits=20, decimal_places=2, null=True, blank=True)
    # Rounds open by themselves (bingo.network.interconnected.services.prizes.ensure_round_locked, when a
    # hall's game
    # joins a round, and ensure_rounds, the beat): a fresh round is always open for the halls' next games
    # (a Gran prize's electronic games run every minute or two).
    auto_rounds = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("interconnected prize")
        verbose_name_plural = _("interconnected prizes")
        constraints = [
            models.CheckConstraint(condition=Q(max_ball__gte=1) & Q(max_ball__lte=90), name="ib_max_ball"),
            models.CheckConstraint(
                condition=Q(percent__gt=0) & Q(reserve_percent__gte=0), name="ib_percents_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} · {self.name}"

    @property
    def stream(self) -> str:
        return f"network.{self.network.code}"


class PrizeHall(models.Model):
    """A member hall of the prize (the central's Venue row of it)."""

    prize = models.ForeignKey(NetworkPrize, on_delete=models.PROTECT, related_name="halls")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    added_at = models.DateTimeField()

    class Meta:
        verbose_name = _("prize hall")
        verbose_name_plural = _("prize halls")
        constraints = [models.UniqueConstraint(fields=["prize", "venue"], name="ib_hall_once")]


class RoundState(models.TextChoices):
    OPEN = "open", _("Open")
    DECIDED = "decided", _("Decided")


class DecisionRule(models.TextChoices):
    ALL_REPORTED = "all_reported", _("Every member hall reported")
    WAIT_EXPIRED = "wait_expired", _("The bounded wait expired: decided among the results received")


class PrizeRound(models.Model):
    """One round: one game per member hall. Decided once every expected hall reported, or at `closes_at`
    among the results received (the rule is recorded); a decision is final."""

    prize = models.ForeignKey(NetworkPrize, on_delete=models.PROTECT, related_name="rounds")
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=8, choices=RoundState.choices, default=RoundState.OPEN)
    max_ball = models.PositiveSmallIntegerField(validators=BALLS)  # the prize's at the opening
    expected = models.JSONField()  # the member halls' licence numbers at the opening
    opened_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    # the decision
    decided_at = models.DateTimeField(null=True, blank=True)
    rule = models.CharField(max_length=14, choices=DecisionRule.choices, blank=True)
    ordinal = models.PositiveSmallIntegerField(null=True, blank=True)  # the winning one; null: no winner
    pool_amount = MoneyField(max_digits=20, decimal_places=6, null=True, blank=True)
    share = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True)
    remainder = MoneyField(max_digits=20, decimal_places=6, null=True, blank=True)  # stays in the pool
    missing = models.JSONField(default=list)  # expected halls with no result at the decision
    settlement = models.OneToOneField(
        PoolSettlement, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        verbose_name = _("prize round")
        verbose_name_plural = _("prize rounds")
        constraints = [
            models.UniqueConstraint(fields=["prize", "number"], name="ib_round_number_once"),
        ]
        indexes = [models.Index(fields=["state", "closes_at"], name="ib_round_due")]


class RoundContribution(models.Model):
    """Append-only: a member hall's round game funding the pool, tagged with venue, operator, region and
    game (IB-02…IB-04: a pool across jurisdictions shows who paid what)."""

    round = models.ForeignKey(PrizeRound, on_delete=models.PROTECT, related_name="contributions")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    operator = models.CharField(max_length=160, blank=True)  # the venue's operator then (tax id · name)
    region = models.CharField(max_length=40, blank=True)  # the venue's region code then
    game = models.BigIntegerField()  # the venue's own id of its game
    game_number = models.PositiveIntegerField()
    sales = MoneyField(max_digits=14, decimal_places=2)
    to_meter = MoneyField(max_digits=20, decimal_places=6)
    to_reserve = MoneyField(max_digits=20, decimal_places=6)
    cards_sold = models.PositiveIntegerField()
    sold = models.JSONField()  # [{series, ranges: [[first, last], ...]}]: the cards a result may name
    contribution_id = models.BigIntegerField()  # the pool ledger's row (jackpots.Contribution, first level)
    received_at = models.DateTimeField()

    class Meta:
        verbose_name = _("round contribution")
        verbose_name_plural = _("round contributions")
        constraints = [models.UniqueConstraint(fields=["round", "venue"], name="ib_contribution_once")]
        triggers = [append_only()]


class RoundResult(models.Model):
    """Append-only: a member hall's result of its round game. `late`: received after the decision: kept,
    never counted (the decision is not reopened)."""

    round = models.ForeignKey(PrizeRound, on_delete=models.PROTECT, related_name="results")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    game = models.BigIntegerField()
    void = models.BooleanField(default=False)
    ordinal = models.PositiveSmallIntegerField(null=True, blank=True)  # of the hall's Bingo
    cards = models.JSONField(default=list)  # ["A-0007", ...]
    late = models.BooleanField(default=False)
    received_at = models.DateTimeField()

    class Meta:
        verbose_name = _("round result")
        verbose_name_plural = _("round results")
        constraints = [models.UniqueConstraint(fields=["round", "venue"], name="ib_result_once")]
        triggers = [append_only()]


class RoundShare(models.Model):
    """Append-only: one winning card's share of a decided round; its id keys the hall's payable."""

    round = models.ForeignKey(PrizeRound, on_delete=models.PROTECT, related_name="shares")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    card = models.CharField(max_length=30)
    amount = MoneyField(max_digits=14, decimal_places=2)

    class Meta:
        verbose_name = _("round share")
        verbose_name_plural = _("round shares")
        constraints = [models.UniqueConstraint(fields=["round", "venue", "card"], name="ib_share_once")]
        triggers = [append_only()]


# --- a venue ------------------------------------------------------------------------------------------------


class RoomMembership(models.Model):
    """Venue side: this room plays the interconnected prize `prize_code` of `network` (one room per
    venue and prize). The meter is the last one the central sent, for the screens' snapshot."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    room = models.ForeignKey(Room, on_delete=models.PROTECT, related_name="+")
    network = models.ForeignKey(Network, on_delete=models.PROTECT, related_name="+")
    prize_code = models.CharField(max_length=30)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    meter_name = models.CharField(max_length=120, blank=True)
    meter_amount = MoneyField(max_digits=20, decimal_places=2, null=True, blank=True)
    meter_max_ball = models.PositiveSmallIntegerField(null=True, blank=True)
    meter_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("room membership")
        verbose_name_plural = _("room memberships")
        constraints = [
            models.UniqueConstraint(
                fields=["venue", "prize_code"], condition=Q(active=True), name="ib_one_room_per_venue"
            ),
        ]


class KnownRound(models.Model):
    """Venue side: a round the central opened (its entry on "network.<code>"), as this installation
    heard it; a member room's next game at its close of sales joins the oldest one still open."""

    prize_code = models.CharField(max_length=30)
    number = models.PositiveIntegerField()
    name = models.CharField(max_length=120)
    percent = models.DecimalField(max_digits=5, decimal_places=2)
    reserve_percent = models.DecimalField(max_digits=5, decimal_places=2)
    max_ball = models.PositiveSmallIntegerField()
    halls = models.JSONField()  # the licence numbers the round expects
    closes_at = models.DateTimeField()
    decided = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("known round")
        verbose_name_plural = _("known rounds")
        constraints = [models.UniqueConstraint(fields=["prize_code", "number"], name="ib_known_round_once")]


class RoundGame(models.Model):
    """Venue side: the venue's game played as a round's interconnected game (one per venue and round)."""

    round = models.ForeignKey(KnownRound, on_delete=models.PROTECT, related_name="games")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    game = models.OneToOneField(Game, on_delete=models.PROTECT, related_name="+")
    sales = MoneyField(max_digits=14, decimal_places=2)
    to_meter = MoneyField(max_digits=20, decimal_places=6)
    to_reserve = MoneyField(max_digits=20, decimal_places=6)
    reported = models.BooleanField(default=False)
    # The interconnected prize won in this game (this hall's winning cards' shares, waiting at its
    # cashier), set from the central's decision: what the hall's statistics count as paid in the game.
    prize_won = MoneyField(max_digits=14, decimal_places=2, default=Decimal("0.00"))

    class Meta:
        verbose_name = _("round game")
        verbose_name_plural = _("round games")
        constraints = [models.UniqueConstraint(fields=["round", "venue"], name="ib_round_game_once")]


# --- a venue: automatic bingo's Gran Línea / Gran Bingo (AB-05, AB-08) ------------------------------------


class SpecialityMembership(models.Model):
    """Venue side: the speciality's Gran prize `table_code` (of its prize table) plays the network prize
    `prize_code` of `network` (one speciality per venue and prize). The meter is the central's last."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    speciality = models.ForeignKey(Speciality, on_delete=models.PROTECT, related_name="+")
    network = models.ForeignKey(Network, on_delete=models.PROTECT, related_name="+")
    prize_code = models.CharField(max_length=30)
    table_code = models.CharField(max_length=30)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    meter_name = models.CharField(max_length=120, blank=True)
    meter_amount = MoneyField(max_digits=20, decimal_places=2, null=True, blank=True)
    meter_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("speciality membership")
        verbose_name_plural = _("speciality memberships")
        constraints = [
            models.UniqueConstraint(
                fields=["venue", "prize_code"], condition=Q(active=True), name="gran_one_speciality"
            ),
            models.UniqueConstraint(
                fields=["speciality", "table_code"], condition=Q(active=True), name="gran_table_code_once"
            ),
        ]


class EGameRound(models.Model):
    """Venue side: an electronic game played as a round's Gran game (one per venue and round): what it
    contributed, and its first completion of the prize's pattern (ordinal, cards) once its ball decided it."""

    round = models.ForeignKey(KnownRound, on_delete=models.PROTECT, related_name="egames")
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    game = models.ForeignKey(ElectronicGame, on_delete=models.PROTECT, related_name="+")
    table_code = models.CharField(max_length=30)
    sales = MoneyField(max_digits=14, decimal_places=2)
    to_meter = MoneyField(max_digits=20, decimal_places=6)
    to_reserve = MoneyField(max_digits=20, decimal_places=6)
    first_decided = models.BooleanField(default=False)
    ordinal = models.PositiveSmallIntegerField(null=True, blank=True)
    cards = models.JSONField(default=list)  # ECard ids completing it first, at `ordinal`
    reported = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("electronic game round")
        verbose_name_plural = _("electronic game rounds")
        constraints = [
            models.UniqueConstraint(fields=["round", "venue"], name="gran_round_game_once"),
            models.UniqueConstraint(fields=["game", "table_code"], name="gran_game_prize_once"),
        ]


class GranCredit(models.Model):
    """Append-only, venue side: one central share of a Gran prize credited to the winning card's player
    card (once per venue and share: the central's `RoundShare` id)."""

    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+")
    share = models.BigIntegerField()  # the central's RoundShare id
    round = models.ForeignKey(EGameRound, on_delete=models.PROTECT, related_name="credits")
    card = models.ForeignKey(ECard, on_delete=models.PROTECT, related_name="+")
    amount = MoneyField(max_digits=14, decimal_places=2)
    transaction = models.ForeignKey("cashier.LedgerTransaction", on_delete=models.PROTECT, related_name="+")
    credited_at = models.DateTimeField()

    class Meta:
        verbose_name = _("gran credit")
        verbose_name_plural = _("gran credits")
        constraints = [models.UniqueConstraint(fields=["venue", "share"], name="gran_credit_once")]
        triggers = [append_only()]
