"""Reading a venue's message at the central: every field checked, a bad one refused (InvalidInput
``bad_payload``), never trusted; and the cards a result names checked against the game's sold cards."""

from __future__ import annotations

from bisect import bisect_right
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _

from halls import money
from halls.errors import InvalidInput


def bad(field: str) -> InvalidInput:
    return InvalidInput(
        _("The message's field “%(field)s” is missing or wrong.") % {"field": field}, code="bad_payload"
    )


def text(payload: dict[str, Any], field: str, *, max_length: int = 60) -> str:
    value = payload.get(field)
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise bad(field)
    return value.strip()


def integer(payload: dict[str, Any], field: str, *, low: int = 0, high: int = 2**62) -> int:
    value = payload.get(field)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise bad(field)
    return value


def amount(payload: dict[str, Any], field: str, *, places: int) -> Decimal:
    """A payload's amount: a decimal string >= 0 with at most `places` decimals (halls.money.parse)."""
    value = payload.get(field)
    if not isinstance(value, str):
        raise bad(field)
    try:
        return money.parse(field, value, places=places)
    except money.MoneyError:
        raise bad(field) from None


def sales(payload: dict[str, Any]) -> Decimal:
    found = amount(payload, "sales", places=money.CENT_PLACES)
    if found <= 0 or found > money.MAX_BET:
        raise bad("sales")
    return found


def sold_ranges(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """[{series, ranges: [[first, last], ...]}], checked; the cards the game sold."""
    found = payload.get("sold")
    if not isinstance(found, list) or not found:
        raise bad("sold")
    checked = []
    for item in found:
        if not isinstance(item, dict):
            raise bad("sold")
        series = text(item, "series", max_length=20)
        ranges = item.get("ranges")
        if not isinstance(ranges, list) or not ranges:
            raise bad("sold")
        pairs = []
        for pair in ranges:
            ok = isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair)
            if not ok or not 1 <= pair[0] <= pair[1]:
                raise bad("sold")
            pairs.append([pair[0], pair[1]])
        checked.append({"series": series, "ranges": pairs})
    return checked


def cards_in(sold: list[dict[str, Any]]) -> int:
    return sum(last - first + 1 for item in sold for first, last in item["ranges"])


def card_label(series: str, serial: int) -> str:
    """A card as the halls' cashiers read it: "A-0345" (bingo.traditional.services.claims.card_label)."""
    return f"{series}-{serial:04d}"


def _card(label: Any) -> tuple[str, int]:
    if not isinstance(label, str) or "-" not in label or len(label) > 30:
        raise bad("cards")
    series, _sep, serial = label.rpartition("-")
    if not series or not serial.isdigit():
        raise bad("cards")
    return series, int(serial)


def winning_cards(payload: dict[str, Any], sold: list[dict[str, Any]]) -> list[str]:
    """The result's cards, each one the game sold (else refused ``card_not_sold``), none twice. No other
    bound: a Gran Línea may fall on a great many cards of one hall at one ball, and every one of them
    shares (AB-05, TB-11); a result is never cut short (at most the cards sold, which it is checked in)."""
    found = payload.get("cards", [])
    if not isinstance(found, list) or len(set(map(str, found))) != len(found):
        raise bad("cards")
    if len(found) > cards_in(sold):
        raise bad("cards")
    starts: dict[str, list[tuple[int, int]]] = {}
    for item in sold:
        starts.setdefault(item["series"], []).extend((first, last) for first, last in item["ranges"])
    for series, pairs in starts.items():
        merged: list[tuple[int, int]] = []
        for first, last in sorted(pairs):
            if merged and first <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], last))
            else:
                merged.append((first, last))
        starts[series] = merged
    cards = []
    for label in found:
        series, serial = _card(label)
        pairs = starts.get(series, [])
        at = bisect_right(pairs, (serial, 2**63)) - 1  # the last range starting at or before it
        if at < 0 or not pairs[at][0] <= serial <= pairs[at][1]:
            raise InvalidInput(
                _("Card %(card)s is not one of the cards the game sold.") % {"card": label},
                code="card_not_sold",
                card=label,
            )
        cards.append(card_label(series, serial))
    return cards
