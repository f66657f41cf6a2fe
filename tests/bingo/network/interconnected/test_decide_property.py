"""The pure decision (bingo.network.interconnected.decide): the winners are exactly the results' cards at the
minimum
ordinal at or below the max ball, and the shares and the remainder add up to the pool exactly."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bingo.network.interconnected.decide import HallResult, decide

pools = st.integers(min_value=0, max_value=10**12).map(lambda units: Decimal(units).scaleb(-6))
cards = st.lists(st.integers(1, 9999).map(lambda n: f"A-{n:04d}"), min_size=1, max_size=4, unique=True)
one_result = st.one_of(
    st.tuples(st.none(), st.just(())),
    st.tuples(st.integers(1, 90), cards.map(tuple)),
)


@st.composite
def rounds(draw: st.DrawFn) -> list[HallResult]:
    found = draw(st.lists(one_result, max_size=8))
    return [HallResult(f"ML-B-{i:04d}", ordinal, tuple(c)) for i, (ordinal, c) in enumerate(found)]


@given(results=rounds(), max_ball=st.integers(1, 90), pool=pools)
def test_winners_are_the_lowest_ordinal_and_shares_add_up(
    results: list[HallResult], max_ball: int, pool: Decimal
) -> None:
    decision = decide(results, max_ball=max_ball, pool=pool)
    eligible = [r.ordinal for r in results if r.ordinal is not None and r.ordinal <= max_ball]
    if not eligible:
        assert (decision.ordinal, decision.shares, decision.remainder) == (None, (), pool)
        return
    lowest = min(eligible)
    expected = {(r.hall, card) for r in results if r.ordinal == lowest for card in r.cards}
    assert decision.ordinal == lowest
    assert {(s.hall, s.card) for s in decision.shares} == expected
    assert len({s.amount for s in decision.shares}) == 1  # equal shares
    assert all(s.amount == s.amount.quantize(Decimal("0.01")) for s in decision.shares)
    assert sum((s.amount for s in decision.shares), Decimal(0)) + decision.remainder == pool
    assert Decimal(0) <= decision.remainder < Decimal("0.01") * len(expected)


def test_two_halls_at_the_same_ball_share_the_cent_left_stays() -> None:
    decision = decide(
        [
            HallResult("ML-B-0001", 15, ("A-0007",)),
            HallResult("ML-B-0002", 15, ("A-0007", "A-0011")),
            HallResult("ML-B-0003", 14, ()),  # no card: not a Bingo
            HallResult("ML-B-0004", None),
            HallResult("ML-B-0005", 41, ("A-0001",)),  # after the max ball
        ],
        max_ball=40,
        pool=Decimal("100.000001"),
    )
    assert (decision.ordinal, decision.share, decision.remainder) == (
        15,
        Decimal("33.33"),
        Decimal("0.010001"),
    )
    assert [s.hall for s in decision.shares] == ["ML-B-0001", "ML-B-0002", "ML-B-0002"]


def test_one_result_per_hall_and_a_max_ball_within_the_90() -> None:
    with pytest.raises(ValueError, match="one result per hall"):
        decide(
            [HallResult("X", 3, ("A-0001",)), HallResult("X", 4, ("A-0002",))], max_ball=40, pool=Decimal(1)
        )
    with pytest.raises(ValueError, match="max ball"):
        decide([], max_ball=91, pool=Decimal(1))
