"""``{{ amount|money }}`` / ``{{ amount|money:venue.currency }}``: an amount in the page's language
(halls.i18n.amount, halls.money.for_person: "1.234,56 €" / "€1,234.56"), "—" for none; the space a
no-break one, so a narrow cell never puts the € on a line of its own.

    {% load hall_money %}<td class="num">{{ g.sales_total|money }}</td>
"""

from __future__ import annotations

from decimal import Decimal

from django import template

from halls import i18n

register = template.Library()


@register.filter
def money(value: Decimal | int | str | None, currency: str = "EUR") -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        raise TypeError("money is never a float")  # a Decimal, an int or a decimal string
    # On a page the figure and its sign stay on one line (a no-break space, as Intl.NumberFormat writes it).
    return i18n.amount(Decimal(value), currency or "EUR").replace(" ", "\u00a0")
