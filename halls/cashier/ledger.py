"""The double-entry rules, pure: sides, legs, balance and what a leg does to an account's balance.

A transaction is a list of legs whose signed amounts sum to zero: a positive amount is a debit, a
negative one a credit. An account shows its balance on its normal side: debit-normal accounts (a drawer:
the cash in it; pool funding: what the pools have paid out) show debits minus credits; credit-normal
accounts (what the hall owes: a player card, prizes payable, tickets outstanding; sales; the house's
stake in the drawers) show credits minus debits. A guarded account's shown balance never goes below zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from halls.money import CENT, ZERO


class Kind(StrEnum):
    """The kinds of account (halls.cashier.models.Account.kind)."""

    DRAWER = "drawer"  # one per shift and means of payment: the money in the till
    PLAYER_CARD = "player_card"  # one per player card: what the hall owes its bearer
    PRIZES_PAYABLE = "prizes_payable"  # per venue: prizes awarded and not yet paid
    SALES = "sales"  # per venue: card sales (less returns and the prizes paid out of them)
    HOUSE = "house"  # per venue: the house's stake (floats out, cash-ups in, over/short, expired tickets)
    POOL_FUNDING = "pool_funding"  # per venue: accumulated prizes awarded, funded by the pool engine
    TICKETS = "tickets"  # per venue: tickets issued and not yet redeemed or expired
    DEVICE_CASH = "device_cash"  # one per cash device: the notes in a terminal's or bill reader's stacker


DEBIT_NORMAL = frozenset({Kind.DRAWER, Kind.DEVICE_CASH, Kind.POOL_FUNDING})
# Never below zero: money in a drawer, on a card, owed on prizes or tickets.
GUARDED = frozenset({Kind.DRAWER, Kind.DEVICE_CASH, Kind.PLAYER_CARD, Kind.PRIZES_PAYABLE, Kind.TICKETS})


class Unbalanced(ValueError):
    """Legs that do not sum to zero, a zero or non-cent leg, or no legs."""


@dataclass(frozen=True)
class Leg:
    """One leg: `account` (any key the caller uses, an id in the services) and a signed amount."""

    account: int
    amount: Decimal  # > 0 debit, < 0 credit


def debit(account: int, amount: Decimal) -> Leg:
    return Leg(account, amount)


def credit(account: int, amount: Decimal) -> Leg:
    return Leg(account, -amount)


def check(legs: Iterable[Leg]) -> tuple[Leg, ...]:
    """The legs, merged per account and in account order, once they balance; else `Unbalanced`."""
    merged: dict[int, Decimal] = {}
    for leg in legs:
        if leg.amount != leg.amount.quantize(CENT) or leg.amount == ZERO:
            raise Unbalanced(f"leg of {leg.amount} on account {leg.account}: a non-zero amount in cents")
        merged[leg.account] = merged.get(leg.account, ZERO) + leg.amount
    total = sum(merged.values(), ZERO)
    if total != ZERO:
        raise Unbalanced(f"legs sum to {total}, not zero")
    kept = tuple(Leg(account, amount) for account, amount in sorted(merged.items()) if amount != ZERO)
    if len(kept) < 2:
        raise Unbalanced("a transaction moves money between at least two accounts")
    return kept


def shown(kind: Kind, amount: Decimal) -> Decimal:
    """What a leg of `amount` does to the balance an account of `kind` shows."""
    return amount if kind in DEBIT_NORMAL else -amount


def trial_balance(balances: Mapping[Kind, Decimal]) -> Decimal:
    """Shown balances per kind back to signed sums (`shown` is its own inverse), added: zero when the books
    balance (debit-normal balances equal credit-normal ones)."""
    return sum((shown(kind, amount) for kind, amount in balances.items()), ZERO)
