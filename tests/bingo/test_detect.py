"""Winner detection against a brute-force replay of the draw (no Django)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.cards import CardGrid, generate_series
from bingo.detect import Completion, completion, ordinal_map, winners_at

B = None  # a blank cell, short enough to keep the grids readable
CARD = CardGrid.from_json(
    [
        [1, B, 20, B, 40, B, 60, B, 80],
        [B, 10, B, 30, B, 50, B, 70, 85],
        [5, B, 25, 35, 45, B, B, 75, B],
    ]
)


def brute_completion(card: CardGrid, balls: list[int]) -> Completion:
    """Replay ball by ball: the first k whose drawn set covers a row / the whole card."""
    line_at = bingo_at = None
    for k in range(1, len(balls) + 1):
        drawn = set(balls[:k])
        if line_at is None and any(row <= drawn for row in card.row_numbers):
            line_at = k
        if bingo_at is None and card.numbers <= drawn:
            bingo_at = k
    return Completion(line_at=line_at, bingo_at=bingo_at)


def test_ordinal_map() -> None:
    assert ordinal_map([7, 90, 1]) == {7: 1, 90: 2, 1: 3}
    assert ordinal_map([]) == {}
    with pytest.raises(ValueError, match="drawn twice"):
        ordinal_map([7, 8, 7])
    for bad in (0, 91, True):
        with pytest.raises(ValueError, match="not a number"):
            ordinal_map([5, bad])


def test_worked_example_with_co_winners() -> None:
    other = CardGrid.from_json(
        [
            [1, B, 20, B, 40, B, 60, B, 80],
            [2, 11, B, 31, B, 51, B, 71, B],
            [3, B, 21, B, 41, B, B, 72, 81],
        ]
    )
    balls = [1, 20, 40, 60, 80, 10, 30]
    timeline = winners_at({101: CARD, 7: other}, balls)
    # Both share row {1,20,40,60,80}: co-winners of the line at ball 5.
    assert timeline.lines == {5: (7, 101)}
    assert timeline.first_line_ordinal == 5
    assert timeline.line_winners == (7, 101)
    assert timeline.lines_at(5) == (7, 101)
    assert timeline.lines_at(4) == ()
    assert timeline.bingos == {}
    assert timeline.first_bingo_ordinal is None
    assert timeline.bingo_winners == ()
    assert timeline.completions[101] == Completion(line_at=5, bingo_at=None)


def test_bingo_ordinal_is_the_last_number_drawn() -> None:
    numbers = sorted(CARD.numbers)
    balls = [2, 3, *numbers[:-1], 4, numbers[-1], 6]
    done = completion(CARD, ordinal_map(balls))
    assert done.bingo_at == balls.index(numbers[-1]) + 1
    assert winners_at({1: CARD}, balls).bingo_winners == (1,)


@settings(max_examples=60)
@given(
    seed=st.binary(max_size=8),
    order=st.permutations(range(1, 91)),
    drawn=st.integers(0, 90),
)
def test_detect_agrees_with_brute_force(seed: bytes, order: list[int], drawn: int) -> None:
    balls = order[:drawn]
    cards = dict(enumerate(generate_series(seed, 2), start=1))
    ordinals = ordinal_map(balls)
    timeline = winners_at(cards, balls)
    expected = {card_id: brute_completion(card, balls) for card_id, card in cards.items()}
    for card_id, card in cards.items():
        assert completion(card, ordinals) == expected[card_id]
    assert timeline.completions == expected
    for k in range(1, drawn + 1):
        assert timeline.lines_at(k) == tuple(i for i, c in expected.items() if c.line_at == k)
        assert timeline.bingos_at(k) == tuple(i for i, c in expected.items() if c.bingo_at == k)
    line_ats = [c.line_at for c in expected.values() if c.line_at is not None]
    bingo_ats = [c.bingo_at for c in expected.values() if c.bingo_at is not None]
    assert timeline.first_line_ordinal == min(line_ats, default=None)
    assert timeline.first_bingo_ordinal == min(bingo_ats, default=None)
    if drawn == 90:
        # With every ball out, each card of a strip has bingo and a line.
        assert len(bingo_ats) == len(line_ats) == len(cards)
