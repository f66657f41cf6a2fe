"""Card numbers (pure): the Luhn check digit catches every single-digit error and every swap of two
different adjacent digits except 0-9, fresh numbers are valid, and a QR payload or a printed number parse
back to the digits."""

from __future__ import annotations

import secrets

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls.cashier import cardnumber

numbers = st.integers(min_value=0, max_value=9 * 10**14 - 1).map(
    lambda n: cardnumber.new_number(lambda _bound: n)
)


@given(
    numbers, st.integers(min_value=0, max_value=cardnumber.LENGTH - 1), st.integers(min_value=1, max_value=9)
)
def test_every_single_digit_error_is_caught(number: str, position: int, shift: int) -> None:
    assert cardnumber.is_valid(number)
    wrong = number[:position] + str((int(number[position]) + shift) % 10) + number[position + 1 :]
    assert wrong != number
    assert not cardnumber.is_valid(wrong)
    with pytest.raises(cardnumber.BadNumber):
        cardnumber.parse(wrong)


def test_every_single_digit_error_of_one_number_exhaustively() -> None:
    number = cardnumber.new_number(secrets.randbelow)
    wrongs = [
        number[:i] + d + number[i + 1 :] for i in range(len(number)) for d in "0123456789" if d != number[i]
    ]
    assert len(wrongs) == 9 * cardnumber.LENGTH
    assert not any(cardnumber.is_valid(w) for w in wrongs)


@given(numbers, st.integers(min_value=0, max_value=cardnumber.LENGTH - 2))
def test_adjacent_swaps_are_caught_but_09(number: str, i: int) -> None:
    a, b = number[i], number[i + 1]
    swapped = number[:i] + b + a + number[i + 2 :]
    if a == b or {a, b} == {"0", "9"}:
        return
    assert not cardnumber.is_valid(swapped)


def test_known_luhn_numbers() -> None:
    assert cardnumber.check_digit("7992739871") == "3"  # the textbook example, 79927398713
    assert cardnumber.is_valid("4539578763621486")
    assert not cardnumber.is_valid("4539578763621487")


@given(numbers)
def test_printed_and_qr_forms_parse_back(number: str) -> None:
    assert len(number) == cardnumber.LENGTH and number[0] != "0"
    assert cardnumber.parse(number) == number
    assert cardnumber.parse(cardnumber.printed(number)) == number
    assert cardnumber.parse(cardnumber.qr_payload(number)) == number
    assert cardnumber.parse(" tj:" + number.lower() + " ") == number
    assert cardnumber.parse("-".join(cardnumber.printed(number).split())) == number


@pytest.mark.parametrize(
    "text",
    [
        "",
        "TJ:",
        "123",
        "4539 5787 6362 148",
        "4539578763621486" + "0",
        "٤٥٣٩٥٧٨٧٦٣٦٢١٤٨٦",
        "abcdabcdabcdabcd",
    ],
)
def test_what_is_not_a_number(text: str) -> None:
    with pytest.raises(cardnumber.BadNumber):
        cardnumber.parse(text)
