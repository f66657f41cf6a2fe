"""The electronic games' detector (`bingo.electronic.detector.PatternIndex`) equals the plain `reference`:
random dealt cards of both layouts, random pattern sets (the layouts' lines, full card and figures, and
arbitrary masks), random ball orders, both ways of telling completions (tables and masks). No Django."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.electronic.detector import PatternIndex, build, reference
from bingo.electronic.layouts import LAYOUTS, NINETY, SEVENTY_FIVE, Layout

Game = tuple[list[int], list[tuple[int, ...]], dict[str, tuple[int, ...]], list[int]]
DEALT = {code: layout.deal(b"detector-property", 120) for code, layout in LAYOUTS.items()}


@st.composite
def games(
    draw: st.DrawFn, layout: Layout
) -> tuple[list[int], list[tuple[int, ...]], dict[str, tuple[int, ...]], list[int]]:
    """(ids, cards, patterns, balls): dealt cards under random unique int64 ids (any order), a pattern set
    of named patterns and arbitrary masks, and a random prefix of a random ball order."""
    seed = draw(st.binary(min_size=1, max_size=8))
    count = draw(st.integers(0, 40))
    cards = layout.deal(seed, count) if draw(st.booleans()) else DEALT[layout.code][:count]
    ids = draw(st.lists(st.integers(-(2**62), 2**62), min_size=count, max_size=count, unique=True))
    if draw(st.booleans()):
        ids.sort()  # the service hands them ascending; the index must take any order
    names = ["line", "full", *sorted(layout.figures)]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    patterns = {name: layout.pattern(name) for name in chosen}
    cell_masks = st.integers(1, layout.full)
    for i in range(draw(st.integers(0, 2))):
        patterns[f"any{i}"] = tuple(draw(st.lists(cell_masks, min_size=1, max_size=4)))
    order = draw(st.permutations(range(1, layout.max_number + 1)))
    balls = list(order[: draw(st.integers(0, layout.max_number))])
    return ids, cards, patterns, balls


def _check(layout: Layout, game: Game, tables: bool | None) -> None:
    ids, cards, patterns, balls = game
    matrix = np.array(cards, dtype=np.uint8).reshape(len(cards), layout.cells)
    index = PatternIndex(layout, ids, matrix, patterns, tables=tables)
    plain = reference(layout, dict(zip(ids, cards, strict=True)), patterns, balls)
    for ordinal, ball in enumerate(balls, start=1):
        result = index.apply(ball)
        assert (result.ordinal, result.ball) == (ordinal, ball)
        expected = {key: sorted(card for card, at in plain[key].items() if at == ordinal) for key in patterns}
        assert set(result.completed) == {key for key, cards_ in expected.items() if cards_}
        for key in patterns:
            got = result.of(key)
            assert got.dtype == np.int64
            assert got.tolist() == expected[key]  # ascending, each card the first time only
    # "falta N": the fewest unmarked cells of any mask, per card in the order given.
    drawn = set(balls)
    for key, masks in patterns.items():
        want = [
            min(
                sum(
                    1
                    for p in range(layout.cells)
                    if m >> p & 1 and not layout.free >> p & 1 and card[p] not in drawn
                )
                for m in masks
            )
            for card in cards
        ]
        assert index.missing(key).tolist() == want


@settings(max_examples=150, deadline=None)
@given(game=games(NINETY), tables=st.sampled_from([None, True, False]))
def test_the_ninety_ball_index_equals_the_reference(game: Game, tables: bool | None) -> None:
    _check(NINETY, game, tables)


@settings(max_examples=150, deadline=None)
@given(game=games(SEVENTY_FIVE))
def test_the_seventy_five_ball_index_equals_the_reference_with_its_free_centre(game: Game) -> None:
    _check(SEVENTY_FIVE, game, None)


def test_the_free_centre_is_marked_from_the_start_and_its_value_ignored() -> None:
    card = list(DEALT["75"][0])
    row = [card[10], card[11], card[13], card[14]]  # the middle row: four numbers and the free centre
    card[12] = 99  # not a number of the layout: the free cell's value is not read
    index = PatternIndex(SEVENTY_FIVE, [7], np.array([card], dtype=np.uint8), {"line": SEVENTY_FIVE.lines})
    assert index.missing("line").tolist() == [4]
    results = index.apply_all(row)
    assert [r.of("line").tolist() for r in results] == [[], [], [], [7]]


def test_a_card_is_reported_once_per_pattern_and_build_catches_up() -> None:
    cards = DEALT["90"][:12]
    ids = list(range(100, 112))
    patterns = {"line": NINETY.lines, "full": (NINETY.full,)}
    order = list(range(1, 91))
    index = build(NINETY, ids, np.array(cards, dtype=np.uint8), patterns, balls=order[:45])
    rest = index.apply_all(order[45:])
    first = PatternIndex(NINETY, ids, np.array(cards, dtype=np.uint8), patterns).apply_all(order)
    assert [r.completed.keys() for r in rest] == [r.completed.keys() for r in first[45:]]
    everyone = [int(i) for r in first for i in r.of("full")]
    assert sorted(everyone) == ids  # all 90 balls: every card completes once
    assert sorted(int(i) for r in first for i in r.of("line")) == ids


@pytest.mark.parametrize(
    ("ids", "cells", "problem"),
    [
        ([1, 1], [DEALT["90"][0], DEALT["90"][1]], "appears twice"),
        ([1], [(91, *DEALT["90"][0][1:])], "above 90"),
        ([1], [(5,) * 15], "number twice"),
        ([1], [(0, *DEALT["90"][0][1:])], "outside the free cells"),
    ],
)
def test_bad_cards_are_refused(ids: list[int], cells: list[tuple[int, ...]], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        PatternIndex(NINETY, ids, np.array(cells, dtype=np.uint8), {"full": (NINETY.full,)})


def test_bad_balls_and_patterns_are_refused() -> None:
    cells = np.array(DEALT["90"][:2], dtype=np.uint8)
    index = PatternIndex(NINETY, [1, 2], cells, {"full": (NINETY.full,)})
    for ball in (0, 91, True):
        with pytest.raises(ValueError, match="is not a number"):
            index.apply(ball)
    index.apply(5)
    with pytest.raises(ValueError, match="drawn twice"):
        index.apply(5)
    with pytest.raises(ValueError, match="no mask"):
        PatternIndex(NINETY, [1, 2], cells, {"empty": ()})
    with pytest.raises(ValueError, match="cell the layout does not have"):
        PatternIndex(NINETY, [1, 2], cells, {"big": (1 << 15,)})
    with pytest.raises(ValueError, match="at most 16 cells"):
        PatternIndex(
            SEVENTY_FIVE, [1], np.array(DEALT["75"][:1], dtype=np.uint8), {"full": (1,)}, tables=True
        )
