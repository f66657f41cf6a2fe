"""The one pool engine's records: pools, levels (the folded meter), the append-only ledger and its seals.

Hot path (DESIGN §4, issue 3): a contribution is ONE append-only row per level; the level row is never
updated per contribution. `PoolLevel.amount` is the FOLDED meter: every contribution with
id <= `folded_through` is in it; the live meter is the folded amount plus the unfolded rows (see
`jackpots.services.readmodels.meters`). Folding, awards, resets, corrections and parameter changes lock
the level row FOR UPDATE and write their own ledger rows, so the balancing report can prove, per level:

    opening seed + operator seeds + contributions + overflow in + corrections
        = amount + awards + overflow out (to reserve / next level) - reserve moved to the meter.

`must_hit_by` is the secret mystery value: never serialized to screens, the API or the admin.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q, Value
from django.utils.translation import gettext_lazy as _

from halls.fields import MoneyField, RateField
from halls.models import Jurisdiction, Network, Venue, append_only
from jackpots.rulepacks import JackpotKind

# Decimal columns, halls.money's widths: meters and reserves 20, 6 (METER_DIGITS, METER_PLACES); bets and
# payouts 14, 2 (PAYMENT_DIGITS, whole cents); rates 7, 6 (fractions of the bet, 0..1).


class OverflowTo(models.TextChoices):
    """Where contributions go once a level's meter stands at its ceiling (engine.OverflowTarget)."""

    RESERVE = "reserve", _("Hidden reserve")
    NEXT_LEVEL = "next_level", _("Next level")


class LevelKind(models.TextChoices):
    PROGRESSIVE = JackpotKind.PROGRESSIVE.value, _("Progressive")
    FIXED = JackpotKind.FIXED.value, _("Fixed")


class SourceType(models.TextChoices):
    """What contributes to a pool. The engine never imports these apps: a source is a (type, id) label."""

    TABLE = "table", _("Casino table")
    BINGO_ROOM = "bingo_room", _("Bingo room")
    ESPECIALITY = "especiality", _("Electronic bingo speciality")
    MACHINE = "machine", _("Machine")
    VENUE = "venue", _("Venue")
    OTHER = "other", _("Other")


class Pool(models.Model):
    """An accumulated prize: one venue's or a network's, with one or more levels."""

    name = models.CharField(max_length=120, verbose_name=_("name"))
    code = models.CharField(max_length=40, unique=True, verbose_name=_("code"))
    jurisdiction = models.CharField(
        max_length=4, choices=Jurisdiction.choices, verbose_name=_("jurisdiction")
    )
    currency = models.CharField(max_length=3, default="EUR", verbose_name=_("currency"))
    authorisation_ref = models.CharField(max_length=120, verbose_name=_("authorisation ref"))
    # A code of jackpots.rulepacks.PACKS for table pools; blank for pools paid only by award_level
    # (machines, bingo programs), whose rules live in their own apps.
    rule_pack = models.CharField(max_length=60, blank=True, verbose_name=_("rule pack"))
    # OP-30: the authorised paytable for packs that await it, as rows (see services.pools.paytable_rows).
    authorised_paytable = models.JSONField(null=True, blank=True, verbose_name=_("authorised paytable"))
    # OP-37: the single stipulated pool bet; seeds and multiple-of-bet prizes are computed on it.
    carousel_bet = MoneyField(
        max_digits=14, decimal_places=2, null=True, blank=True, verbose_name=_("carousel bet")
    )
    venue = models.ForeignKey(
        Venue, null=True, blank=True, on_delete=models.PROTECT, related_name="pools", verbose_name=_("venue")
    )
    network = models.ForeignKey(
        Network,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pools",
        verbose_name=_("network"),
    )
    active = models.BooleanField(default=True, verbose_name=_("active"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("created by"),
    )

    class Meta:
        verbose_name = _("pool")
        verbose_name_plural = _("pools")
        constraints = [
            models.CheckConstraint(
                condition=(Q(venue__isnull=False) & Q(network__isnull=True))
                | (Q(venue__isnull=True) & Q(network__isnull=False)),
                name="pool_scope_venue_xor_network",
            ),
            models.CheckConstraint(condition=Q(carousel_bet__gt=0), name="pool_bet_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.code} · {self.name}"

    @property
    def stream(self) -> str:
        return f"pool.{self.pk}"


class PoolMember(models.Model):
    """A source that contributes to the pool: a table, a bingo room, a machine. Removal keeps the row."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="members", verbose_name=_("pool"))
    source_type = models.CharField(max_length=20, choices=SourceType.choices, verbose_name=_("source type"))
    source_id = models.CharField(max_length=60, verbose_name=_("source id"))
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="+", verbose_name=_("venue"))
    added_at = models.DateTimeField(verbose_name=_("added at"))
    added_by = models.CharField(max_length=150, verbose_name=_("added by"))
    removed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("removed at"))
    removed_by = models.CharField(max_length=150, blank=True, verbose_name=_("removed by"))

    class Meta:
        verbose_name = _("pool member")
        verbose_name_plural = _("pool members")
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "source_type", "source_id"],
                condition=Q(removed_at__isnull=True),
                name="pool_member_once",
            )
        ]

    @property
    def key(self) -> str:
        """The source label contributions carry: ``"<type>:<id>"`` (optionally ``"/<detail>"`` after it)."""
        return f"{self.source_type}:{self.source_id}"


# A rate of 1 (the whole bet) in the rates' check, at their scale.
_RATE: RateField[Decimal, Decimal] = RateField(max_digits=7, decimal_places=6)


class PoolLevel(models.Model):
    """One level of a pool (a carrusel has one; a linked slot pool Grand/Major/Minor) and its FOLDED state."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="levels", verbose_name=_("pool"))
    position = models.PositiveSmallIntegerField(
        verbose_name=_("position")
    )  # 0 first; overflow "next level" goes to position + 1
    name = models.CharField(max_length=60, verbose_name=_("name"))
    kind = models.CharField(
        max_length=12, choices=LevelKind.choices, default=LevelKind.PROGRESSIVE, verbose_name=_("kind")
    )
    # Parameters (changed only by services.pools.change_parameters, each change recorded).
    seed = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("seed"))
    contribution_rate = RateField(max_digits=7, decimal_places=6, verbose_name=_("contribution rate"))
    reserve_rate = RateField(
        max_digits=7, decimal_places=6, default=Decimal(0), verbose_name=_("reserve rate")
    )
    ceiling = MoneyField(max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("ceiling"))
    overflow_to = models.CharField(
        max_length=12, choices=OverflowTo.choices, default=OverflowTo.RESERVE, verbose_name=_("overflow to")
    )
    mystery = models.BooleanField(
        default=False, verbose_name=_("mystery")
    )  # draws a must-hit-by value at every (re)seed
    must_hit_by = MoneyField(
        max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("must hit by")
    )  # SECRET until it hits
    params_version = models.PositiveIntegerField(default=1, verbose_name=_("params version"))
    # Folded state.
    amount = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("amount"))
    reserve = MoneyField(max_digits=20, decimal_places=6, default=Decimal(0), verbose_name=_("reserve"))
    folded_through = models.BigIntegerField(
        default=0, verbose_name=_("folded through")
    )  # id of the last Contribution in `amount`
    hits = models.PositiveIntegerField(default=0, verbose_name=_("hits"))
    total_paid = MoneyField(
        max_digits=14, decimal_places=2, default=Decimal(0), verbose_name=_("total paid")
    )  # paid to players, incl. operator parts
    overflow_total = MoneyField(
        max_digits=20, decimal_places=6, default=Decimal(0), verbose_name=_("overflow total")
    )
    version = models.PositiveBigIntegerField(
        default=1, verbose_name=_("version")
    )  # bumped by every write of the folded state
    updated_at = models.DateTimeField(verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("pool level")
        verbose_name_plural = _("pool levels")
        ordering = ["pool_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "position"], name="pool_level_position_unique"),
            models.CheckConstraint(condition=Q(amount__gte=0) & Q(reserve__gte=0), name="level_not_negative"),
            models.CheckConstraint(
                condition=Q(contribution_rate__gte=0)
                & Q(reserve_rate__gte=0)
                # The 1 at the rates' scale: integer units on SQLite (halls.fields), numeric on PostgreSQL.
                & Q(contribution_rate__lte=Value(Decimal(1), output_field=_RATE) - F("reserve_rate")),
                name="level_rates_within_bet",
            ),
            models.CheckConstraint(
                condition=Q(ceiling__isnull=True) | Q(ceiling__gte=F("seed")), name="level_ceiling_over_seed"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pool.code} · {self.name}"


class Contribution(models.Model):
    """Append-only: one row per contribution and level. Never updated, never deleted.

    The hot path inserts these with one SQL statement (services.contributions). `pool`/`level` carry no
    database foreign-key constraint on purpose: the insert selects from the level row, which is the
    check, and a RI trigger would lock (write) the hot pool and level rows on every contribution.
    """

    id = models.BigAutoField(primary_key=True, verbose_name=_("id"))
    pool = models.ForeignKey(
        Pool, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+", verbose_name=_("pool")
    )
    level = models.ForeignKey(
        PoolLevel, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+", verbose_name=_("level")
    )
    source = models.CharField(max_length=120, verbose_name=_("source"))
    bet = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("bet"))
    to_meter = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("to meter"))
    to_reserve = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("to reserve"))
    house = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("house"))
    idempotency_key = models.CharField(max_length=100, verbose_name=_("idempotency key"))
    actor = models.CharField(max_length=150, verbose_name=_("actor"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("pool contribution")
        verbose_name_plural = _("pool contributions")
        constraints = [
            models.UniqueConstraint(fields=["level", "idempotency_key"], name="contribution_key_once"),
        ]
        indexes = [models.Index(fields=["level", "id"], name="contribution_level_id")]
        triggers = [append_only()]  # UPDATE/DELETE refused: an unsealed row cannot be changed, then sealed


class SettlementKind(models.TextChoices):
    HAND = "hand", _("Table hand")
    LEVEL = "level", _("Level award (machine, bingo program)")
    MYSTERY = "mystery", _("Must-hit-by (mystery) award")


class PoolSettlement(models.Model):
    """One award call: a table hand, a level award or a mystery hit, with the Award rows it paid."""

    pool = models.ForeignKey(
        Pool, on_delete=models.PROTECT, related_name="settlements", verbose_name=_("pool")
    )
    level = models.ForeignKey(
        PoolLevel, on_delete=models.PROTECT, related_name="settlements", verbose_name=_("level")
    )
    kind = models.CharField(max_length=10, choices=SettlementKind.choices, verbose_name=_("kind"))
    idempotency_key = models.CharField(max_length=100, verbose_name=_("idempotency key"))
    fingerprint = models.CharField(
        max_length=64, verbose_name=_("fingerprint")
    )  # of the request, to refuse a reused key
    context = models.JSONField(default=dict, verbose_name=_("context"))  # table, hand ref, source ...
    bet = MoneyField(max_digits=14, decimal_places=2, null=True, blank=True, verbose_name=_("bet"))
    meter_before = MoneyField(
        max_digits=20, decimal_places=6, verbose_name=_("meter before")
    )  # folded meter the payments were computed on
    meter_after_payouts = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("meter after payouts"))
    meter_after = MoneyField(
        max_digits=20, decimal_places=6, verbose_name=_("meter after")
    )  # after the reset
    kept_fraction = MoneyField(
        max_digits=20, decimal_places=6, default=Decimal(0), verbose_name=_("kept fraction")
    )
    reset_from_reserve = MoneyField(
        max_digits=20, decimal_places=6, default=Decimal(0), verbose_name=_("reset from reserve")
    )
    operator_seed = MoneyField(
        max_digits=20, decimal_places=6, default=Decimal(0), verbose_name=_("operator seed")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    actor = models.CharField(max_length=150, verbose_name=_("actor"))

    class Meta:
        verbose_name = _("pool settlement")
        verbose_name_plural = _("pool settlements")
        constraints = [
            models.UniqueConstraint(fields=["pool", "idempotency_key"], name="settlement_key_once"),
        ]
        triggers = [append_only()]


class Award(models.Model):
    """One payout, in payment order (arrival order across calls on a level: the level lock serializes)."""

    settlement = models.ForeignKey(
        PoolSettlement, on_delete=models.PROTECT, related_name="awards", verbose_name=_("settlement")
    )
    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="+", verbose_name=_("pool"))
    level = models.ForeignKey(PoolLevel, on_delete=models.PROTECT, related_name="+", verbose_name=_("level"))
    order = models.PositiveSmallIntegerField(verbose_name=_("order"))
    source = models.CharField(
        max_length=120, blank=True, verbose_name=_("source")
    )  # table / machine / room label
    seat = models.CharField(max_length=40, blank=True, verbose_name=_("seat"))
    hand = models.CharField(max_length=60, blank=True, verbose_name=_("hand"))
    category = models.CharField(max_length=40, blank=True, verbose_name=_("category"))
    discard = models.BooleanField(default=False, verbose_name=_("discard"))
    amount = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("amount"))  # paid to the winner
    from_meter = MoneyField(max_digits=14, decimal_places=2, verbose_name=_("from meter"))
    from_operator = MoneyField(
        max_digits=14, decimal_places=2, verbose_name=_("from operator")
    )  # OP-23 shortfall, paid outside the pool
    basis = MoneyField(max_digits=20, decimal_places=6, null=True, blank=True, verbose_name=_("basis"))
    note = models.CharField(max_length=200, blank=True, verbose_name=_("note"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("pool award")
        verbose_name_plural = _("pool awards")
        constraints = [models.UniqueConstraint(fields=["settlement", "order"], name="award_order_once")]
        indexes = [models.Index(fields=["level", "id"], name="award_level_id")]
        triggers = [append_only()]


class MoveKind(models.TextChoices):
    """Ledger moves other than contributions and awards; the sign is per kind (see `METER_SIGN`)."""

    OPENING_SEED = "opening_seed", _("Opening seed")
    OPENING_RESERVE = "opening_reserve", _("Opening reserve")
    OPERATOR_SEED = "operator_seed", _("Operator seed (reset funded by the operator)")
    RESERVE_TO_METER = "reserve_to_meter", _("Reserve to meter (reseed)")
    OVERFLOW_TO_RESERVE = "overflow_to_reserve", _("Overflow above the ceiling to the reserve")
    OVERFLOW_TO_NEXT = "overflow_to_next", _("Overflow above the ceiling to the next level")
    OVERFLOW_IN = "overflow_in", _("Overflow received from the previous level")
    CORRECTION = "correction", _("Authorised correction")


# Effect of a move's `amount` (always >= 0, except corrections which are signed) on the meter / reserve.
METER_SIGN: dict[str, int] = {
    MoveKind.OPENING_SEED: 1,
    MoveKind.OPENING_RESERVE: 0,
    MoveKind.OPERATOR_SEED: 1,
    MoveKind.RESERVE_TO_METER: 1,
    MoveKind.OVERFLOW_TO_RESERVE: -1,
    MoveKind.OVERFLOW_TO_NEXT: -1,
    MoveKind.OVERFLOW_IN: 1,
    MoveKind.CORRECTION: 1,
}
RESERVE_SIGN: dict[str, int] = {
    MoveKind.OPENING_RESERVE: 1,
    MoveKind.RESERVE_TO_METER: -1,
    MoveKind.OVERFLOW_TO_RESERVE: 1,
}


class LedgerMove(models.Model):
    """Append-only: seeds, reseeds, overflows and corrections of one level."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="+", verbose_name=_("pool"))
    level = models.ForeignKey(
        PoolLevel, on_delete=models.PROTECT, related_name="moves", verbose_name=_("level")
    )
    kind = models.CharField(max_length=24, choices=MoveKind.choices, verbose_name=_("kind"))
    amount = MoneyField(max_digits=20, decimal_places=6, verbose_name=_("amount"))
    settlement = models.ForeignKey(
        PoolSettlement,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="moves",
        verbose_name=_("settlement"),
    )
    reason = models.CharField(max_length=300, blank=True, verbose_name=_("reason"))
    authorised_by = models.CharField(max_length=150, blank=True, verbose_name=_("authorised by"))
    actor = models.CharField(max_length=150, verbose_name=_("actor"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("pool ledger move")
        verbose_name_plural = _("pool ledger moves")
        indexes = [models.Index(fields=["level", "id"], name="move_level_id")]
        constraints = [
            models.CheckConstraint(condition=Q(kind="correction") | Q(amount__gte=0), name="move_amount_sign")
        ]
        triggers = [append_only()]


class ParameterChange(models.Model):
    """Who changed which parameters of a level, when, from what to what (the secret value is never kept)."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="+", verbose_name=_("pool"))
    level = models.ForeignKey(
        PoolLevel, on_delete=models.PROTECT, related_name="changes", verbose_name=_("level")
    )
    old = models.JSONField(verbose_name=_("old"))
    new = models.JSONField(verbose_name=_("new"))
    authorisation_ref = models.CharField(max_length=120, verbose_name=_("authorisation ref"))
    actor = models.CharField(max_length=150, verbose_name=_("actor"))
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("changed by"),
    )
    changed_at = models.DateTimeField(verbose_name=_("changed at"))

    class Meta:
        verbose_name = _("parameter change")
        verbose_name_plural = _("parameter changes")
        triggers = [append_only()]


class LedgerSeal(models.Model):
    """A hash-chained seal over a pool's ledger rows appended since the previous seal (tamper evidence).

    `through` holds the last sealed id per table ({"contributions": {level_id: id}, "awards": id, ...});
    `digest` covers those rows' canonical text, `hash` chains it to the previous seal of the pool.
    """

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="seals", verbose_name=_("pool"))
    seq = models.PositiveIntegerField(verbose_name=_("seq"))
    through = models.JSONField(verbose_name=_("through"))
    rows = models.JSONField(verbose_name=_("rows"))  # counts per table
    digest = models.CharField(max_length=64, verbose_name=_("digest"))
    prev_hash = models.CharField(max_length=64, verbose_name=_("prev hash"))
    hash = models.CharField(max_length=64, unique=True, verbose_name=_("hash"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    # How ``hash`` was made: "hmac-sha256:<key id>" (the audit key, halls.services.audit_keys), or
    # "sha256" for seals made before the key.
    alg = models.CharField(max_length=32, default="sha256", verbose_name=_("alg"))

    class Meta:
        verbose_name = _("ledger seal")
        verbose_name_plural = _("ledger seals")
        constraints = [models.UniqueConstraint(fields=["pool", "seq"], name="seal_seq_once")]
        triggers = [append_only()]


class MeterPublisherState(models.Model):
    """What the screen meter publisher last did: ``tick`` (its lock row; when the last publication ended, in
    ms) and ``pool.<id>`` (the fingerprint of the meters last shown for that pool). Kept apart from the
    event streams' cursors so publisher bookkeeping never mixes with stream sequence numbers."""

    name = models.CharField(max_length=80, unique=True)
    value = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = _("meter publisher state")
        verbose_name_plural = _("meter publisher states")
