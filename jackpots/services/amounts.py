"""The pool services' amount checks: what a caller gives (a rate, a percent, a delta, a prize) read through
halls.money.parse and refused as InvalidInput with the caller's code; what a screen may show of a meter."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from halls import money
from halls.errors import InvalidInput


def as_decimal(name: str, value: Any, *, code: str) -> Decimal:
    """A finite Decimal, of either sign, from a Decimal, int or numeric string (never a float): parsed by
    money.parse, refused in the pool services' own words (the caller checks its bounds)."""
    try:
        return money.parse(name, value, signed=True)
    except money.MoneyTypeError:
        message = _("%(name)s must be an exact amount (Decimal or string), not %(value)r.")
    except money.NotAnAmount:
        message = _("%(name)s %(value)r is not a number.")
    except money.MoneyError:
        message = _("%(name)s %(value)r is not a finite amount.")
    raise InvalidInput(message % {"name": name, "value": value}, code=code)


def _parsed(name: str, value: Any, *, code: str, **rules: Any) -> Decimal:
    try:
        return money.parse(name, value, **rules)
    except money.MoneyError as exc:
        raise InvalidInput(f"{exc}.", code=code) from None


def cents(name: str, value: Any, *, code: str, positive: bool = True) -> Decimal:
    """Whole cents (>= 0; > 0 when `positive`), at the cents' scale."""
    return money.cents(_parsed(name, value, code=code, places=money.CENT_PLACES, positive=positive))


def meter_amount(name: str, value: Any, *, code: str) -> Decimal:
    """An amount >= 0 with at most the meter's decimals."""
    return _parsed(name, value, code=code, places=money.METER_PLACES)


def display(amount: Decimal) -> Decimal:
    """What a screen may show: whole cents, rounded down (never more than the pool holds)."""
    return money.cents_down(amount)
