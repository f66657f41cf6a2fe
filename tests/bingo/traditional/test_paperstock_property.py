"""The range arithmetic of the paper stock (bingo.traditional.paperstock), against a model that keeps one
state per
serial: a movement either changes exactly the serials of its range, or is refused naming exactly the serials
that cannot move, changing nothing; the stock stays sorted, disjoint, joined and inside the series."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.traditional import paperstock as ps
from bingo.traditional.paperstock import Span

SIZE = 60
GAMES = (7, 8, 9)

movements = st.lists(
    st.tuples(
        st.integers(1, SIZE),
        st.integers(0, 24),
        st.sampled_from(ps.STATES),
        st.one_of(st.none(), st.sampled_from(GAMES)),
    ),
    max_size=25,
)
Cell = tuple[str, int | None]


def cells(spans: tuple[Span, ...]) -> list[Cell]:
    """The model: each serial's (state, game), index 0 for serial 1."""
    out: list[Cell] = [(ps.NOT_RECEIVED, None)] * SIZE
    for s in spans:
        for n in range(s.first, s.last + 1):
            out[n - 1] = (s.state, s.game)
    return out


def attempt(
    spans: tuple[Span, ...], first: int, last: int, to: str, game: int | None
) -> ps.Moved | ps.Refused:
    try:
        return ps.move(spans, size=SIZE, first=first, last=last, to=to, game=game)
    except ps.Refused as refused:
        return refused


def well_formed(spans: tuple[Span, ...]) -> None:
    assert list(spans) == sorted(spans)
    for a, b in itertools.pairwise(spans):
        assert a.last < b.first  # disjoint
        assert not (a.last + 1 == b.first and (a.state, a.game) == (b.state, b.game))  # joined
    for s in spans:
        assert 1 <= s.first <= s.last <= SIZE and s.state in ps.STATES
        assert (s.game is not None) == (s.state in ps.WITH_GAME)


@settings(max_examples=300)
@given(moves=movements)
def test_a_movement_changes_exactly_its_range_or_nothing_naming_every_serial_at_fault(
    moves: list[tuple[int, int, str, int | None]],
) -> None:
    spans: tuple[Span, ...] = ()
    for first, length, to, game in moves:
        last = min(SIZE, first + length)
        before = cells(spans)
        inside = before[first - 1 : last]
        at_fault = [first + i for i, (state, _g) in enumerate(inside) if to not in ps.MOVES[state]]
        games_in = {g for _s, g in inside}
        moved = attempt(spans, first, last, to, game)
        if isinstance(moved, ps.Refused):
            refused = moved
            if refused.code == "bad_stock_move":
                named = [n for s in refused.spans for n in range(s.first, s.last + 1)]
                assert named == at_fault and at_fault
                assert all(to not in ps.MOVES[s.state] for s in refused.spans)
            elif refused.code == "game_required":
                assert to == ps.ISSUED and game is None
            elif refused.code == "several_games":
                assert not at_fault and to == ps.RETURNED and len(games_in) > 1
            else:
                assert refused.code == "issued_elsewhere"
                assert not at_fault and to == ps.RETURNED and games_in != {game}
            continue
        assert not at_fault
        after = cells(moved.spans)
        well_formed(moved.spans)
        assert after[: first - 1] == before[: first - 1] and after[last:] == before[last:]
        expected_game = game if to == ps.ISSUED else (inside[0][1] if to == ps.RETURNED else None)
        assert after[first - 1 : last] == [(to, expected_game)] * (last - first + 1)
        # The pieces moved are the range as it was, state by state.
        assert [c for p in moved.pieces for c in [(p.state, p.game)] * p.cards] == inside
        assert sum(ps.counts(moved.spans, SIZE).values()) == SIZE
        spans = moved.spans


@given(moves=movements, game=st.sampled_from(GAMES), first=st.integers(1, SIZE), count=st.integers(1, 8))
def test_what_a_game_may_sell_is_everything_but_destroyed_and_elsewhere_issued_paper(
    moves: list[tuple[int, int, str, int | None]], game: int, first: int, count: int
) -> None:
    spans: tuple[Span, ...] = ()
    for lo, length, to, g in moves:
        moved = attempt(spans, lo, min(SIZE, lo + length), to, g)
        spans = spans if isinstance(moved, ps.Refused) else moved.spans
    model = cells(spans)
    allowed = {
        n
        for n in range(1, SIZE + 1)
        if not (model[n - 1][0] == ps.DESTROYED or (model[n - 1][0] == ps.ISSUED and model[n - 1][1] != game))
    }
    free = ps.sellable(spans, SIZE, game)
    assert {n for lo, hi in free for n in range(lo, hi + 1)} == allowed
    assert free == ps.runs(allowed)
    last = min(SIZE, first + count)
    assert {n for s in ps.blocked(spans, first, last, game) for n in range(s.first, s.last + 1)} == (
        set(range(first, last + 1)) - allowed
    )
    # The next run of `count` serials a table print takes: the lowest, all allowed.
    found = ps.first_run(free, count)
    runs_of = [n for n in range(1, SIZE - count + 2) if all(m in allowed for m in range(n, n + count))]
    assert found == (runs_of[0] if runs_of else None)


@given(
    ranges=st.lists(st.tuples(st.integers(1, 50), st.integers(0, 10)), max_size=6),
    taken=st.lists(st.tuples(st.integers(1, 50), st.integers(0, 10)), max_size=6),
)
def test_subtract_is_set_difference(ranges: list[tuple[int, int]], taken: list[tuple[int, int]]) -> None:
    a = [(lo, lo + n) for lo, n in ranges]
    b = [(lo, lo + n) for lo, n in taken]
    want = {x for lo, hi in a for x in range(lo, hi + 1)} - {x for lo, hi in b for x in range(lo, hi + 1)}
    got = ps.subtract(ps.runs(x for lo, hi in a for x in range(lo, hi + 1)), b)
    assert got == ps.runs(want)


def test_the_halls_example() -> None:
    """Serials 1–600 received and put in stock; 1–120 issued to game 7; 101–120 returned; 121–130
    destroyed. Issuing 100–130 to game 8 then is refused naming 100 (issued to game 7), 101–120 (returned)
    and 121–130 (destroyed)."""
    spans = ps.move((), size=600, first=1, last=600, to=ps.RECEIVED).spans
    spans = ps.move(spans, size=600, first=1, last=600, to=ps.IN_STOCK).spans
    spans = ps.move(spans, size=600, first=1, last=120, to=ps.ISSUED, game=7).spans
    spans = ps.move(spans, size=600, first=101, last=120, to=ps.RETURNED).spans
    spans = ps.move(spans, size=600, first=121, last=130, to=ps.DESTROYED).spans
    assert spans == (
        Span(1, 100, ps.ISSUED, 7),
        Span(101, 120, ps.RETURNED, 7),
        Span(121, 130, ps.DESTROYED),
        Span(131, 600, ps.IN_STOCK),
    )
    counted = {"received": 0, "in_stock": 470, "issued": 100, "returned": 20, "destroyed": 10, "": 0}
    assert ps.counts(spans, 600) == counted
    with pytest.raises(ps.Refused) as refused:
        ps.move(spans, size=600, first=100, last=135, to=ps.ISSUED, game=8)
    assert refused.value.code == "bad_stock_move"
    assert refused.value.spans == (
        Span(100, 100, ps.ISSUED, 7),
        Span(101, 120, ps.RETURNED, 7),
        Span(121, 130, ps.DESTROYED),
    )
    assert ps.shown(refused.value.spans) == "100, 101–120, 121–130"
