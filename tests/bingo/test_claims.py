"""Claim rules: worked examples from the regulation and a property check (no Django)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bingo.cards import CardGrid
from bingo.claims import (
    ClaimKind,
    Refusal,
    Verdict,
    VerdictCode,
    judge_claim,
    line_already_paid,
    stored_verdict,
    verdict_sentence,
)
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


def test_each_verdict_says_its_code_and_figures_as_data() -> None:
    """The verdict as data (issue 26): a code and the figures its sentence needs, the English sentence made
    from them, so a console can say the same in its reader's language."""
    line = judge(ClaimKind.LINE, [2, *FIRST_ROW])
    assert (line.code, dict(line.facts)) == (VerdictCode.LINE, {"serial": 123, "bound": 6, "row": 1, "at": 6})
    short = judge(ClaimKind.LINE, [5, 2], serial=16)
    assert short.code is VerdictCode.LINE_INCOMPLETE
    assert dict(short.facts) == {"serial": 16, "bound": 2, "row": 3, "missing": [25, 35, 45, 75]}
    assert verdict_sentence(short.code, short.facts) == short.reason
    bingo = judge(ClaimKind.BINGO, [*sorted(CARD.numbers - {75, 85}), 2])
    assert (bingo.code, bingo.facts["missing"]) == (VerdictCode.BINGO_INCOMPLETE, [75, 85])
    late = judge(ClaimKind.LINE, [*FIRST_ROW, 2], line_confirmed_at=5)
    assert (late.code, late.facts["line_at"], late.facts["bound"]) == (VerdictCode.LINE_ALREADY_WON, 5, 6)
    assert judge(ClaimKind.LINE, []).code is VerdictCode.NO_BALLS
    assert judge(ClaimKind.LINE, [1], card=None).code is VerdictCode.NOT_SOLD
    assert judge(ClaimKind.LINE, [1], game_closed=True).code is VerdictCode.GAME_CLOSED


def test_a_line_claimed_at_the_ball_of_a_paid_line_is_refused_as_paid() -> None:
    paid = line_already_paid(judge(ClaimKind.LINE, [2, *FIRST_ROW]), 6)
    assert not paid.valid
    assert paid.refusal is Refusal.LINE_ALREADY_WON
    assert (paid.code, dict(paid.facts)) == (
        VerdictCode.LINE_ALREADY_PAID,
        {"serial": 123, "bound": 6, "line_at": 6},
    )
    assert paid.reason == "The Line was already won and paid at ball 6"


@given(
    kind=st.sampled_from(ClaimKind),
    order=st.permutations(range(1, 91)),
    drawn=st.integers(0, 90),
    confirmed=st.one_of(st.none(), st.integers(1, 90)),
    sold=st.booleans(),
)
def test_a_stored_verdict_says_what_the_judged_one_said(
    kind: ClaimKind, order: list[int], drawn: int, confirmed: int | None, sold: bool
) -> None:
    """What a claim's row keeps is enough to say its verdict again: the same code and facts."""
    balls = order[:drawn]
    confirmed = None if confirmed is None or drawn == 0 else min(confirmed, drawn)
    verdict = judge(kind, balls, line_confirmed_at=confirmed, card=CARD if sold else None)
    again = stored_verdict(
        kind=kind.value,
        serial=123,
        valid=verdict.valid,
        refusal=verdict.refusal.value if verdict.refusal else "",
        bound_ordinal=verdict.bound_ordinal,
        completed_at=verdict.completed_at,
        winning_row=verdict.winning_row,
        line_won_at=confirmed,
        card=CARD,
        balls=order,  # the game's balls, drawn on after the claim: only those up to its ball count
    )
    assert again == (verdict.code, dict(verdict.facts))
