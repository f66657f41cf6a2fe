"""Amounts on the pages, in the page's language and always with their currency (halls.money.for_people):
``{{ amount|money }}`` ("1.234,56 €"), ``{{ amount|money:venue.currency }}``, and
``{{ residue|exact_money }}`` for a meter's fraction kept beyond the cent ("0,002 €")."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import template
from django.utils import translation

from halls import money

register = template.Library()


def _shown(value: Any, currency: str, *, exact: bool) -> str:
    if value is None or value == "":
        return "—"
    try:
        amount = value if isinstance(value, Decimal) else Decimal(str(value))
    except InvalidOperation:
        return str(value)
    language = translation.get_language() or "es"
    return money.for_people(amount, language=language, currency=currency or "EUR", exact=exact)


@register.filter(name="money")
def money_shown(value: Any, currency: str = "EUR") -> str:
    return _shown(value, currency, exact=False)


@register.filter
def exact_money(value: Any, currency: str = "EUR") -> str:
    return _shown(value, currency, exact=True)
