"""The window's pure core (halls.cage.window), by properties: processed in the order they are paid, a
person's payouts raise a structuring flag whenever (and only when) some window's sum of payouts each under
the threshold reaches it; a flag names small payouts of one window that reach it; little play is the share
of the cash-in played since the last cash-out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from halls.cage.window import Cycle, Move, Paid, cycle, little_play, structuring, within

T = Decimal("2500.00")
W = timedelta(hours=24)
START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)

amounts = st.integers(min_value=1, max_value=400_000).map(lambda c: Decimal(c) / 100)
gaps = st.integers(min_value=0, max_value=30 * 3600)  # seconds since the previous payout
sequences = st.lists(st.tuples(gaps, amounts), max_size=25)


def paid(sequence: list[tuple[int, Decimal]]) -> list[Paid]:
    at, found = START, []
    for ref, (gap, amount) in enumerate(sequence):
        at += timedelta(seconds=gap)
        found.append(Paid(ref, at, amount))
    return found


def some_window_reaches(payouts: list[Paid]) -> bool:
    """The brute force: the window ending at each payout, its small payouts summed."""
    return any(
        sum((p.amount for p in within(payouts, end.at, W) if p.amount < T), Decimal(0)) >= T
        for end in payouts
    )


@given(sequences)
def test_a_flag_is_raised_exactly_when_some_window_reaches_the_threshold(
    sequence: list[tuple[int, Decimal]],
) -> None:
    payouts = paid(sequence)
    flags = [structuring(payouts[:i], p, threshold=T, window=W) for i, p in enumerate(payouts)]
    assert any(flags) == some_window_reaches(payouts)
    for new, involved in zip(payouts, flags, strict=True):
        if not involved:
            continue
        assert involved[-1] == new
        assert all(p.amount < T and new.at - W < p.at <= new.at for p in involved)
        assert sum(p.amount for p in involved) >= T
        assert sum(p.amount for p in involved[:-1]) < T  # the new one completed it


@given(sequences, st.randoms(use_true_random=False))
def test_the_earlier_payouts_order_does_not_matter(sequence: list[tuple[int, Decimal]], rnd: object) -> None:
    payouts = paid(sequence)
    if not payouts:
        return
    *earlier, new = payouts
    shuffled = list(earlier)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert structuring(shuffled, new, threshold=T, window=W) == structuring(
        earlier, new, threshold=T, window=W
    )


@given(sequences)
def test_a_payout_at_or_above_the_threshold_never_flags(sequence: list[tuple[int, Decimal]]) -> None:
    payouts = paid(sequence)
    big = Paid(999, START + timedelta(days=400), T)
    assert structuring(payouts, big, threshold=T, window=W) == ()


def test_three_payouts_of_900_in_an_hour() -> None:
    a, b, c = (Paid(i, START + timedelta(minutes=20 * i), Decimal("900")) for i in range(3))
    assert structuring([a], b, threshold=T, window=W) == ()
    assert structuring([a, b], c, threshold=T, window=W) == (a, b, c)


moves = st.lists(st.tuples(st.sampled_from(list(Move)), amounts), max_size=30)


@given(moves)
def test_a_cycle_starts_after_the_last_move_out(found: list[tuple[Move, Decimal]]) -> None:
    last_out = max((i for i, (m, _a) in enumerate(found) if m is Move.OUT), default=-1)
    after = found[last_out + 1 :]
    expected = Cycle(
        sum((a for m, a in after if m is Move.IN), Decimal(0)),
        sum((a for m, a in after if m is Move.PLAY), Decimal(0)),
    )
    assert cycle(found) == expected


@given(amounts, amounts)
def test_little_play_is_under_the_percent_of_a_cash_in_at_least_the_minimum(
    cashed_in: Decimal, played: Decimal
) -> None:
    found = Cycle(cashed_in, played)
    flagged = little_play(found, percent=Decimal(10), minimum=Decimal(1000))
    assert flagged == (cashed_in >= 1000 and played < cashed_in / 10)
