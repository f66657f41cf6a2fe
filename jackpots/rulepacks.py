"""The table-pool variants of spec §6 as frozen data. Pure: no Django.

One `RulePack` per regulated variant: its hand ordering, paytable(s), tie and payment-order rules and
limits. The engine (`jackpots.engine`) reads a pack and never branches on the jurisdiction itself, so a
new variant or an authorised change of paytable is a new pack, not new code.

Each pack cites its spec section and seed article. "Interpretation" marks a reading of the spec's
open points (§9 OP-n), not a regulatory number. Where a paytable comes from the specific
authorisation (OP-30), the pack has no rows and `settle_hand` refuses it until the authorised
paytable is loaded with `RulePack.with_authorised_paytable`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from enum import StrEnum
from types import MappingProxyType

from halls.money import CENT
from jackpots.poker import (
    AN96,
    SEVENS,
    STANDARD,
    THREE_CARD,
    Category,
    HandCategory,
    HandOrdering,
    SevensCombination,
)

HALF = Decimal("0.5")


class Jurisdiction(StrEnum):
    """Same codes as `halls.models.Jurisdiction` (spec §0.3), kept here so the core needs no Django."""

    ML = "ML"
    AN96 = "AN96"
    AN10 = "AN10"
    CT = "CT"
    EU = "EU"


class Game(StrEnum):
    POKER_SIN_DESCARTE = "poker_sin_descarte"
    POKER_CON_DESCARTE = "poker_con_descarte"
    TRIPOQUER = "tripoquer"
    BLACKJACK = "blackjack"


class JackpotKind(StrEnum):
    """Progressive pools grow with contributions; a fixed jackpot stays at its seed (spec §6.8)."""

    PROGRESSIVE = "progressive"
    FIXED = "fixed"


class TiePolicy(StrEnum):
    """How a paytable row pays several hands of its category in one hand (OP-26).

    In every policy, hands of different value are paid highest first, each percentage computed on the
    meter left by the previous payments (AN10 VII.6.4, EU 11.VI.1 / 12.VIII.8.1, OP-23). The policies
    differ for the lower hands and for hands of equal value:
    """

    # AN96: only the highest hand of the category is paid; equal highest hands share that one prize.
    HIGHEST_ONLY = "highest_only"
    # AN10: equal hands share one prize computed on the meter at their turn (equal royals: the pool).
    SHARE_ONE = "share_one"
    # EU: equal hands are each paid the percentage of the meter before the hand's first payment.
    EACH_OF_HAND_START = "each_of_hand_start"


class PaymentOrder(StrEnum):
    DESCENDING_RANK = "descending_rank"
    # EU draw poker (JP-EU12-14): every no-discard prize, by rank, before any discard prize.
    NO_DISCARD_FIRST = "no_discard_first"


class BetRegistration(StrEnum):
    """How the pool bet is taken at the table (spec §6.0 "side-bet registration")."""

    SLOT = "slot"  # chips or coins into a slot in front of the betting box
    SLOT_WITH_COUNTER = "slot_with_counter"
    DIGITAL = "digital"  # a mechanism that registers the credits
    BOX = "box"  # a betting box on the layout, settled by the croupier
    MANUAL_HAND_TOTAL = "manual_hand_total"  # EU b.1: staff key in the hand's total jackpot bets
    AUTOMATIC_CHIP_SLOT = "automatic_chip_slot"  # EU b.2: one electronic slot per seat


def _positive(name: str, value: Decimal) -> None:
    if not isinstance(value, Decimal) or not value.is_finite() or value <= 0:
        raise ValueError(f"{name} must be a positive Decimal, got {value!r}")


@dataclass(frozen=True)
class PercentOfMeter:
    """`percent` % of the meter (100 = the whole pool)."""

    percent: Decimal

    def __post_init__(self) -> None:
        _positive("percent", self.percent)
        if self.percent > 100:
            raise ValueError(f"percent must be at most 100, got {self.percent}")


@dataclass(frozen=True)
class MultipleOfBet:
    """`multiple` × the pool bet, deducted from the meter (AN10 VII.6.3); "2 a 1" is multiple 2."""

    multiple: Decimal

    def __post_init__(self) -> None:
        _positive("multiple", self.multiple)


@dataclass(frozen=True)
class FixedAmount:
    """A fixed sum, deducted from the meter like a multiple of the bet."""

    amount: Decimal

    def __post_init__(self) -> None:
        _positive("amount", self.amount)


Prize = PercentOfMeter | MultipleOfBet | FixedAmount


@dataclass(frozen=True)
class PaytableRow:
    category: Category
    prize: Prize
    ties: TiePolicy = TiePolicy.SHARE_ONE


@dataclass(frozen=True)
class Paytable:
    """Rows by category; `minimums` when the regulation sets floors an authorisation may only raise."""

    rows: tuple[PaytableRow, ...]
    from_authorisation: bool = False
    minimums: bool = False

    def __post_init__(self) -> None:
        categories = [row.category for row in self.rows]
        if len(set(categories)) != len(categories):
            raise ValueError("a paytable lists each category at most once")
        if self.from_authorisation and self.rows:
            raise ValueError("a paytable awaiting its authorisation has no rows yet")

    def row_for(self, category: Category) -> PaytableRow | None:
        return next((row for row in self.rows if row.category == category), None)


AWAITING_AUTHORISATION = Paytable(rows=(), from_authorisation=True)


@dataclass(frozen=True)
class RulePack:
    """Everything the engine and the table doors need to know about one regulated variant."""

    code: str
    jurisdiction: Jurisdiction
    game: Game
    title: str
    source: str  # spec section and seed article
    # None when the combinations themselves come from the authorisation (OP-30).
    ordering: HandOrdering | None
    paytable: Paytable
    # EU draw poker "habiéndose descartado" rows; None where discarding is not a thing or not offered.
    discard_paytable: Paytable | None = None
    payment_order: PaymentOrder = PaymentOrder.DESCENDING_RANK
    kind: JackpotKind = JackpotKind.PROGRESSIVE
    min_seed_multiple: Decimal | None = None  # seed >= this × the pool bet
    max_bet_share_of_table_minimum: Decimal | None = None  # pool bet <= this × the table minimum
    requires_initial_bet: bool = False
    first_five_cards_only: bool = False  # ML 62.2: evaluated before any extra card is bought
    extra_card_forfeits_pool_bet: bool = False  # EU 11.VI.3
    min_return: Decimal | None = None  # share of pool bets returned in prizes (tripóquer 0.70)
    community_cards: int = 0
    registrations: tuple[BetRegistration, ...] = ()
    # The carrusel is formed by ALL the tables of its game in the room (ML art. 61, AN96 Primero.8,
    # spec §6.12): one over only some of them is refused, and a new table of the game joins it.
    all_tables: bool = False
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.ordering is None and not self.paytable.from_authorisation:
            raise ValueError(f"{self.code}: a paytable needs the ordering of its combinations")
        for table in (self.paytable, self.discard_paytable):
            for row in table.rows if table else ():
                if self.ordering is not None:
                    self.ordering.strength(row.category)  # a row must name a category of the ordering

    def minimum_seed(self, bet: Decimal) -> Decimal:
        """The lowest seed allowed for a pool bet of `bet` (0 where the seed is not regulated)."""
        if self.min_seed_multiple is None:
            return Decimal(0)
        return self.min_seed_multiple * bet

    def max_pool_bet(self, table_minimum: Decimal) -> Decimal | None:
        """The highest pool bet at a table with this minimum, to the cent; None if not capped."""
        if self.max_bet_share_of_table_minimum is None:
            return None
        # "Not more than half": half of an odd cent rounds down, never above the cap.
        return (self.max_bet_share_of_table_minimum * table_minimum).quantize(CENT, rounding=ROUND_DOWN)

    def check_pool_bet(self, bet: Decimal, table_minimum: Decimal) -> None:
        cap = self.max_pool_bet(table_minimum)
        if cap is not None and bet > cap:
            raise ValueError(
                f"{self.code}: pool bet {bet} exceeds {cap}, half of the table minimum {table_minimum}"
            )

    def check_seed(self, seed: Decimal, bet: Decimal) -> None:
        floor = self.minimum_seed(bet)
        if seed < floor:
            raise ValueError(
                f"{self.code}: seed {seed} is below the minimum {floor} ({self.min_seed_multiple} × {bet})"
            )

    def pool_bet_stands(self, *, made_initial_bet: bool, bought_extra_card: bool) -> bool:
        """Whether a pool bet placed this hand may win: AN10/EU need the initial bet (CJ-AN10-05,
        JP-EU12-06); in Euskadi buying an extra card forfeits it (JP-EU11-09)."""
        if self.requires_initial_bet and not made_initial_bet:
            return False
        return not (self.extra_card_forfeits_pool_bet and bought_extra_card)

    def with_authorised_paytable(self, paytable: Paytable, ordering: HandOrdering | None = None) -> RulePack:
        """This pack with the authorised paytable (and combinations, if the authorisation defines them)."""
        if paytable.from_authorisation:
            raise ValueError("pass the authorised rows, not the placeholder")
        return dataclasses.replace(self, paytable=paytable, ordering=ordering or self.ordering)

    def without_discard_payments(self) -> RulePack:
        """EU draw poker: discard prizes are optional for each casino (ep. 12.VIII.8.1.b)."""
        return dataclasses.replace(self, discard_paytable=None)


_C = HandCategory
_S = SevensCombination
_ROYAL_WHOLE_POOL = PaytableRow(_C.ROYAL_FLUSH, PercentOfMeter(Decimal(100)), TiePolicy.SHARE_ONE)


def _pct(category: Category, percent: str, ties: TiePolicy) -> PaytableRow:
    return PaytableRow(category, PercentOfMeter(Decimal(percent)), ties)


def _times(category: Category, multiple: int) -> PaytableRow:
    return PaytableRow(category, MultipleOfBet(Decimal(multiple)))


# --- Póquer sin descarte ------------------------------------------------------------------------------

# Spec §6.2, ML art. 61. Royal: the whole carousel, equal parts; straight flush: 10 %.
# Interpretation: art. 61 has no tie rule between straight flushes; AN10's (sequential, equal ones share
# one 10 %) is used. The ½ table-minimum cap of art. 62.2 is applied too (OP-21).
ML_PSD_CARRUSEL = RulePack(
    code="ML_PSD_CARRUSEL",
    jurisdiction=Jurisdiction.ML,
    game=Game.POKER_SIN_DESCARTE,
    title="Melilla — póquer sin descarte, carrusel",
    source="spec §6.2; 000_30ca879e32376d5e.txt art. 61 (OP-21)",
    ordering=STANDARD,
    paytable=Paytable((_ROYAL_WHOLE_POOL, _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.SHARE_ONE))),
    max_bet_share_of_table_minimum=HALF,
    registrations=(BetRegistration.SLOT,),
    all_tables=True,
    notes=("Members: all the póquer sin descarte tables.",),
)

# Spec §6.3, ML art. 62.2 and 56.3. Royal: the accumulated amount of all tables; straight flush 10 %.
# Bet ≤ ½ table minimum; only the first five cards count (before an extra card is bought, art. 62.3).
ML_PSD_PROGRESIVO = RulePack(
    code="ML_PSD_PROGRESIVO",
    jurisdiction=Jurisdiction.ML,
    game=Game.POKER_SIN_DESCARTE,
    title="Melilla — póquer sin descarte, progresivo",
    source="spec §6.3; 000_30ca879e32376d5e.txt art. 62.2, art. 56.3",
    ordering=STANDARD,
    paytable=Paytable((_ROYAL_WHOLE_POOL, _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.SHARE_ONE))),
    max_bet_share_of_table_minimum=HALF,
    first_five_cards_only=True,
    registrations=(BetRegistration.SLOT_WITH_COUNTER,),
    notes=("Tie between straight flushes not stated: Interpretation as AN10 (OP-26).",),
)

# Spec §6.4, CT Annex 1 ep. 10.VII.b and 10.II.3: as Melilla 62.2 without "first five cards".
CT_PSD_PROGRESSIU = RulePack(
    code="CT_PSD_PROGRESSIU",
    jurisdiction=Jurisdiction.CT,
    game=Game.POKER_SIN_DESCARTE,
    title="Catalunya — pòquer sense descart, progressiu",
    source="spec §6.4; 003_c906777114f0bb73.txt art. 1, Annex 1 ep. 10.VII.b, 10.II.3",
    ordering=STANDARD,
    paytable=Paytable((_ROYAL_WHOLE_POOL, _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.SHARE_ONE))),
    max_bet_share_of_table_minimum=HALF,
    registrations=(BetRegistration.SLOT_WITH_COUNTER,),
    notes=("Tie between straight flushes not stated: Interpretation as AN10 (OP-26).",),
)

# Spec §6.5, AN96 Anexo Único, Primero.8 (ranking Primero.5.1, OP-24). Royal: whole carousel, equal
# parts; straight flush: 10 % to the player with the highest one only. Legacy profile (OP-16).
AN96_PSD_CARRUSEL = RulePack(
    code="AN96_PSD_CARRUSEL",
    jurisdiction=Jurisdiction.AN96,
    game=Game.POKER_SIN_DESCARTE,
    title="Andalucía 1996 — póker sin descarte, carrusel",
    source="spec §6.5; 001_46ec17530923f261.txt art. Único, Anexo Único, Primero.8 and Primero.5.1",
    ordering=AN96,
    paytable=Paytable((_ROYAL_WHOLE_POOL, _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.HIGHEST_ONLY))),
    registrations=(BetRegistration.SLOT,),
    all_tables=True,
    notes=(
        "Members: all the póker sin descarte tables of the casino's gaming room.",
        "Superseded by AN10 for Andalusian venues unless the product owner decides otherwise (OP-16).",
    ),
)

_AN10_PSD_PAYTABLE = Paytable(
    (
        _ROYAL_WHOLE_POOL,
        _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.SHARE_ONE),
        _times(_C.FOUR_OF_A_KIND, 300),
        _times(_C.FULL_HOUSE, 100),
        _times(_C.FLUSH, 50),
        _times(_C.STRAIGHT, 30),
    )
)

# Spec §6.6, AN10 ep. I.1.9.A.VII.6.1-6.4 (and II.2, VI.1). Seed ≥ 5,000 × the carousel bet (OP-37);
# the initial bet is required; payments come off the meter; straight flushes paid highest first on
# the remainder, equal ones share one 10 %; equal royals share the pool. The paytable may change with
# the Dirección General's authorisation (CJ-AN10-13): load it with with_authorised_paytable.
AN10_PSD_CARRUSEL = RulePack(
    code="AN10_PSD_CARRUSEL",
    jurisdiction=Jurisdiction.AN10,
    game=Game.POKER_SIN_DESCARTE,
    title="Andalucía 2010 — póquer sin descarte, carrusel o jackpot",
    source="spec §6.6; 002_5c9c19b250457762.txt art. 1, ep. I.1.9.A.VII.6.1-6.4",
    ordering=STANDARD,
    paytable=_AN10_PSD_PAYTABLE,
    min_seed_multiple=Decimal(5000),
    requires_initial_bet=True,
    registrations=(BetRegistration.SLOT, BetRegistration.DIGITAL),
    notes=("Members: all or some póquer sin descarte tables of the room.",),
)

# Spec §6.7, EU ep. 11.VI.1 and 11.VI.3. Royal: the total of all tables; straight flush 10 %; four of a
# kind 5 %; highest first on the remainder; equal straight flushes each 10 % of the hand's initial amount
# (OP-26). Interpretation: equal royals share the pool (OP-28); equal fours of a kind (possible only
# across tables) are treated like equal straight flushes. Buying an extra card forfeits the jackpot bet.
EU_PSD_JACKPOT = RulePack(
    code="EU_PSD_JACKPOT",
    jurisdiction=Jurisdiction.EU,
    game=Game.POKER_SIN_DESCARTE,
    title="Euskadi — póquer sin descarte, jackpot",
    source="spec §6.7; 004_581f8635678876b3.txt art. 2, ep. 11.VI.1, 11.VI.3, 11.II.2",
    ordering=STANDARD,
    paytable=Paytable(
        (
            _ROYAL_WHOLE_POOL,
            _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.EACH_OF_HAND_START),
            _pct(_C.FOUR_OF_A_KIND, "5", TiePolicy.EACH_OF_HAND_START),
        )
    ),
    max_bet_share_of_table_minimum=HALF,
    extra_card_forfeits_pool_bet=True,
    registrations=(BetRegistration.BOX, BetRegistration.SLOT),
)

# --- Póquer con descarte (Euskadi) --------------------------------------------------------------------

# Spec §6.8, EU ep. 12.VIII.8.1: a) without discard (mandatory) 5 / 10 / 100 %; b) having discarded
# (optional per casino) 0.5 / 1 / 10 %. No-discard prizes always first. Interpretation: equal hands
# other than the no-discard royals (which share the whole jackpot) follow the equal-straight-flush rule.
_EU_PCD_NO_DISCARD = Paytable(
    (
        _ROYAL_WHOLE_POOL,
        _pct(_C.STRAIGHT_FLUSH, "10", TiePolicy.EACH_OF_HAND_START),
        _pct(_C.FOUR_OF_A_KIND, "5", TiePolicy.EACH_OF_HAND_START),
    )
)
_EU_PCD_DISCARD = Paytable(
    (
        _pct(_C.ROYAL_FLUSH, "10", TiePolicy.EACH_OF_HAND_START),
        _pct(_C.STRAIGHT_FLUSH, "1", TiePolicy.EACH_OF_HAND_START),
        _pct(_C.FOUR_OF_A_KIND, "0.5", TiePolicy.EACH_OF_HAND_START),
    )
)
_EU_PCD_SOURCE = "spec §6.8; 004_581f8635678876b3.txt art. 2, ep. 12.VIII.8.1, 12.II.2.2, 12.VII.7.1"

# Fixed: minimum 2,000 × the jackpot bet, six bet boxes, the meter does not grow (OP-38).
EU_PCD_JACKPOT_FIXED = RulePack(
    code="EU_PCD_JACKPOT_FIXED",
    jurisdiction=Jurisdiction.EU,
    game=Game.POKER_CON_DESCARTE,
    title="Euskadi — póquer con descarte, jackpot fijo",
    source=_EU_PCD_SOURCE,
    ordering=STANDARD,
    paytable=_EU_PCD_NO_DISCARD,
    discard_paytable=_EU_PCD_DISCARD,
    payment_order=PaymentOrder.NO_DISCARD_FIRST,
    kind=JackpotKind.FIXED,
    min_seed_multiple=Decimal(2000),
    max_bet_share_of_table_minimum=HALF,
    requires_initial_bet=True,
    registrations=(BetRegistration.BOX,),
)

# Progressive: starts at ≥ 1,000 × the bet and grows by the authorised percentage (OP-22).
# b.1: staff key in the hand's total jackpot bets; b.2: one electronic chip slot per seat (OP-38).
EU_PCD_JACKPOT_PROGRESSIVE_MANUAL = dataclasses.replace(
    EU_PCD_JACKPOT_FIXED,
    code="EU_PCD_JACKPOT_PROGRESSIVE_MANUAL",
    title="Euskadi — póquer con descarte, jackpot progresivo (b.1 introducción manual)",
    kind=JackpotKind.PROGRESSIVE,
    min_seed_multiple=Decimal(1000),
    registrations=(BetRegistration.MANUAL_HAND_TOTAL,),
    notes=("A carousel of several tables (ep. 12.VIII.8.2) uses this pack on a multi-table pool.",),
)
EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC = dataclasses.replace(
    EU_PCD_JACKPOT_PROGRESSIVE_MANUAL,
    code="EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC",
    title="Euskadi — póquer con descarte, jackpot progresivo (b.2 introducción automática)",
    registrations=(BetRegistration.AUTOMATIC_CHIP_SLOT,),
)

# --- Tripóquer (Andalucía 2010) -----------------------------------------------------------------------

# Spec §6.9, AN10 ep. I.1.9.C.IX.1-2: works "like póquer sin descarte" with a 70 % minimum return, but
# the seed gives no three-card paytable: it comes from the authorisation. Ties default to AN10's rule
# when the authorised rows are built.
AN10_TRIPOQUER_CARRUSEL = RulePack(
    code="AN10_TRIPOQUER_CARRUSEL",
    jurisdiction=Jurisdiction.AN10,
    game=Game.TRIPOQUER,
    title="Andalucía 2010 — tripóquer, carrusel o progresivo",
    source="spec §6.9; 002_5c9c19b250457762.txt art. 1, ep. I.1.9.C.IX.1-2",
    ordering=THREE_CARD,
    paytable=AWAITING_AUTHORISATION,
    min_return=Decimal("0.70"),
    notes=("Minimum seed not stated for tripóquer; set it from the authorisation.",),
)

# Spec §6.9, ep. I.1.9.C.IX.3: all the poker tables interconnected; tripóquer tables draw two community
# cards to make five-card hands. Interpretation: the interconnected pool is the AN10 póquer sin descarte
# carousel, and the tripóquer 70 % return guarantee still holds.
AN10_POKER_INTERCONNECTED = dataclasses.replace(
    AN10_PSD_CARRUSEL,
    code="AN10_POKER_INTERCONNECTED",
    title="Andalucía 2010 — carrusel de todas las modalidades de póquer",
    source="spec §6.9, §6.6; 002_5c9c19b250457762.txt art. 1, ep. I.1.9.C.IX.3, I.1.9.A.VII.6",
    min_return=Decimal("0.70"),
    community_cards=2,
    notes=("Members: all the tables of the establishment's poker modalities.",),
)

# --- Blackjack ----------------------------------------------------------------------------------------

# Spec §6.11.3, AN10 ep. I.1.3.V.1.e: 2 / 10 / 100 / 200 to 1 and the whole Bolsa (never below 3,000 ×
# the bet, read as the seed floor). Only the highest combination of a hand is paid (rank_sevens).
# Interpretation: the fixed odds come off the Bolsa meter like AN10's póquer multiples (OP-23), and
# several three-suited-sevens hands in one round share the Bolsa like royal flushes.
AN10_BJ_BOLSA = RulePack(
    code="AN10_BJ_BOLSA",
    jurisdiction=Jurisdiction.AN10,
    game=Game.BLACKJACK,
    title="Andalucía 2010 — veintiuno, jugada de bolsa o veintiuno progresivo",
    source="spec §6.11.3; 002_5c9c19b250457762.txt art. 1, ep. I.1.3.V.1.e",
    ordering=SEVENS,
    paytable=Paytable(
        (
            PaytableRow(_S.THREE_SEVENS_SAME_SUIT, PercentOfMeter(Decimal(100)), TiePolicy.SHARE_ONE),
            _times(_S.THREE_SEVENS, 200),
            _times(_S.TWO_SEVENS_SAME_SUIT, 100),
            _times(_S.TWO_SEVENS, 10),
            _times(_S.FIRST_CARD_SEVEN, 2),
        )
    ),
    min_seed_multiple=Decimal(3000),
    registrations=(BetRegistration.BOX, BetRegistration.SLOT),
)

# Spec §6.11.4, EU ep. 03.V.1.f: the same combinations "as a minimum", two suited sevens 50 to 1 (Spanish
# text, OP-20), top prize ≥ 2,000 × the bet, bet ≤ ½ table minimum. Triple Black Jack's jackpot bet
# uses this pack (spec §6.11.5, Interpretation).
EU_BJ_APUESTA_ACUMULADA = RulePack(
    code="EU_BJ_APUESTA_ACUMULADA",
    jurisdiction=Jurisdiction.EU,
    game=Game.BLACKJACK,
    title="Euskadi — black jack, apuesta acumulada",
    source="spec §6.11.4-5; 004_581f8635678876b3.txt art. 2, ep. 03.V.1.f, 03.01",
    ordering=SEVENS,
    paytable=Paytable(
        (
            PaytableRow(_S.THREE_SEVENS_SAME_SUIT, PercentOfMeter(Decimal(100)), TiePolicy.SHARE_ONE),
            _times(_S.THREE_SEVENS, 200),
            _times(_S.TWO_SEVENS_SAME_SUIT, 50),
            _times(_S.TWO_SEVENS, 10),
            _times(_S.FIRST_CARD_SEVEN, 2),
        ),
        minimums=True,
    ),
    min_seed_multiple=Decimal(2000),
    max_bet_share_of_table_minimum=HALF,
    registrations=(BetRegistration.BOX,),
    notes=("Progressive jackpots and carousels between tables need express authorisation (BJ-EU-6).",),
)

# Spec §6.11.1, ML art. 18.2: progressives (also across establishments with authorisation), bet ≤ ½
# table minimum; combinations and paytable from the authorisation (OP-30).
ML_BJ_PROGRESIVO = RulePack(
    code="ML_BJ_PROGRESIVO",
    jurisdiction=Jurisdiction.ML,
    game=Game.BLACKJACK,
    title="Melilla — black-jack, apuestas acumuladas y progresivos",
    source="spec §6.11.1; 000_30ca879e32376d5e.txt art. 18.2 (OP-30)",
    ordering=None,
    paytable=AWAITING_AUTHORISATION,
    max_bet_share_of_table_minimum=HALF,
    registrations=(BetRegistration.SLOT_WITH_COUNTER,),
)

# Spec §6.11.2, CT Annex 1 ep. 03.V.2: accumulated bets authorised case by case; nothing else given.
CT_BJ_APOSTES_ACUMULADES = RulePack(
    code="CT_BJ_APOSTES_ACUMULADES",
    jurisdiction=Jurisdiction.CT,
    game=Game.BLACKJACK,
    title="Catalunya — black jack, apostes acumulades",
    source="spec §6.11.2; 003_c906777114f0bb73.txt art. 1, Annex 1 ep. 03.V.2 (OP-30)",
    ordering=None,
    paytable=AWAITING_AUTHORISATION,
)

PACKS: Mapping[str, RulePack] = MappingProxyType(
    {
        pack.code: pack
        for pack in (
            ML_PSD_CARRUSEL,
            ML_PSD_PROGRESIVO,
            CT_PSD_PROGRESSIU,
            AN96_PSD_CARRUSEL,
            AN10_PSD_CARRUSEL,
            EU_PSD_JACKPOT,
            EU_PCD_JACKPOT_FIXED,
            EU_PCD_JACKPOT_PROGRESSIVE_MANUAL,
            EU_PCD_JACKPOT_PROGRESSIVE_AUTOMATIC,
            AN10_TRIPOQUER_CARRUSEL,
            AN10_POKER_INTERCONNECTED,
            AN10_BJ_BOLSA,
            EU_BJ_APUESTA_ACUMULADA,
            ML_BJ_PROGRESIVO,
            CT_BJ_APOSTES_ACUMULADES,
        )
    }
)


def get_pack(code: str) -> RulePack:
    try:
        return PACKS[code]
    except KeyError:
        raise KeyError(f"no rule pack {code!r}; known: {', '.join(sorted(PACKS))}") from None


def packs_for(jurisdiction: Jurisdiction | str) -> tuple[RulePack, ...]:
    return tuple(pack for pack in PACKS.values() if pack.jurisdiction == jurisdiction)
