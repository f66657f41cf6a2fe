"""jackpots.services.amounts: a caller's amount read through halls.money.parse, refused in the pool
services' own words with the caller's code. No database."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import translation

from halls.errors import InvalidInput
from jackpots.services.amounts import as_decimal

D = Decimal


@pytest.mark.parametrize(
    ("value", "expected"),
    [(D("0.05"), D("0.05")), ("-12.5", D("-12.5")), (-3, D(-3)), (" 7.25 ", D("7.25")), ("0", D(0))],
)
def test_a_finite_amount_of_either_sign_is_taken(value: object, expected: Decimal) -> None:
    assert as_decimal("amount_delta", value, code="bad_amount") == expected


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (0.5, "must be an exact amount (Decimal or string), not 0.5."),
        (True, "must be an exact amount (Decimal or string), not True."),
        (None, "must be an exact amount (Decimal or string), not None."),
        ("abc", "'abc' is not a number."),
        ("Infinity", "'Infinity' is not a finite amount."),
        (D("NaN"), "Decimal('NaN') is not a finite amount."),
    ],
)
def test_what_is_no_amount_is_refused_with_the_callers_code(value: object, says: str) -> None:
    with translation.override("en"), pytest.raises(InvalidInput) as refused:
        as_decimal("contribution_rate", value, code="bad_rate")
    assert refused.value.code == "bad_rate"
    assert refused.value.message == f"contribution_rate {says}"


def test_the_refusal_is_spanish_in_a_spanish_venue() -> None:
    with translation.override("es"), pytest.raises(InvalidInput) as refused:
        as_decimal("percent", "cien", code="bad_percent")
    assert refused.value.message == "percent 'cien' no es un número."
