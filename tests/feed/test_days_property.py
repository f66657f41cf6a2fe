"""The feed's periodic reports are due once each (pure: halls.feed.days, machines.meterdays)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halls.feed import days
from machines.meterdays import Meters, day_figures


@given(
    start=st.integers(min_value=0, max_value=10**9),
    interval=st.integers(min_value=1, max_value=3600),
    tick=st.integers(min_value=1, max_value=120),
    ticks=st.integers(min_value=1, max_value=400),
)
def test_each_intervals_end_is_reported_by_exactly_one_tick(
    start: int, interval: int, tick: int, ticks: int
) -> None:
    """Ticks every `tick` seconds report each interval's end that falls in their span exactly once (when the
    beat is slower than the interval, every tick reports)."""
    moments = [start + n * tick for n in range(1, ticks + 1)]
    reported = [m for m in moments if days.interval_ended(m, interval, tick)]
    if tick >= interval:
        assert reported == moments
        return
    ends = [k * interval for k in range(start // interval + 1, moments[-1] // interval + 1)]
    assert len(reported) == len(ends)
    for moment, end in zip(reported, ends, strict=True):
        assert moment - tick < end <= moment


def test_an_interval_and_a_tick_are_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        days.interval_ended(10.0, 0, 10)


@given(
    today=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1)),
    back=st.integers(min_value=0, max_value=30),
    done=st.sets(st.integers(min_value=-40, max_value=5)),
)
def test_the_days_due_are_the_ended_days_not_reported(today: date, back: int, done: set[int]) -> None:
    reported = {today + timedelta(days=n) for n in done}
    due = days.days_due(today, reported, back)
    window = [today - timedelta(days=n) for n in range(back, 0, -1)]
    assert due == [d for d in window if d not in reported]
    assert all(d < today for d in due)
    assert days.days_due(today, reported | set(due), back) == []  # reported once, never again


money = st.decimals(min_value=0, max_value=10**9, places=2)


@st.composite
def meters(draw: st.DrawFn) -> Meters:
    return Meters(draw(money), draw(money), draw(money), draw(st.integers(min_value=0, max_value=10**9)))


def grown(m: Meters, by: Meters) -> Meters:
    return m + by


@given(a=meters(), first=meters(), second=meters())
def test_a_days_growth_adds_up_over_days_and_is_never_negative(
    a: Meters, first: Meters, second: Meters
) -> None:
    b, c = grown(a, first), grown(grown(a, first), second)
    assert day_figures(a, b) == first
    assert day_figures(a, b) + day_figures(b, c) == day_figures(a, c)
    assert day_figures(None, a) == a  # a machine's first day counts from zero
    assert day_figures(a, None) == Meters()
    for value in (day_figures(b, a), day_figures(c, a)):  # a meter that went down (memory cleared)
        assert min(value.coin_in, value.coin_out, value.jackpots) >= Decimal(0) and value.games >= 0
