"""halls.money, the pure money module: parsing, quantizing and formatting round trips, limits, and splits that
always balance. No database."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

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


def test_signed_takes_amounts_below_zero_with_the_same_other_rules() -> None:
    assert money.parse("delta", "-12.345678", signed=True) == D("-12.345678")
    assert money.parse("delta", -3, signed=True, places=2) == D(-3)
    with pytest.raises(money.MoneyError, match=r"^delta must be a finite amount, got -Infinity"):
        money.parse("delta", "-Infinity", signed=True)
    with pytest.raises(money.MoneyError, match=r"^delta must be a multiple of 0\.01"):
        money.parse("delta", "-1.001", signed=True, places=2)
    with pytest.raises(money.MoneyTypeError):
        money.parse("delta", -1.5, signed=True)
    with pytest.raises(money.NotAnAmount):
        money.parse("delta", "minus one", signed=True)


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


def test_parse_lets_a_negative_through_only_when_signed() -> None:
    assert money.parse("amount", "-5.25", places=2, signed=True) == D("-5.25")
    with pytest.raises(money.MoneyError, match="amount must be a finite amount >= 0"):
        money.parse("amount", "-5.25", places=2)
    with pytest.raises(money.MoneyError, match=r"multiple of 0\.01"):
        money.parse("amount", "-5.255", places=2, signed=True)
    with pytest.raises(money.MoneyError, match="finite"):
        money.parse("amount", "-Infinity", signed=True)
    with pytest.raises(money.MoneyError, match="> 0"):
        money.parse("amount", "-1", signed=True, positive=True)


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


# --- percentages ----------------------------------------------------------------------------------------

percents = st.decimals(min_value=0, max_value=100, places=money.PERCENT_PLACES)


@given(percents)
def test_a_rate_is_the_exact_hundredth_of_its_percent(percent: Decimal) -> None:
    rate = money.rate(percent)
    assert rate * 100 == percent  # exact: nothing rounded
    assert rate.as_tuple().exponent == -money.RATE_PLACES  # at the scale the rate columns keep
    assert 0 <= rate <= 1


@given(st.integers(min_value=0, max_value=100))
def test_a_whole_percent_is_a_rate(percent: int) -> None:
    assert money.rate(percent) == Decimal(percent) / 100


@given(percents, percents)
def test_rates_keep_the_order_and_the_sum_of_their_percents(a: Decimal, b: Decimal) -> None:
    assert (money.rate(a) < money.rate(b)) == (a < b)
    if a + b <= 100:
        assert money.rate(a) + money.rate(b) == money.rate(a + b)


@given(
    st.decimals(min_value=0, max_value=100, places=money.PERCENT_PLACES + 3).filter(
        lambda p: p != p.quantize(Decimal(1).scaleb(-money.PERCENT_PLACES))
    )
)
def test_a_percent_finer_than_the_rate_columns_is_refused_not_rounded(percent: Decimal) -> None:
    with pytest.raises(money.MoneyError, match=r"^funding_percent must be a multiple of 0\.0001") as refused:
        money.rate(percent, name="funding_percent")
    assert refused.value.field == "funding_percent"


@pytest.mark.parametrize(
    ("percent", "says"),
    [
        (D("100.01"), "above the maximum of 100"),
        (D("-1"), "must be a finite amount >= 0"),
        (D("NaN"), "must be a finite amount >= 0"),
        ("5", "must be a Decimal or an int"),
        (5.0, "must be a Decimal or an int"),
    ],
)
def test_a_percent_out_of_range_or_not_exact_is_refused(percent: object, says: str) -> None:
    with pytest.raises(money.MoneyError, match=says):
        money.rate(percent)  # type: ignore[arg-type]


@given(amounts, percents)
def test_a_percent_of_an_amount_is_exact(amount: Decimal, percent: Decimal) -> None:
    part = money.percent_of(amount, percent)
    assert part * 100 == amount * percent
    assert part == amount * money.rate(percent)
    assert 0 <= part <= amount


@given(
    st.integers(min_value=0, max_value=10**14).map(lambda c: D(c).scaleb(-2)),
    st.integers(min_value=1, max_value=10**14).map(lambda c: D(c).scaleb(-2)),
)
def test_a_return_percent_is_the_ratio_rounded_once_half_up(paid: Decimal, played: Decimal) -> None:
    shown = money.return_percent(paid, played)
    assert shown is not None and shown.as_tuple().exponent == -2
    exact = Fraction(paid) * 100 / Fraction(played)
    assert abs(Fraction(shown) - exact) <= Fraction(1, 200)  # within half a hundredth
    if abs(Fraction(shown) - exact) == Fraction(1, 200):
        assert Fraction(shown) > exact  # a half goes up


def test_a_return_percent_of_nothing_played_is_none_and_halves_go_up() -> None:
    assert money.return_percent(D("5"), D("0")) is None
    assert money.return_percent(D("1"), D("3")) == D("33.33")
    assert money.return_percent(D("2"), D("3")) == D("66.67")
    assert money.return_percent(D("0.01"), D("80")) == D("0.01")  # 0.0125 % -> 0.01
    assert money.return_percent(D("0.01"), D("40")) == D("0.03")  # 0.025 % -> 0.03, half up


# --- for a person ---------------------------------------------------------------------------------------

shown_amounts = st.decimals(min_value=0, max_value=D("1e14"), places=2)


@pytest.mark.parametrize(
    ("value", "language", "currency", "text"),
    [
        (D("1234.56"), "es", "EUR", "1.234,56 €"),
        (D("1234.56"), "en", "EUR", "€1,234.56"),
        (D("1234.56"), "es-es", "EUR", "1.234,56 €"),
        (D("1234567.8"), "es", "EUR", "1.234.567,80 €"),
        (D("1234567.8"), "en-us", "EUR", "€1,234,567.80"),
        (D("0"), "es", "EUR", "0,00 €"),
        (D("5"), "en", "EUR", "€5.00"),
        (D("-3.5"), "es", "EUR", "-3,50 €"),
        (D("-3.5"), "en", "EUR", "-€3.50"),
        (D("12.349999"), "es", "EUR", "12,34 €"),  # toward zero: a shown amount is never rounded up
        (D("-0.004"), "es", "EUR", "0,00 €"),  # no "-0,00"
        (D("50"), "es", "USD", "50,00 USD"),
        (D("50"), "en", "USD", "USD 50.00"),
    ],
)
def test_an_amount_for_a_person_in_their_language(
    value: Decimal, language: str, currency: str, text: str
) -> None:
    assert money.for_person(value, language, currency) == text


@given(shown_amounts)
def test_what_a_person_is_shown_reads_back_as_typed(value: Decimal) -> None:
    """The page's reader (parse_typed, HallFormat.parseAmount's rules) takes back what for_person writes."""
    assert money.parse_typed(money.for_person(value, "es"), decimal_mark=",") == value
    assert money.parse_typed(money.for_person(value, "en"), decimal_mark=".") == value


@given(shown_amounts)
def test_a_form_box_is_filled_as_a_person_types_and_reads_back(value: Decimal) -> None:
    """A pre-filled box (for_typing: the figure alone, ungrouped, the page's decimal mark) reads back."""
    es, en = money.for_typing(value, "es"), money.for_typing(value, "en")
    assert money.parse_typed(es, decimal_mark=",") == value
    assert money.parse_typed(en, decimal_mark=".") == value
    assert "." not in es and "," not in en and "€" not in es + en


def test_a_form_box_shows_the_figure_in_the_page_language() -> None:
    assert money.for_typing(Decimal("5000"), "es") == "5000,00"
    assert money.for_typing(Decimal("1.00"), "es-es") == "1,00"
    assert money.for_typing(Decimal("5000.00"), "en") == "5000.00"
    assert money.for_typing(Decimal("0.019"), None) == "0,01"  # the cent toward zero; no language: Spanish


@given(amounts)
def test_a_person_is_shown_the_cents_rounded_down(value: Decimal) -> None:
    es, en = money.for_person(value, "es"), money.for_person(value, "en")
    assert money.parse_typed(es, decimal_mark=",") == money.cents_down(value)
    assert es.endswith(" €") and en.startswith("€")
    assert es.replace(".", "").replace(",", ".").removesuffix(" €") == en.replace(",", "").removeprefix("€")


@pytest.mark.parametrize(
    ("amount", "language", "exact", "shown"),
    [
        ("1234.56", "es", False, "1.234,56 €"),
        ("1234.56", "en", False, "€1,234.56"),
        ("5", "es", False, "5,00 €"),
        ("0.009", "es", False, "0,00 €"),  # to the cent, rounded down as payments are
        ("-12.5", "es", False, "-12,50 €"),
        ("1234567.891", "en", False, "€1,234,567.89"),
        ("0.000000", "es", True, "0,00 €"),  # a meter's empty remainder is money, not "0,000000"
        ("0.002000", "es", True, "0,002 €"),  # the sub-cent fraction a meter keeps, exactly
        ("1234.000125", "en", True, "€1,234.000125"),
    ],
)
def test_an_amount_for_a_person_carries_its_currency_in_the_page_language(
    amount: str, language: str, exact: bool, shown: str
) -> None:
    assert money.for_person(Decimal(amount), language, exact=exact) == shown


def test_another_currency_is_named_by_its_code() -> None:
    assert money.for_person(Decimal("3"), "es", "USD") == "3,00 USD"
    assert money.for_person(Decimal("3"), "en", "USD") == "USD 3.00"
