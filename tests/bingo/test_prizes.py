"""Prize arithmetic: exact Decimal cents, rounded down, remainders recorded (no Django)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bingo.prizes import PrizeAmount, prize_from_sales, split_equally
from halls.money import cents_down

D = Decimal
money = st.decimals(min_value=0, max_value=10**9, places=2, allow_nan=False, allow_infinity=False)
# Amounts with sub-cent digits, e.g. a prize plus a carried residue.
fine_money = st.decimals(min_value=0, max_value=10**9, places=7, allow_nan=False, allow_infinity=False)
percents = st.decimals(min_value=0, max_value=100, places=2, allow_nan=False, allow_infinity=False)


def test_quantize_cents_rounds_down() -> None:
    assert cents_down(D("1.239")) == D("1.23")
    assert cents_down(D("0.009")) == D("0.00")
    assert cents_down(D("5")) == D("5.00")
    assert str(cents_down(D("5"))) == "5.00"


def test_prize_from_sales_example() -> None:
    assert prize_from_sales(D("1234.57"), D("62.5")) == PrizeAmount(amount=D("771.60"), residue=D("0.00625"))
    assert prize_from_sales(D("0"), D("10")) == PrizeAmount(amount=D("0.00"), residue=D("0"))


@given(money, percents)
def test_prize_from_sales_is_exact(sales: Decimal, percent: Decimal) -> None:
    prize = prize_from_sales(sales, percent)
    assert prize.amount + prize.residue == sales * percent / 100
    assert prize.amount == cents_down(prize.amount)
    assert D(0) <= prize.residue < D("0.01")


def test_prize_from_sales_rejects_bad_input() -> None:
    with pytest.raises(TypeError):
        prize_from_sales(100.0, D("50"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="percent"):
        prize_from_sales(D("100"), D("100.01"))
    with pytest.raises(ValueError, match="sales_total"):
        prize_from_sales(D("-1"), D("50"))


def test_split_example() -> None:
    split = split_equally(D("100.00"), ["ana", "luis", "marta"])
    assert split.shares == {"ana": D("33.33"), "luis": D("33.33"), "marta": D("33.33")}
    assert split.share == D("33.33")
    assert split.remainder == D("0.01")


def test_single_winner_takes_whole_cents() -> None:
    split = split_equally(D("10.005"), [42])
    assert split.shares == {42: D("10.00")}
    assert split.remainder == D("0.005")


@given(st.one_of(money, fine_money), st.lists(st.integers(), min_size=1, max_size=60, unique=True))
def test_split_properties(amount: Decimal, winners: list[int]) -> None:
    split = split_equally(amount, winners)
    assert list(split.shares) == winners
    assert len(set(split.shares.values())) == 1
    assert sum(split.shares.values(), D(0)) + split.remainder == amount
    assert D(0) <= split.remainder < D("0.01") * len(winners)
    assert all(share == cents_down(share) for share in split.shares.values())


def test_split_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="no winners"):
        split_equally(D("10"), [])
    with pytest.raises(ValueError, match="amount"):
        split_equally(D("-0.01"), [1])
    with pytest.raises(ValueError, match="distinct"):
        split_equally(D("10"), [1, 1])
    with pytest.raises(TypeError):
        split_equally(10.0, [1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        split_equally(D("NaN"), [1])
