"""Prize arithmetic in exact Decimal cents (halls.money): never float, never rounding up.

Prizes are paid to the cent and rounded down; whatever cannot be paid (the sub-cent residue
of a percentage, the cents left when co-winners split) is returned so it can be recorded.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Generic, TypeVar

from halls import money
from halls.money import EXACT, HUNDRED, cents_down

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class PrizeAmount:
    """A payable prize (whole cents) and the exact residue below the cent it left."""

    amount: Decimal
    residue: Decimal


def prize_from_sales(sales_total: Decimal, percent: Decimal) -> PrizeAmount:
    """`percent` % of `sales_total`, rounded down to the cent, with the residue kept."""
    sales = money.parse("sales_total", sales_total, text=False)
    pct = money.parse("percent", percent, text=False)
    if pct > HUNDRED:
        raise ValueError(f"percent must be 0-100, got {percent}")
    raw = money.percent_of(sales, pct)
    amount = cents_down(raw)
    return PrizeAmount(amount=amount, residue=EXACT.subtract(raw, amount))


@dataclass(frozen=True)
class Split(Generic[T]):
    """Equal shares to the cent for each winner; `remainder` is what could not be split."""

    shares: dict[T, Decimal]
    share: Decimal
    remainder: Decimal


def split_equally(amount: Decimal, winners: Sequence[T]) -> Split[T]:
    """Share `amount` equally among distinct `winners`, each share rounded down to the cent.

    Always 0 <= remainder < 0.01 * len(winners), and sum(shares) + remainder == amount exactly.
    """
    total = money.parse("amount", amount, text=False)
    if not winners:
        raise ValueError("cannot split a prize among no winners")
    if len(set(winners)) != len(winners):
        raise ValueError("winners must be distinct")
    share, remainder = money.share_cents(total, len(winners))
    return Split(shares=dict.fromkeys(winners, share), share=share, remainder=remainder)
