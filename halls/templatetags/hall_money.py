"""Amounts on the pages, in the page's language and always with their currency (halls.i18n.amount,
halls.money.for_person): ``{{ amount|money }}`` ("1.234,56 €" / "€1,234.56"),
``{{ amount|money:venue.currency }}``, ``{{ amount|typed_amount }}`` for a form box a person types
over ("5000,00" / "5000.00", read back by the form), and ``{{ residue|exact_money }}`` for a meter's
fraction kept beyond the cent ("0,002 €"); "—" for none. The space a no-break one, so a narrow cell
never puts the € on a line of its own.

    {% load hall_money %}<td class="num">{{ g.sales_total|money }}</td>
"""

from __future__ import annotations

from decimal import Decimal

from django import template
from django.conf import settings
from django.utils import translation

from halls import i18n
from halls import money as money_module

register = template.Library()


def _on_page(value: Decimal | int | str | None, currency: str, *, exact: bool) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        raise TypeError("money is never a float")  # a Decimal, an int or a decimal string
    shown = i18n.amount(Decimal(value), currency or "EUR", exact=exact)
    # On a page the figure and its sign stay on one line (a no-break space, as Intl.NumberFormat writes it).
    return shown.replace(" ", "\u00a0")


@register.filter
def money(value: Decimal | int | str | None, currency: str = "EUR") -> str:
    return _on_page(value, currency, exact=False)


@register.filter
def exact_money(value: Decimal | int | str | None, currency: str = "EUR") -> str:
    return _on_page(value, currency, exact=True)


@register.filter
def typed_amount(value: Decimal | int | str | None) -> str:
    """An amount pre-filled in a form's box in the page's language, as a person types it ("5000,00" /
    "5000.00": halls.money.for_typing), which the form reads back (halls.money.parse_typed); "" for none."""
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        raise TypeError("money is never a float")
    return money_module.for_typing(Decimal(value), translation.get_language() or settings.LANGUAGE_CODE)
