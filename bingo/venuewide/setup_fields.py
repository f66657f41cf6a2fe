"""The setup page's form fields (bingo.venuewide.setup_views, bingo.venuewide.setup_casino): read from the
POST, each refusal a
DomainError naming the field, so the page shows it and writes nothing."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from halls import errors, money
from halls.models import Venue


def text(request: HttpRequest, name: str) -> str:
    return str(request.POST.get(name, "")).strip()


def whole(request: HttpRequest, name: str, label: str) -> int:
    value = text(request, name)
    if not value.lstrip("-").isdigit():
        raise errors.InvalidInput(
            _("%(field)s must be a whole number.") % {"field": label}, code="bad_number"
        )
    return int(value)


def decimal(request: HttpRequest, name: str, label: str) -> Decimal:
    try:
        value = Decimal(text(request, name).replace(",", "."))
    except InvalidOperation as exc:
        raise errors.InvalidInput(
            _("%(field)s must be a number.") % {"field": label}, code="bad_number"
        ) from exc
    if not value.is_finite():
        raise errors.InvalidInput(_("%(field)s must be a number.") % {"field": label}, code="bad_number")
    return value


def rate(request: HttpRequest, name: str, label: str) -> Decimal:
    """A percentage typed on the page ("70", "2,5") as the pool engine's rate (halls.money.rate: 0.70,
    0.025), refused naming the field when it is not a percentage from 0 to 100 with at most 4 decimals."""
    percent = decimal(request, name, label)
    try:
        return money.rate(percent, name=name)
    except money.MoneyError:
        raise errors.InvalidInput(
            _("%(field)s must be a percentage from 0 to 100 with at most %(places)s decimals.")
            % {"field": label, "places": money.PERCENT_PLACES},
            code="bad_percent",
            field=name,
        ) from None


def amount(request: HttpRequest, name: str, label: str) -> Decimal:
    """A money field as typed on the page ("1.234,56", "1234,56", "12,5": halls.money.parse_typed, the rules
    of the pages' HallFormat.parseAmount), refused saying how to write it when malformed or ambiguous."""
    typed = text(request, name)
    mark = "," if (get_language() or "es").startswith("es") else "."
    value = money.parse_typed(typed, decimal_mark=mark)
    if value is None:
        example = "1.234,50" if mark == "," else "1,234.50"
        raise errors.InvalidInput(
            _("%(field)s: “%(typed)s” is not an amount; type euros and cents, like %(example)s.")
            % {"field": label, "typed": typed, "example": example},
            code="bad_amount",
            field=name,
        )
    return value


def one(venues: list[Venue], request: HttpRequest, model: Any, name: str, label: str, path: str) -> Any:
    """The object named by the field, among the operator's venues' (404 otherwise)."""
    value = text(request, name)
    ids = [v.pk for v in venues]
    found = model.objects.filter(pk=int(value), **{f"{path}__in": ids}).first() if value.isdigit() else None
    if found is None:
        raise errors.NotFound(
            _("No %(what)s %(id)s in your venues.") % {"what": label, "id": value}, code="unknown"
        )
    return found


def venue(request: HttpRequest, venues: list[Venue]) -> Venue:
    return one(venues, request, Venue, "venue", _("venue"), "pk")  # type: ignore[no-any-return]


def user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)
    return request.user
