"""The per-game inverted index against `bingo.detect.winners_at` (no Django)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.cards import CardGrid, generate_series, pack_numbers
from bingo.detect import winners_at
from bingo.detect_index import BallCompletions, GameIndex, build, load, save

SERIES = generate_series(b"detect-index", 40)  # 240 valid cards, every number 1-90 four times per strip pair


def _index(cards: dict[int, CardGrid]) -> GameIndex:
    ids = list(cards)
    return GameIndex(ids, b"".join(pack_numbers(cards[i]) for i in ids))


def _timeline_of(
    results: list[BallCompletions],
) -> tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]:
    lines = {r.ordinal: tuple(int(i) for i in r.lines) for r in results if r.lines.size}
    bingos = {r.ordinal: tuple(int(i) for i in r.bingos) for r in results if r.bingos.size}
    return lines, bingos


sold_sets = st.lists(st.integers(0, len(SERIES) - 1), min_size=1, max_size=120, unique=True)
card_ids = st.lists(st.integers(1, 10**12), min_size=120, max_size=120, unique=True)


@settings(max_examples=80, deadline=None)
@given(sold=sold_sets, ids=card_ids, order=st.permutations(range(1, 91)), drawn=st.integers(0, 90))
def test_index_completions_equal_winners_at(
    sold: list[int], ids: list[int], order: list[int], drawn: int
) -> None:
    cards = {ids[k]: SERIES[i] for k, i in enumerate(sold)}
    balls = order[:drawn]
    index = _index(cards)
    results = index.apply_all(balls)
    expected = winners_at(cards, balls)
    assert [r.ordinal for r in results] == list(range(1, drawn + 1))
    assert [r.ball for r in results] == balls
    lines, bingos = _timeline_of(results)
    assert lines == dict(expected.lines)
    assert bingos == dict(expected.bingos)


@settings(max_examples=60, deadline=None)
@given(sold=sold_sets, order=st.permutations(range(1, 91)), cut=st.integers(0, 90), drawn=st.integers(0, 90))
def test_catching_up_equals_building_from_scratch(
    sold: list[int], order: list[int], cut: int, drawn: int
) -> None:
    cards = {i + 1: SERIES[i] for i in sold}
    cut = min(cut, drawn)
    # One process drew up to `cut`, another (restarted) rebuilt there from the stored balls and went on.
    incremental = _index(cards)
    first = incremental.apply_all(order[:cut])
    packed = b"".join(pack_numbers(cards[i]) for i in cards)
    rebuilt = build(list(cards), packed, order[:cut])
    rest = rebuilt.apply_all(order[cut:drawn])
    scratch = _index(cards).apply_all(order[:drawn])
    assert _timeline_of(first + rest) == _timeline_of(scratch)
    incremental.apply_all(order[cut:drawn])
    for a, b in ((incremental, rebuilt),):
        assert a.balls == b.balls == order[:drawn]
        assert np.array_equal(a.row_missing, b.row_missing)
        assert np.array_equal(a.rows_done, b.rows_done)


def test_a_strip_has_every_bingo_by_the_last_ball() -> None:
    cards = dict(enumerate(SERIES[:6], start=1))
    results = _index(cards).apply_all(range(1, 91))
    assert sorted(int(i) for r in results for i in r.bingos) == [1, 2, 3, 4, 5, 6]
    assert sorted(int(i) for r in results for i in r.lines) == [1, 2, 3, 4, 5, 6]


def test_bad_input_is_refused() -> None:
    packed = pack_numbers(SERIES[0])
    with pytest.raises(ValueError, match="bytes"):
        GameIndex([1, 2], packed)
    with pytest.raises(ValueError, match="twice"):
        GameIndex([1, 1], packed * 2)
    with pytest.raises(ValueError, match="outside"):
        GameIndex([1], b"\x00" + packed[1:])
    index = GameIndex([1], packed)
    index.apply(5)
    with pytest.raises(ValueError, match="drawn twice"):
        index.apply(5)
    for bad in (0, 91, True):
        with pytest.raises(ValueError, match="not a number"):
            index.apply(bad)


def test_no_cards() -> None:
    index = GameIndex([], b"")
    result = index.apply(7)
    assert (result.lines.size, result.bingos.size, index.ordinal) == (0, 0, 1)


@settings(max_examples=25, deadline=None)
@given(sold=sold_sets, order=st.permutations(range(1, 91)))
def test_a_saved_index_maps_back_to_the_same_detector(sold: list[int], order: list[int]) -> None:
    cards = {i + 7: SERIES[i] for i in sold}
    built = _index(cards)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "game.idx"
        save(built, path)
        loaded = load(path)
        assert _timeline_of(loaded.apply_all(order)) == _timeline_of(built.apply_all(order))
        path.write_bytes(path.read_bytes()[:-1])
        with pytest.raises(ValueError, match="bytes"):
            load(path)
