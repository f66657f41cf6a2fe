"""Prize arithmetic in exact Decimal cents: never float, never rounding up.

Prizes are paid to the cent and rounded down; whatever cannot be paid (the sub-cent residue
of a percentage, the cents left when co-winners split) is returned so it can be recorded.
Arithmetic runs in a context that traps Inexact, so no intermediate is ever silently rounded.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Context, Decimal, DivisionByZero, Inexact, InvalidOperation, Overflow
from typing import Generic, TypeVar

CENT = Decimal("0.01")
HUNDRED = Decimal(100)

# 60 digits is far beyond any hall's money; anything that would need rounding raises instead.
_EXACT = Context(prec=60, traps=[Inexact, InvalidOperation, DivisionByZero, Overflow])
# Same precision without the Inexact trap, for the one deliberate rounding (down to the cent).
_TRUNCATE = Context(prec=60, rounding=ROUND_DOWN, traps=[InvalidOperation, DivisionByZero, Overflow])

T = TypeVar("T", bound=Hashable)


def _money(name: str, value: Decimal | int) -> Decimal:
    """Accept Decimal or int (exact), reject float/bool/NaN/infinity/negative values."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise TypeError(f"{name} must be a Decimal, got {type(value).__name__}")
    amount = Decimal(value)
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{name} must be a finite amount >= 0, got {value}")
    return amount


def quantize_cents(x: Decimal) -> Decimal:
    """Round toward zero to the cent: a prize is never rounded up."""
    return x.quantize(CENT, rounding=ROUND_DOWN, context=_TRUNCATE)


@dataclass(frozen=True)
class PrizeAmount:
    """A payable prize (whole cents) and the exact residue below the cent it left."""

    amount: Decimal
    residue: Decimal


def prize_from_sales(sales_total: Decimal, percent: Decimal) -> PrizeAmount:
    """`percent` % of `sales_total`, rounded down to the cent, with the residue kept."""
    sales = _money("sales_total", sales_total)
    pct = _money("percent", percent)
    if pct > HUNDRED:
        raise ValueError(f"percent must be 0-100, got {percent}")
    raw = _EXACT.divide(_EXACT.multiply(sales, pct), HUNDRED)
    amount = quantize_cents(raw)
    return PrizeAmount(amount=amount, residue=_EXACT.subtract(raw, amount))


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
    total = _money("amount", amount)
    if not winners:
        raise ValueError("cannot split a prize among no winners")
    if len(set(winners)) != len(winners):
        raise ValueError("winners must be distinct")
    # Integer cents from the exact fraction: floor(amount * 100 / n) with no rounding anywhere.
    numerator, denominator = total.as_integer_ratio()
    share_cents = (numerator * 100) // (denominator * len(winners))
    share = _EXACT.scaleb(Decimal(share_cents), -2)
    remainder = _EXACT.subtract(total, _EXACT.multiply(share, len(winners)))
    return Split(shares=dict.fromkeys(winners, share), share=share, remainder=remainder)
