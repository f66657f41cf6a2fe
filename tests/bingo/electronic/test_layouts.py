"""The card layouts of electronic bingo (`bingo.electronic.layouts`): every dealt card is valid for its
layout, a deal is a function of its seed (and a longer deal extends a shorter one), the printed grid reads
back as the card, and broken cards are named. Hypothesis; no Django."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.cards import column_of
from bingo.electronic.layouts import LAYOUTS, NINETY, SEVENTY_FIVE, Layout, cells_of, layout_of, mask_of

layouts = st.sampled_from(sorted(LAYOUTS.values(), key=lambda layout: layout.code))
seeds = st.binary(min_size=0, max_size=32)


def _read_back(grid: list[list[int | None]]) -> tuple[int, ...]:
    """The card from its printed grid, row by row: the 90-ball card's blanks are not cells, the 75-ball card's
    free centre is (0)."""
    return tuple(n for row in grid for n in row if n is not None)


@settings(max_examples=60, deadline=None)
@given(layout=layouts, seed=seeds, count=st.integers(0, 30))
def test_every_dealt_card_is_valid_and_its_grid_reads_back(layout: Layout, seed: bytes, count: int) -> None:
    cards = layout.deal(seed, count)
    assert len(cards) == count
    for card in cards:
        assert len(card) == layout.cells
        assert layout.problems(card) == []
        grid = layout.grid(card)
        assert _read_back(grid) == card
        if layout.code == "90":
            assert [len(row) for row in grid] == [9, 9, 9]
            assert all(sum(n is not None for n in row) == 5 for row in grid)
            assert all(any(row[c] is not None for row in grid) for c in range(9))  # no empty column
            assert all(column_of(n) == c for row in grid for c, n in enumerate(row) if n is not None)
        else:
            assert [len(row) for row in grid] == [5] * 5
            assert grid[2][2] == 0  # the free centre
            assert all(
                15 * c + 1 <= n <= 15 * c + 15
                for row in grid
                for c, n in enumerate(row)
                if n  # B-I-N-G-O
            )
            assert len({n for n in card if n}) == 24


@settings(max_examples=40, deadline=None)
@given(layout=layouts, seed=seeds, other=seeds, count=st.integers(1, 24), shorter=st.integers(0, 24))
def test_a_deal_is_a_function_of_its_seed(
    layout: Layout, seed: bytes, other: bytes, count: int, shorter: int
) -> None:
    cards = layout.deal(seed, count)
    assert layout.deal(seed, count) == cards
    assert layout.deal(seed, min(shorter, count)) == cards[: min(shorter, count)]  # a longer deal extends it
    if other != seed and count >= 6:
        assert layout.deal(other, count) != cards


@settings(max_examples=20, deadline=None)
@given(seed=seeds, strips=st.integers(1, 4))
def test_each_strip_of_six_ninety_ball_cards_holds_every_number_once(seed: bytes, strips: int) -> None:
    cards = NINETY.deal(seed, 6 * strips)
    for s in range(strips):
        numbers = sorted(n for card in cards[6 * s : 6 * s + 6] for n in card)
        assert numbers == list(range(1, 91))


def test_broken_ninety_ball_cards_are_named() -> None:
    card = NINETY.deal(b"broken", 1)[0]
    assert NINETY.problems(card[:14]) == ["a 90-ball card has 15 numbers, not 14"]
    swapped = (card[1], card[0], *card[2:])
    assert NINETY.problems(swapped) == ["each row's numbers ascend"]
    assert NINETY.problems((*card[:14], 91)) != []
    assert NINETY.problems((0, *card[1:])) != []
    twice = (card[0], card[0], *card[2:])  # the same number twice in a row
    assert NINETY.problems(twice) != []


def test_broken_seventy_five_ball_cards_are_named() -> None:
    card = list(SEVENTY_FIVE.deal(b"broken", 1)[0])
    assert SEVENTY_FIVE.problems(card[:24]) == ["a 75-ball card has 25 cells, not 24"]
    centre = [*card[:12], 40, *card[13:]]
    assert "the centre is the free cell (0)" in SEVENTY_FIVE.problems(centre)
    wrong_column = [card[5], *card[1:]]  # cell 0 is column B; card[5] is B too, so: twice
    assert any("twice" in p for p in SEVENTY_FIVE.problems(wrong_column))
    out_of_column = [16, *card[1:]]  # 16 is an I number in the B column
    assert any("not in column B" in p for p in SEVENTY_FIVE.problems(out_of_column))


@pytest.mark.parametrize("layout", list(LAYOUTS.values()), ids=list(LAYOUTS))
def test_patterns_are_masks_of_the_layouts_cells(layout: Layout) -> None:
    assert layout.pattern("full") == (layout.full,)
    assert layout.pattern("line") == layout.lines
    for name, mask in layout.figures.items():
        assert layout.pattern(name) == (mask,)
        assert 0 < mask <= layout.full
    for mask in layout.lines:
        assert mask_of(cells_of(mask)) == mask
        assert len(cells_of(mask)) == 5
    assert len(layout.lines) == (3 if layout.code == "90" else 12)
    with pytest.raises(ValueError, match="has no pattern"):
        layout.pattern("cross" if layout.code == "90" else "nothing")
    with pytest.raises(ValueError, match="count must be"):
        layout.deal(b"x", -1)


def test_unknown_layouts_are_refused() -> None:
    assert layout_of("75") is SEVENTY_FIVE
    with pytest.raises(ValueError, match="unknown card layout"):
        layout_of("80")
