"""Pool arithmetic for every accumulated prize: contributions, ceilings, hand settlement, reset. Pure.

Money is halls.money's (exact Decimal; meters to METER_QUANTUM, payouts whole cents rounded down, the
sub-cent rest of a percentage prize stays in the pool; the contribution split is halls.money's). Functions
take and return immutable values; the service persists them in one transaction and writes the ledger rows
that `PoolTotals` mirrors, so the balancing report can prove: seeds + contributions = amount + awards +
reserve moves, exactly.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal
from enum import StrEnum
from itertools import groupby
from typing import NamedTuple

from halls import money
from halls.money import CENT_PLACES, EXACT, METER_PLACES, ZERO, cents_down
from jackpots.poker import Category, HandRank
from jackpots.rulepacks import (
    FixedAmount,
    Game,
    JackpotKind,
    MultipleOfBet,
    PaymentOrder,
    PaytableRow,
    PercentOfMeter,
    RulePack,
    TiePolicy,
)

NO_CENTS = Decimal("0.00")

Seat = str | int


def _amount(name: str, value: Decimal | int, places: int | None = None) -> Decimal:
    """A Decimal or an int (exact) >= 0, at most `places` decimals: the pure core takes no text."""
    return money.parse(name, value, text=False, places=places)


# --- contributions (split by halls.money.split_contribution) --------------------------------------------


class OverflowTarget(StrEnum):
    """Where contributions go once the meter stands at its ceiling."""

    RESERVE = "reserve"
    NEXT_LEVEL = "next_level"


@dataclass(frozen=True)
class LevelState:
    """One pool level. `amount` is the meter; `reserve` is the hidden fund for the next seed.

    A fixed level's meter never grows: its contributions go to the overflow target (spec §6.8).
    """

    seed: Decimal
    amount: Decimal
    reserve: Decimal = ZERO
    ceiling: Decimal | None = None
    overflow: OverflowTarget = OverflowTarget.RESERVE
    must_hit_by: Decimal | None = None
    kind: JackpotKind = JackpotKind.PROGRESSIVE

    def __post_init__(self) -> None:
        for name in ("seed", "amount", "reserve"):
            _amount(name, getattr(self, name), METER_PLACES)
        if self.ceiling is not None and _amount("ceiling", self.ceiling) < self.seed:
            raise ValueError(f"ceiling {self.ceiling} is below the seed {self.seed}")
        if self.must_hit_by is not None:
            if self.kind is JackpotKind.FIXED:
                raise ValueError("a fixed level has no must-hit-by value")
            mhb, high = _amount("must_hit_by", self.must_hit_by), self.ceiling
            if mhb < self.seed or (high is not None and mhb > high):
                raise ValueError(f"must_hit_by {mhb} must lie between seed {self.seed} and ceiling {high}")

    @classmethod
    def opened(
        cls,
        seed: Decimal,
        *,
        reserve: Decimal = ZERO,
        ceiling: Decimal | None = None,
        overflow: OverflowTarget = OverflowTarget.RESERVE,
        must_hit_by: Decimal | None = None,
        kind: JackpotKind = JackpotKind.PROGRESSIVE,
    ) -> LevelState:
        """A new level whose meter starts at its seed."""
        return cls(seed, seed, reserve, ceiling, overflow, must_hit_by, kind)

    def takes(self, offered: Decimal) -> Decimal:
        """How much of `offered` the meter takes (a fixed level: nothing); the rest overflows."""
        if self.kind is JackpotKind.FIXED:
            return ZERO
        return money.under_ceiling(self.amount, offered, self.ceiling)


@dataclass(frozen=True)
class ContributionResult:
    level: LevelState
    to_meter: Decimal  # the meter share offered, including any part that overflowed
    added_to_meter: Decimal
    to_reserve: Decimal  # the reserve share of the split
    overflow_to_reserve: Decimal
    overflow_to_next_level: Decimal  # the service adds it to the next level as a contribution
    must_hit: bool  # the meter reached the mystery value: award it now


def apply_contribution(
    level: LevelState, to_meter: Decimal, to_reserve: Decimal = ZERO
) -> ContributionResult:
    """Add one contribution (usually a `split_contribution`), overflowing past the ceiling."""
    offered = _amount("to_meter", to_meter, METER_PLACES)
    hidden = _amount("to_reserve", to_reserve, METER_PLACES)
    added = level.takes(offered)
    overflow = offered - added
    to_res = overflow if level.overflow is OverflowTarget.RESERVE else ZERO
    to_next = overflow - to_res
    amount = level.amount + added
    new_level = dataclasses.replace(level, amount=amount, reserve=level.reserve + hidden + to_res)
    return ContributionResult(
        level=new_level,
        to_meter=offered,
        added_to_meter=added,
        to_reserve=hidden,
        overflow_to_reserve=to_res,
        overflow_to_next_level=to_next,
        must_hit=level.must_hit_by is not None and amount >= level.must_hit_by,
    )


# --- settling a hand ----------------------------------------------------------------------------------


class Winner(NamedTuple):
    """A hand at the pool: who, what they hold, and whether it was made after discarding (EU)."""

    seat: Seat
    rank: HandRank
    discard: bool = False


@dataclass(frozen=True)
class Payout:
    seat: Seat
    rank: HandRank
    discard: bool
    amount: Decimal  # paid to the player, whole cents
    from_meter: Decimal
    from_operator: Decimal  # OP-23: the part of a fixed prize the meter could not cover
    basis: Decimal | None  # the meter amount a percentage was computed on
    note: str


@dataclass(frozen=True)
class Settlement:
    """The pool payments of one hand, in payment order."""

    meter_before: Decimal
    meter_after: Decimal
    payouts: tuple[Payout, ...]
    # Sub-cent rests of the percentage prizes, left in the meter as they were computed (a later fixed
    # prize of the same hand may still draw on the whole cents they add up to).
    kept_fraction: Decimal

    @property
    def from_meter(self) -> Decimal:
        return sum((p.from_meter for p in self.payouts), ZERO)

    @property
    def from_operator(self) -> Decimal:
        return sum((p.from_operator for p in self.payouts), ZERO)

    def paid_to(self, seat: Seat) -> Decimal:
        return sum((p.amount for p in self.payouts if p.seat == seat), ZERO)


def _checked_winners(pack: RulePack, winners: Iterable[tuple[Seat, HandRank, bool] | Winner]) -> list[Winner]:
    if pack.ordering is None or pack.paytable.from_authorisation:
        raise ValueError(f"{pack.code}: the paytable comes from the authorisation; load it first (OP-30)")
    hands = [Winner(*w) for w in winners]
    seats = [w.seat for w in hands]
    if len(set(seats)) != len(seats):
        raise ValueError("a seat appears twice in one hand")
    for w in hands:
        if w.rank.ordering != pack.ordering:
            raise ValueError(
                f"seat {w.seat}: hand ranked under {w.rank.ordering.name}, pack uses {pack.ordering.name}"
            )
        if w.discard and pack.game is not Game.POKER_CON_DESCARTE:
            raise ValueError(f"seat {w.seat}: there is no discarding in {pack.game}")
    return hands


def _row_for(pack: RulePack, winner: Winner) -> PaytableRow | None:
    table = pack.discard_paytable if winner.discard else pack.paytable
    return table.row_for(winner.rank.category) if table is not None else None


def _in_payment_order(
    pack: RulePack, entries: list[tuple[Winner, PaytableRow]]
) -> list[tuple[Winner, PaytableRow]]:
    """Highest hand first; a no-discard hand before an equal discard one; EU: all no-discard first."""
    ordered = sorted(entries, key=lambda e: e[0].discard)  # stable: seats keep the caller's order
    ordered.sort(key=lambda e: e[0].rank, reverse=True)
    if pack.payment_order is PaymentOrder.NO_DISCARD_FIRST:
        ordered.sort(key=lambda e: e[0].discard)
    return ordered


def settle_hand(
    pack: RulePack,
    meter_amount: Decimal,
    bet: Decimal,
    winners: Iterable[tuple[Seat, HandRank, bool] | Winner],
) -> Settlement:
    """Pay one hand's pool prizes by the pack's paytable, tie policy and payment order.

    Hands are paid highest first, each percentage on the meter left by the previous payments (AN10
    VII.6.4, EU 11.VI.1, OP-23); hands of equal value form one group paid by the row's `TiePolicy`.
    Multiples of the bet and fixed amounts come off the meter; what the meter cannot cover is paid by
    the operator and reported (OP-23). Hands with no paytable row are ignored. `bet` is the pool's
    single stipulated bet (OP-37).
    """
    start = _amount("meter_amount", meter_amount)
    stake = _amount("bet", bet, CENT_PLACES)
    entries = []
    for winner in _checked_winners(pack, winners):
        row = _row_for(pack, winner)
        if row is not None:
            entries.append((winner, row))

    meter = start
    kept = ZERO
    payouts: list[Payout] = []
    paid_rows: set[tuple[bool, Category]] = set()
    for _, grouped in groupby(_in_payment_order(pack, entries), key=lambda e: (e[0].rank, e[0].discard)):
        group = list(grouped)
        row = group[0][1]
        hands = [w for w, _ in group]
        row_key = (hands[0].discard, row.category)
        if row.ties is TiePolicy.HIGHEST_ONLY and row_key in paid_rows:
            note = f"only the highest {row.category} is paid"
            payouts.extend(
                Payout(w.seat, w.rank, w.discard, NO_CENTS, NO_CENTS, NO_CENTS, None, note) for w in hands
            )
            continue
        paid_rows.add(row_key)
        prize = row.prize
        if isinstance(prize, PercentOfMeter):
            group_payouts, group_kept = _pay_percent(prize.percent, row.ties, hands, meter, start)
            kept += group_kept
        else:
            group_payouts = _pay_fixed(prize, stake, hands, meter)
        meter -= sum((p.from_meter for p in group_payouts), ZERO)
        payouts.extend(group_payouts)
    return Settlement(meter_before=start, meter_after=meter, payouts=tuple(payouts), kept_fraction=kept)


def _pay_percent(
    percent: Decimal, ties: TiePolicy, hands: Sequence[Winner], meter: Decimal, hand_start: Decimal
) -> tuple[list[Payout], Decimal]:
    """One group of equal hands paid a percentage; returns the payouts and the sub-cent rest kept."""
    count = len(hands)
    if ties is TiePolicy.EACH_OF_HAND_START and count > 1:
        # EU: each of several equal hands gets the % of the meter before the hand's payments (OP-26) ...
        basis = hand_start
        raw_total = EXACT.multiply(money.percent_of(basis, percent), count)
        share = cents_down(money.percent_of(basis, percent))
        note = f"{percent} % of the hand's starting meter {basis} each ({count} equal hands)"
        if EXACT.multiply(share, count) > meter:
            # ... unless the meter cannot cover them all: then the equal hands share what is left.
            raw_total, share = meter, money.share_cents(meter, count).share
            note = f"the remaining meter {meter} shared by {count} (it cannot cover {percent} % each)"
    else:
        basis = meter
        raw_total = money.percent_of(basis, percent)
        share = money.share_cents(raw_total, count).share
        note = f"{percent} % of the meter {basis}" + (f" shared by {count}" if count > 1 else "")
    payouts = [Payout(w.seat, w.rank, w.discard, share, share, NO_CENTS, basis, note) for w in hands]
    return payouts, raw_total - EXACT.multiply(share, count)


def _pay_fixed(
    prize: MultipleOfBet | FixedAmount, bet: Decimal, hands: Sequence[Winner], meter: Decimal
) -> list[Payout]:
    """Each hand gets the full prize; the meter pays what it holds, the operator the rest (OP-23)."""
    if isinstance(prize, MultipleOfBet):
        amount = cents_down(EXACT.multiply(prize.multiple, bet))
        note = f"{prize.multiple} × the bet {bet}"
    else:
        amount = cents_down(prize.amount)
        note = f"fixed prize {amount}"
    payouts = []
    for w in hands:
        from_meter = min(amount, cents_down(meter))
        shortfall = amount - from_meter
        payouts.append(
            Payout(
                w.seat,
                w.rank,
                w.discard,
                amount,
                from_meter,
                shortfall,
                None,
                note + (f"; operator pays {shortfall} the meter lacks" if shortfall else ""),
            )
        )
        meter -= from_meter
    return payouts


def apply_settlement(level: LevelState, settlement: Settlement) -> LevelState:
    """The level after the hand's payments (before any reset)."""
    if settlement.meter_before != level.amount:
        raise ValueError(
            f"settlement computed on meter {settlement.meter_before}, level holds {level.amount}"
        )
    return dataclasses.replace(level, amount=settlement.meter_after)


# --- reset, mystery value, balance --------------------------------------------------------------------


@dataclass(frozen=True)
class ResetResult:
    level: LevelState
    from_reserve: Decimal  # moved from the hidden reserve to the meter
    operator_seed: Decimal  # funded by the operator, recorded as an "operator seed" (OP-23)


def reset_after_award(level: LevelState) -> ResetResult:
    """Bring a meter that an award left below its seed back to the seed, reserve first (OP-23).

    A meter still at or above its seed (e.g. after a 10 % straight flush) is left as it is.
    """
    need = max(ZERO, level.seed - level.amount)
    from_reserve = min(need, level.reserve)
    operator_seed = need - from_reserve
    new_level = dataclasses.replace(level, amount=level.amount + need, reserve=level.reserve - from_reserve)
    return ResetResult(level=new_level, from_reserve=from_reserve, operator_seed=operator_seed)


def draw_must_hit_by(
    seed: Decimal, ceiling: Decimal, rng_bytes_fn: Callable[[int], bytes] = secrets.token_bytes
) -> Decimal:
    """A mystery "must hit by" value, uniform over the whole cents from `seed` to `ceiling`.

    `rng_bytes_fn(n)` returns n random bytes; the default is the OS CSPRNG (`secrets`). Rejection
    sampling keeps every cent equally likely.
    """
    low = int(_amount("seed", seed).scaleb(CENT_PLACES).to_integral_value(rounding=ROUND_CEILING))
    high = int(_amount("ceiling", ceiling).scaleb(CENT_PLACES).to_integral_value(rounding=ROUND_DOWN))
    if low > high:
        raise ValueError(f"no whole cent between seed {seed} and ceiling {ceiling}")
    span = high - low + 1
    bits = span.bit_length()
    nbytes = (bits + 7) // 8
    while True:
        value = int.from_bytes(rng_bytes_fn(nbytes), "big") & ((1 << bits) - 1)
        if value < span:
            return EXACT.scaleb(Decimal(low + value), -CENT_PLACES)


@dataclass(frozen=True)
class Balance:
    left: Decimal
    right: Decimal

    @property
    def difference(self) -> Decimal:
        return self.left - self.right

    @property
    def holds(self) -> bool:
        return self.left == self.right


def balance_identity(
    *, seeds: Decimal, contributions: Decimal, amount: Decimal, awards: Decimal, reserve_moves: Decimal
) -> Balance:
    """seeds + contributions = amount + awards + reserve moves, for one meter.

    seeds: the opening seed plus operator seeds; contributions: meter shares offered (including what
    overflowed); awards: paid from the meter; reserve moves: meter to reserve or next level (overflow)
    minus reserve to meter (reset funding).
    """
    return Balance(left=seeds + contributions, right=amount + awards + reserve_moves)


@dataclass(frozen=True)
class PoolTotals:
    """Running totals of one level's ledger, as the balancing report sums them."""

    seeds: Decimal = ZERO
    contributions: Decimal = ZERO
    awards: Decimal = ZERO
    overflow_to_reserve: Decimal = ZERO
    overflow_to_next_level: Decimal = ZERO
    reserve_to_meter: Decimal = ZERO
    reserve_in: Decimal = ZERO  # opening reserve plus the reserve shares of contributions
    operator_prizes: Decimal = ZERO  # OP-23 shortfalls, paid outside the pool

    @classmethod
    def opening(cls, level: LevelState) -> PoolTotals:
        return cls(seeds=level.amount, reserve_in=level.reserve)

    @property
    def reserve_moves(self) -> Decimal:
        return self.overflow_to_reserve + self.overflow_to_next_level - self.reserve_to_meter

    def with_contribution(self, result: ContributionResult) -> PoolTotals:
        return dataclasses.replace(
            self,
            contributions=self.contributions + result.to_meter,
            overflow_to_reserve=self.overflow_to_reserve + result.overflow_to_reserve,
            overflow_to_next_level=self.overflow_to_next_level + result.overflow_to_next_level,
            reserve_in=self.reserve_in + result.to_reserve,
        )

    def with_settlement(self, settlement: Settlement) -> PoolTotals:
        return dataclasses.replace(
            self,
            awards=self.awards + settlement.from_meter,
            operator_prizes=self.operator_prizes + settlement.from_operator,
        )

    def with_reset(self, result: ResetResult) -> PoolTotals:
        return dataclasses.replace(
            self,
            seeds=self.seeds + result.operator_seed,
            reserve_to_meter=self.reserve_to_meter + result.from_reserve,
        )

    def meter_balance(self, level: LevelState) -> Balance:
        return balance_identity(
            seeds=self.seeds,
            contributions=self.contributions,
            amount=level.amount,
            awards=self.awards,
            reserve_moves=self.reserve_moves,
        )

    def reserve_balance(self, level: LevelState) -> Balance:
        """reserve in + overflow to reserve = reserve + reserve moved to the meter."""
        return Balance(
            left=self.reserve_in + self.overflow_to_reserve, right=level.reserve + self.reserve_to_meter
        )


def meets_min_return(
    pack: RulePack, *, prizes_paid: Decimal, meter_increase: Decimal, amounts_bet: Decimal
) -> bool:
    """Tripóquer's guaranteed return (spec §6.9): (prizes + meter increase) >= min_return × bets.

    Compared without dividing, so the check is exact. Packs without a minimum always pass.
    """
    if pack.min_return is None:
        return True
    return prizes_paid + meter_increase >= EXACT.multiply(pack.min_return, amounts_bet)
