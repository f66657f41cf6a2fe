"""The limits' pure core: periods are the venue's local day, ISO week and calendar month; a lower limit
applies at once and a raise only after its cooling-off; a second raise waits for the first; the reality
checks come due every interval."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from halls.cashier import limits as core
from halls.cashier.limits import LimitKind, Outcome, Period, Setting, Used

MADRID = ZoneInfo("Europe/Madrid")
COOLING = timedelta(hours=72)
D = Decimal

amounts = st.one_of(st.none(), st.integers(1, 100_000).map(lambda c: D(c) / 100))
instants = st.datetimes(
    min_value=datetime(2024, 1, 1),  # noqa: DTZ001  (hypothesis bounds are naive; the zone is given)
    max_value=datetime(2030, 12, 31),  # noqa: DTZ001
    timezones=st.just(MADRID),
)


def test_periods_are_the_local_day_the_iso_week_and_the_month() -> None:
    at = datetime(2026, 12, 6, 23, 30, tzinfo=MADRID)  # a Sunday
    assert core.period_bounds(Period.DAY, at) == (
        datetime(2026, 12, 6, tzinfo=MADRID),
        datetime(2026, 12, 7, tzinfo=MADRID),
    )
    assert core.period_bounds(Period.WEEK, at) == (
        datetime(2026, 11, 30, tzinfo=MADRID),
        datetime(2026, 12, 7, tzinfo=MADRID),
    )
    assert core.period_bounds(Period.MONTH, at)[1] == datetime(2027, 1, 1, tzinfo=MADRID)


@given(at=instants, period=st.sampled_from(list(Period)))
def test_a_period_holds_its_instant_and_starts_at_a_local_midnight(at: datetime, period: Period) -> None:
    start, end = core.period_bounds(period, at)
    assert start <= at < end
    assert (start.hour, start.minute) == (0, 0) and (end.hour, end.minute) == (0, 0)
    if period == Period.WEEK:
        assert start.weekday() == 0 and (end.date() - start.date()).days == 7
    if period == Period.MONTH:
        assert start.day == 1 and end.day == 1


@given(current=amounts, wanted=amounts, at=instants)
def test_lower_applies_at_once_and_a_raise_only_after_its_cooling_off(
    current: Decimal | None, wanted: Decimal | None, at: datetime
) -> None:
    decision = core.decide(Setting(current), wanted, at, COOLING)
    tighter = wanted is not None and (current is None or wanted < current)
    if tighter:
        assert decision.outcome == Outcome.AT_ONCE and core.in_force(decision.after, at) == wanted
    elif wanted == current:
        assert decision.outcome == Outcome.UNCHANGED
    else:
        assert decision.outcome == Outcome.PENDING
        # Until the cooling-off has run, the old limit holds; from then on, the new one.
        assert core.in_force(decision.after, at + COOLING - timedelta(microseconds=1)) == current
        assert core.in_force(decision.after, at + COOLING) == wanted


@given(
    start=amounts.filter(lambda a: a is not None),
    first=st.integers(1, 1000),
    second=st.integers(1, 1000),
    lower=st.integers(1, 99),
    later=st.integers(0, 71),
    at=instants,
)
def test_a_second_raise_waits_and_a_lowering_cancels_the_raise(
    start: Decimal, first: int, second: int, lower: int, later: int, at: datetime
) -> None:
    raised = core.decide(Setting(start), start + first, at, COOLING).after
    when = at + timedelta(hours=later)
    again = core.decide(raised, start + first, when, COOLING)
    assert again.outcome == Outcome.UNCHANGED and again.after == raised  # the same raise: a retry
    other = core.decide(raised, start + first + second, when, COOLING)
    assert other.outcome == Outcome.REFUSED and other.after == raised
    removal = core.decide(raised, None, when, COOLING)
    assert removal.outcome == Outcome.REFUSED
    # Once the first raise applies, another may be asked.
    assert core.decide(raised, start + first + second, at + COOLING, COOLING).outcome == Outcome.PENDING
    lowered = core.decide(raised, start * lower / 100 if start * lower / 100 > 0 else None, when, COOLING)
    if lowered.outcome == Outcome.AT_ONCE:
        assert not lowered.after.pending
    kept = core.decide(raised, start, when, COOLING)  # the limit in force again: the raise cancelled
    assert kept.outcome == Outcome.AT_ONCE and kept.after == Setting(start)


@given(
    staked=st.integers(0, 10_000),
    won=st.integers(0, 10_000),
    stake=st.integers(1, 5_000),
    limit=st.integers(1, 10_000),
    kind=st.sampled_from(list(LimitKind)),
)
def test_a_stake_is_allowed_while_it_keeps_the_period_within_the_limit(
    staked: int, won: int, stake: int, limit: int, kind: LimitKind
) -> None:
    used = Used(D(staked), D(won))
    allowed = core.allows(kind, D(limit), used, D(stake))
    assert allowed == (D(stake) <= core.left(kind, D(limit), used) or used.of(kind) + stake <= limit)
    assert allowed == (used.plus(D(stake)).of(kind) <= limit)
    assert core.left(kind, D(limit), used) >= 0


@given(minutes=st.integers(0, 1000), acknowledged=st.integers(0, 20), every=st.integers(1, 120))
def test_a_reality_check_is_due_every_interval_until_acknowledged(
    minutes: int, acknowledged: int, every: int
) -> None:
    started = datetime(2026, 12, 6, 10, tzinfo=UTC)
    at = started + timedelta(minutes=minutes)
    interval = timedelta(minutes=every)
    due = core.due_check(started, acknowledged, at, interval)
    count = minutes // every
    assert due == (count if count > acknowledged else None)
    if due is None:
        assert core.next_check_at(started, acknowledged, interval) > at or acknowledged >= count
    else:
        assert core.next_check_at(started, acknowledged, interval) <= at
