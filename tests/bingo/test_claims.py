"""Claim rules: worked examples from the regulation and a property check (no Django)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bingo.cards import CardGrid
from bingo.claims import ClaimKind, Refusal, Verdict, judge_claim
from bingo.detect import completion, ordinal_map

B = None  # a blank cell, short enough to keep the grids readable
# Rows {1,20,40,60,80}, {10,30,50,70,85}, {5,25,35,45,75}.
CARD = CardGrid.from_json(
    [
        [1, B, 20, B, 40, B, 60, B, 80],
        [B, 10, B, 30, B, 50, B, 70, 85],
        [5, B, 25, 35, 45, B, B, 75, B],
    ]
)
FIRST_ROW = [1, 20, 40, 60, 80]


def judge(
    kind: ClaimKind,
    balls: Sequence[int],
    *,
    card: CardGrid | None = CARD,
    line_confirmed_at: int | None = None,
    game_closed: bool = False,
    serial: int | None = 123,
) -> Verdict:
    return judge_claim(
        kind=kind,
        card=card,
        balls=balls,
        line_confirmed_at=line_confirmed_at,
        game_closed=game_closed,
        serial=serial,
    )


def test_line_valid_when_first() -> None:
    verdict = judge(ClaimKind.LINE, [2, *FIRST_ROW])
    assert verdict.valid
    assert verdict.refusal is None
    assert (verdict.bound_ordinal, verdict.completed_at, verdict.winning_row) == (6, 6, 0)
    assert verdict.missing == ()
    assert verdict.reason == "Card 123 has a line: row 1 complete at ball 6 (claim at ball 6)"


def test_line_confirmed_at_earlier_ball_is_refused() -> None:
    verdict = judge(ClaimKind.LINE, [*FIRST_ROW, 2], line_confirmed_at=5)
    assert not verdict.valid
    assert verdict.refusal is Refusal.LINE_ALREADY_WON
    assert verdict.bound_ordinal == 6
    assert verdict.completed_at == 5  # the card did have a line, but claimed one ball late
    assert verdict.reason == "Line already won at ball 5; this claim is at ball 6"


def test_co_winner_at_same_ordinal_is_accepted() -> None:
    verdict = judge(ClaimKind.LINE, FIRST_ROW, line_confirmed_at=5)
    assert verdict.valid
    assert verdict.completed_at == verdict.bound_ordinal == 5


def test_late_line_valid_while_no_line_confirmed() -> None:
    verdict = judge(ClaimKind.LINE, [*FIRST_ROW, 2, 3])
    assert verdict.valid
    assert (verdict.completed_at, verdict.bound_ordinal) == (5, 7)


def test_first_completed_row_wins_the_line() -> None:
    second_row = [10, 30, 50, 70, 85]
    verdict = judge(ClaimKind.LINE, [*second_row, *FIRST_ROW])
    assert (verdict.winning_row, verdict.completed_at) == (1, 5)


def test_bingo_claimed_late_is_still_valid() -> None:
    balls = [*sorted(CARD.numbers), 2, 3, 4]
    verdict = judge(ClaimKind.BINGO, balls, line_confirmed_at=5)
    assert verdict.valid
    assert (verdict.completed_at, verdict.bound_ordinal) == (15, 18)
    assert verdict.winning_row is None
    assert verdict.reason == "Card 123 has bingo, complete at ball 15 (claim at ball 18)"


def test_closed_game_refuses_everything() -> None:
    for kind in ClaimKind:
        verdict = judge(kind, sorted(CARD.numbers), game_closed=True)
        assert not verdict.valid
        assert verdict.refusal is Refusal.GAME_CLOSED
        assert verdict.bound_ordinal == 15


def test_card_not_sold_is_refused() -> None:
    verdict = judge(ClaimKind.BINGO, sorted(CARD.numbers), card=None)
    assert verdict.refusal is Refusal.NOT_SOLD
    assert verdict.reason == "Card 123 is not sold in this game"
    assert judge(ClaimKind.LINE, [1], card=None, serial=None).reason == "The card is not sold in this game"


def test_no_balls_is_refused() -> None:
    verdict = judge(ClaimKind.LINE, [])
    assert verdict.refusal is Refusal.NO_BALLS
    assert verdict.bound_ordinal == 0


def test_incomplete_bingo_lists_missing_numbers() -> None:
    balls = [*sorted(CARD.numbers - {75, 85}), 2]
    verdict = judge(ClaimKind.BINGO, balls)
    assert verdict.refusal is Refusal.NOT_COMPLETE
    assert verdict.missing == (75, 85)
    assert verdict.completed_at is None
    assert verdict.reason == "Card 123 is not complete: 75 and 85 not drawn"


def test_incomplete_line_lists_the_closest_row() -> None:
    verdict = judge(ClaimKind.LINE, [1, 20, 40, 10, 30, 50, 70], serial=None)
    assert verdict.refusal is Refusal.NOT_COMPLETE
    assert verdict.missing == (85,)
    assert verdict.reason == "The card has no complete line: row 2 still needs 85"
    verdict = judge(ClaimKind.LINE, [5, 2])
    assert verdict.reason == "Card 123 has no complete line: row 3 still needs 25, 35, 45 and 75"


def test_inconsistent_input_raises() -> None:
    with pytest.raises(ValueError, match="line confirmed at ball 3"):
        judge(ClaimKind.LINE, [1, 2], line_confirmed_at=3)
    with pytest.raises(ValueError, match="drawn twice"):
        judge(ClaimKind.BINGO, [1, 2, 1])


@given(
    kind=st.sampled_from(ClaimKind),
    order=st.permutations(range(1, 91)),
    drawn=st.integers(1, 90),
    confirmed=st.one_of(st.none(), st.integers(1, 90)),
)
def test_validity_matches_the_rules(
    kind: ClaimKind, order: list[int], drawn: int, confirmed: int | None
) -> None:
    balls = order[:drawn]
    confirmed = None if confirmed is None else min(confirmed, drawn)
    verdict = judge(kind, balls, line_confirmed_at=confirmed)
    done = completion(CARD, ordinal_map(balls))
    drawn_set = set(balls)
    if kind is ClaimKind.BINGO:
        assert verdict.valid == (CARD.numbers <= drawn_set)
        assert verdict.completed_at == done.bingo_at
        assert set(verdict.missing) == CARD.numbers - drawn_set
    else:
        has_line = any(row <= drawn_set for row in CARD.row_numbers)
        assert verdict.valid == (has_line and confirmed in (None, drawn))
        assert verdict.completed_at == done.line_at
    assert verdict.bound_ordinal == drawn
    assert (verdict.refusal is None) == verdict.valid
