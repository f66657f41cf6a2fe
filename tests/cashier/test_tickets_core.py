"""The validation number and its barcode (halls.cashier.tito): pure, property-tested."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls.cashier import tito

numbers = st.integers(min_value=0, max_value=10**17 - 1).map(lambda n: tito.new_number(lambda _: n))


@given(numbers)
def test_a_new_number_is_18_digits_that_check(number: str) -> None:
    assert len(number) == 18 and number.isdigit()
    assert tito.is_valid(number)


@given(numbers, st.integers(min_value=0, max_value=17), st.integers(min_value=1, max_value=9))
def test_one_mistyped_digit_is_caught(number: str, at: int, shift: int) -> None:
    wrong = number[:at] + str((int(number[at]) + shift) % 10) + number[at + 1 :]
    assert not tito.is_valid(wrong)


@given(numbers, st.integers(min_value=0, max_value=16))
def test_two_swapped_neighbours_are_caught_unless_equal_or_09(number: str, at: int) -> None:
    a, b = number[at], number[at + 1]
    swapped = number[:at] + b + a + number[at + 2 :]
    if a == b or {a, b} == {"0", "9"}:  # Luhn's one blind spot
        return
    assert not tito.is_valid(swapped)


@given(numbers)
def test_the_printed_groups_read_back_to_the_number(number: str) -> None:
    shown = tito.grouped(number)
    assert [len(g) for g in shown.split("-")] == [2, 4, 4, 4, 4]
    assert tito.normalise(shown) == number
    assert tito.normalise(" ".join(shown.split("-"))) == number


@given(numbers)
def test_the_itf_barcode_reads_back_to_the_number(number: str) -> None:
    widths = tito.itf_widths(number)
    assert len(widths) == 4 + 9 * 10 + 3
    assert set(widths) == {1, tito.WIDE}
    assert tito.itf_read(widths) == number


def test_itf_matches_a_known_symbol_and_refuses_odd_counts() -> None:
    # "12": 1 = WNNNW as bars, 2 = NWNNW as spaces, between the start NNNN and the stop WNN.
    assert tito.itf_widths("12") == [1, 1, 1, 1, 3, 1, 1, 3, 1, 1, 1, 1, 3, 3, 3, 1, 1]
    with pytest.raises(ValueError, match="even count"):
        tito.itf_widths("123")
    with pytest.raises(ValueError, match="even count"):
        tito.itf_widths("12a4")


def test_numbers_are_random_and_bad_ones_are_refused() -> None:
    drawn = {tito.new_number() for _ in range(1000)}
    assert len(drawn) == 1000
    assert not tito.is_valid("12345")
    assert not tito.is_valid("١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨")  # digits, but not ASCII ones
    rng = random.Random(7)
    number = tito.new_number(rng.randrange)
    assert tito.is_valid(number)
