"""halls.tax.compute, the pure core of the gaming-tax returns: the bases add up over the sources' parts, the
amount due is rate × base rounded as stated (the remainder recorded), a fixed fee counts the machines of
the period, a game type with figures and no rate blocks the return, periods and the CSV. No database."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls import money
from halls.tax import compute
from halls.tax.compute import Figures, MissingRates, Rate

D = Decimal
GAME_TYPES = ("traditional", "electronic", "machine_b", "machine_c", "tables")
cents = st.decimals(min_value=0, max_value=D("10000000"), places=2)
percents = st.decimals(min_value=0, max_value=100, places=4)
fees = st.decimals(min_value=0, max_value=D("5000"), places=2)


@st.composite
def parts(draw: st.DrawFn) -> list[Figures]:
    """What several sources report: game types may come in several parts."""
    return draw(
        st.lists(
            st.builds(
                Figures,
                game_type=st.sampled_from(GAME_TYPES),
                played=cents,
                prizes=cents,
                drop=cents,
                machines=st.integers(min_value=0, max_value=400),
            ),
            max_size=12,
        )
    )


@st.composite
def tables(draw: st.DrawFn) -> list[Rate]:
    rates = []
    for game_type in GAME_TYPES:
        basis = draw(st.sampled_from(compute.BASES))
        if basis == "machines":
            rates.append(Rate(game_type, basis, None, draw(fees)))
            continue
        percent = draw(percents)
        fee = draw(st.none() | fees)
        rates.append(Rate(game_type, basis, percent, fee))
    return rates


@given(parts(), tables(), st.sampled_from(compute.ROUNDINGS))
def test_the_bases_add_up_and_the_total_is_the_sum_of_the_lines(found, rates, rounding) -> None:
    result = compute.compute(found, rates, rounding)
    assert [line.game_type for line in result.lines] == sorted(GAME_TYPES)
    for line in result.lines:
        mine = [f for f in found if f.game_type == line.game_type]
        assert line.played == sum((f.played for f in mine), D(0))
        assert line.prizes == sum((f.prizes for f in mine), D(0))
        assert line.drop == sum((f.drop for f in mine), D(0))
        assert line.machines == sum(f.machines for f in mine)
    assert result.total == sum((line.due for line in result.lines), D(0))
    assert result.total == money.cents(result.total)


@given(parts(), tables(), st.sampled_from(compute.ROUNDINGS))
def test_the_amount_due_is_rate_times_base_rounded_as_stated_plus_the_fees(found, rates, rounding) -> None:
    by_type = {r.game_type: r for r in rates}
    for line in compute.compute(found, rates, rounding).lines:
        rate = by_type[line.game_type]
        expected_base = {
            "sales": line.played,
            "net": max(D(0), line.played - line.prizes),
            "drop": line.drop,
            "machines": D(0),
        }[rate.basis]
        assert line.base == expected_base >= 0
        exact = line.base * (rate.percent or 0) / 100
        assert line.exact == exact
        assert line.rated + line.remainder == exact  # nothing lost: the remainder is recorded
        if rounding == "half_up":
            assert abs(line.remainder) <= D("0.005")
            assert line.rated == exact.quantize(D("0.01"), rounding="ROUND_HALF_UP")
        else:
            assert D(0) <= line.remainder < D("0.01")
        assert line.fees == (rate.fee or 0) * line.machines  # a fixed fee counts the period's machines
        assert line.due == line.rated + line.fees


@given(parts(), tables())
def test_the_same_figures_give_the_same_return_and_csv_to_the_byte(found, rates) -> None:
    head = {"venue": "ML-B-0001", "period": "2026-11"}
    first = compute.compute(found, rates, "half_up")
    again = compute.compute(list(reversed(found)), list(reversed(rates)), "half_up")
    assert first == again
    assert compute.csv_text(head, first) == compute.csv_text(head, again)
    assert compute.digest(compute.csv_text(head, first)) == compute.digest(compute.csv_text(head, again))


@given(parts())
def test_a_game_type_with_figures_and_no_rate_blocks_and_one_without_does_not(found) -> None:
    rates = [Rate("traditional", "sales", D("20"))]
    active = sorted({f.game_type for f in found if f.active} - {"traditional"})
    if active:
        with pytest.raises(MissingRates) as blocked:
            compute.compute(found, rates, "half_up")
        assert list(blocked.value.game_types) == active
    else:
        assert [line.game_type for line in compute.compute(found, rates, "half_up").lines] == ["traditional"]


def test_a_month_by_hand() -> None:
    found = [
        Figures("traditional", played=D("60.00"), prizes=D("36.00")),
        Figures("traditional", played=D("1234.00"), prizes=D("800.00")),
        Figures("electronic", played=D("333.33"), prizes=D("210.00")),
        Figures("machine_b", machines=3),
        Figures("machine_c", played=D("333.33"), prizes=D("310.00"), machines=2),
    ]
    rates = [
        Rate("traditional", "sales", D("20")),
        Rate("electronic", "net", D("15")),
        Rate("machine_b", "machines", None, D("45.00")),
        Rate("machine_c", "net", D("12.5"), D("10.00")),
    ]
    result = compute.compute(found, rates, "half_up")
    lines = {line.game_type: line for line in result.lines}
    # Traditional: 1,294.00 of cards at face value × 20 % = 258.80.
    assert (lines["traditional"].base, lines["traditional"].due) == (D("1294.00"), D("258.80"))
    # Electronic: (333.33 - 210.00) × 15 % = 18.4995 → 18.50 (half up), 0.0005 left by the rounding.
    assert (lines["electronic"].base, lines["electronic"].exact) == (D("123.33"), D("18.4995"))
    assert (lines["electronic"].due, lines["electronic"].remainder) == (D("18.50"), D("-0.0005"))
    # Type B: 3 machines × 45.00 = 135.00, no money base.
    assert (lines["machine_b"].base, lines["machine_b"].due) == (D("0"), D("135.00"))
    # Type C: (333.33 - 310.00) × 12.5 % = 2.91625 → 2.92, plus 2 × 10.00.
    assert (lines["machine_c"].rated, lines["machine_c"].fees, lines["machine_c"].due) == (
        D("2.92"),
        D("20.00"),
        D("22.92"),
    )
    assert result.total == D("435.22")
    down = {line.game_type: line for line in compute.compute(found, rates, "down").lines}
    assert (down["electronic"].due, down["machine_c"].due) == (D("18.49"), D("22.91"))


def test_net_prizes_above_the_bets_make_a_base_of_zero() -> None:
    [line] = compute.compute(
        [Figures("electronic", played=D("100.00"), prizes=D("150.00"))],
        [Rate("electronic", "net", D("15"))],
        "half_up",
    ).lines
    assert (line.base, line.due) == (D("0"), D("0.00"))


@given(st.sampled_from(compute.PERIODS), st.dates(min_value=date(2000, 1, 1), max_value=date(2999, 12, 31)))
def test_a_period_holds_its_day_and_its_label_names_it(kind, day) -> None:
    period = compute.period_of(kind, day)
    assert period.first <= day <= period.last
    assert period.after == period.last + timedelta(days=1)
    assert period.first.day == 1 and period.after.day == 1
    assert compute.parse_period(period.label, kind) == period
    assert compute.parse_period(period.label.lower(), kind) == period


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("2026-13", "month"),
        ("2026-Q4", "month"),
        ("2026-11", "quarter"),
        ("2026-Q5", "quarter"),
        ("", "month"),
    ],
)
def test_a_period_of_the_wrong_shape_is_refused(label, kind) -> None:
    with pytest.raises(compute.PeriodError):
        compute.parse_period(label, kind)


def test_the_csv_says_the_period_the_rates_and_the_total_in_plain_numbers() -> None:
    result = compute.compute(
        [Figures("machine_c", played=D("333.33"), prizes=D("310.00"), machines=2)],
        [Rate("machine_c", "net", D("12.5"), D("10.00"))],
        "half_up",
    )
    text = compute.csv_text({"venue": "ML-B-0001", "period": "2026-11"}, result)
    assert text.splitlines() == [
        "format,hall-tax-return/v1",
        "venue,ML-B-0001",
        "period,2026-11",
        "rounding,half_up",
        "",
        ",".join(compute.COLUMNS),
        "machine_c,net,333.33,310.00,0.00,2,23.33,12.5,10.00,2.91625,2.92,20.00,22.92,-0.00375",
        "total,,,,,,,,,,,,22.92,",
    ]
    assert compute.digest(text) == compute.digest(text) != compute.digest(text.replace("22.92", "22.93"))
