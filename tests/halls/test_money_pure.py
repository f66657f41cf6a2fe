"""halls.money, the pure money module: parsing, quantizing and formatting round trips, limits, and splits that
always balance. No database."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls import money

D = Decimal

amounts = st.decimals(min_value=0, max_value=D("1e14"), allow_nan=False, allow_infinity=False, places=6)
bets = st.decimals(min_value=D("0.01"), max_value=money.MAX_BET, places=2)
rates = st.decimals(min_value=0, max_value=1, places=6)


@given(amounts)
def test_parse_takes_back_what_text_writes(value: Decimal) -> None:
    assert money.parse("amount", money.text(value)) == value
    assert money.parse("amount", value) == value
    assert money.text(money.parse("amount", money.text(value))) == money.text(value)


@given(st.integers(min_value=0, max_value=10**15))
def test_an_int_is_an_exact_amount(value: int) -> None:
    assert money.parse("amount", value) == Decimal(value)
    assert money.parse("amount", value, text=False) == Decimal(value)


@pytest.mark.parametrize("value", [1.0, 0.1, True, False, None, [1], b"1.00"])
def test_floats_bools_and_others_are_refused_naming_the_field(value: object) -> None:
    with pytest.raises(money.MoneyTypeError, match=r"^seed must be") as refused:
        money.parse("seed", value)
    assert refused.value.field == "seed"
    assert isinstance(refused.value, TypeError) and isinstance(refused.value, ValueError)


@pytest.mark.parametrize(
    ("value", "kwargs", "says"),
    [
        ("abc", {}, "is not a number"),
        ("NaN", {}, "finite amount >= 0"),
        ("-Infinity", {}, "finite amount >= 0"),
        ("-0.01", {}, "finite amount >= 0"),
        ("0", {"positive": True}, "finite amount > 0"),
        ("1.001", {"places": 2}, r"multiple of 0\.01"),
        ("10.01", {"maximum": D("10")}, "above the maximum of 10"),
    ],
)
def test_bad_amounts_are_refused_naming_the_field(value: str, kwargs: dict[str, object], says: str) -> None:
    with pytest.raises(money.MoneyError, match=f"^bet .*{says}") as refused:
        money.parse("bet", value, **kwargs)  # type: ignore[arg-type]
    assert refused.value.field == "bet"


def test_the_pure_core_takes_no_text() -> None:
    with pytest.raises(money.MoneyTypeError, match="a Decimal or an int, not str"):
        money.parse("meter_amount", "1.00", text=False)


@given(bets)
def test_a_bet_is_whole_cents_up_to_the_limit(bet: Decimal) -> None:
    parsed = money.parse_bet(money.text(bet))
    assert parsed == bet and parsed.as_tuple().exponent == -2
    assert money.text(money.parse_bet(money.text(money.cents(bet)))) == money.text(money.cents(bet))


def test_the_bet_limit_is_what_a_payment_column_holds() -> None:
    assert D("999999999999.99") == money.MAX_BET
    assert len(money.MAX_BET.as_tuple().digits) == money.PAYMENT_DIGITS
    assert money.parse_bet("999999999999.99") == money.MAX_BET
    with pytest.raises(money.MoneyError, match=r"above the maximum of 999999999999\.99"):
        money.parse_bet("1000000000000.00")


@given(amounts)
def test_rounding_down_never_adds_and_loses_less_than_a_quantum(value: Decimal) -> None:
    for down, quantum in ((money.cents_down, money.CENT), (money.meter_down, money.METER_QUANTUM)):
        rounded = down(value)
        assert rounded <= value and value - rounded < quantum
        assert down(rounded) == rounded and rounded == rounded.quantize(quantum)
    assert money.text_cents(value) == money.text(money.cents_down(value))
    assert money.text(None) is None and money.text_cents(None) is None


@given(amounts)
def test_cents_is_exact_or_refuses(value: Decimal) -> None:
    if value == value.quantize(money.CENT):
        assert money.cents(value) == value
    else:
        with pytest.raises(ArithmeticError):
            money.cents(value)


def test_euros_for_people() -> None:
    assert money.euros(D("1234567.5")) == "1 234 567.50 €"
    assert money.euros(D("0")) == "0.00 €"


@given(bets, rates, rates)
def test_the_contribution_split_always_balances(bet: Decimal, rate: Decimal, reserve: Decimal) -> None:
    if rate + reserve > 1:
        reserve = 1 - rate
    split = money.split_contribution(bet, rate, reserve)
    assert split.to_meter + split.to_reserve + split.house == bet
    assert min(split) >= 0
    assert split.to_reserve == money.meter_down(split.to_reserve) and split.house == money.meter_down(
        split.house
    )
    assert split.to_meter >= bet * rate  # rounding favours the players, never the house


def test_the_split_refuses_rates_over_the_whole_bet() -> None:
    with pytest.raises(money.MoneyError, match="at most 1"):
        money.split_contribution(D("1.00"), D("0.7"), D("0.4"))


def test_the_split_in_sql_names_the_same_quantum() -> None:
    sql = money.split_sql("b", "c", "r")
    assert sql == (
        "b - trunc(b * r, 6) - trunc(b * (1 - c - r), 6), trunc(b * r, 6), trunc(b * (1 - c - r), 6)"
    )
    assert f", {money.METER_PLACES})" in sql


@given(amounts, st.integers(min_value=1, max_value=500))
def test_shares_and_remainder_add_up_to_the_amount(amount: Decimal, parts: int) -> None:
    share, remainder = money.share_cents(amount, parts)
    assert share * parts + remainder == amount
    assert share == share.quantize(money.CENT) and 0 <= remainder < parts * money.CENT


@given(amounts, amounts, st.none() | amounts)
def test_a_meter_never_grows_past_its_ceiling(
    amount: Decimal, offered: Decimal, ceiling: Decimal | None
) -> None:
    added = money.under_ceiling(amount, offered, ceiling)
    assert 0 <= added <= offered
    if ceiling is None:
        assert added == offered
    else:
        assert amount + added <= max(amount, ceiling)
        assert added == offered or amount + added == max(amount, ceiling)  # all of it, or up to the ceiling


@pytest.mark.parametrize(
    ("amount", "language", "exact", "shown"),
    [
        ("1234.56", "es", False, "1.234,56\u00a0€"),
        ("1234.56", "en", False, "€1,234.56"),
        ("5", "es", False, "5,00\u00a0€"),
        ("0.009", "es", False, "0,00\u00a0€"),  # to the cent, rounded down as payments are
        ("-12.5", "es", False, "-12,50\u00a0€"),
        ("1234567.891", "en", False, "€1,234,567.89"),
        ("0.000000", "es", True, "0,00\u00a0€"),  # a meter's empty remainder is money, not "0,000000"
        ("0.002000", "es", True, "0,002\u00a0€"),  # the sub-cent fraction a meter keeps, exactly
        ("1234.000125", "en", True, "€1,234.000125"),
    ],
)
def test_an_amount_for_people_carries_its_currency_in_the_page_language(
    amount: str, language: str, exact: bool, shown: str
) -> None:
    assert money.for_people(Decimal(amount), language=language, exact=exact) == shown


def test_another_currency_is_named_by_its_code() -> None:
    assert money.for_people(Decimal("3"), language="es", currency="USD") == "3,00\u00a0USD"
    assert money.for_people(Decimal("3"), language="en", currency="USD") == "USD\u00a03.00"
