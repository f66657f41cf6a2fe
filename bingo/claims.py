"""Pure claim rules: is a Line or Bingo claim valid, and why (not)?

A claim is bound to the last ball drawn when it is judged.  It is judged against all balls
drawn so far, so a Bingo completed at ball k and claimed at ball k + m is still valid while
the game is open.  A Line is only valid if no Line was confirmed at an earlier ball;
co-winners at the same ball share the prize.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from bingo.cards import CardGrid
from bingo.detect import ordinal_map


class ClaimKind(StrEnum):
    LINE = "line"
    BINGO = "bingo"


class Refusal(StrEnum):
    NOT_SOLD = "not_sold"  # the card is not sold in this game
    NOT_COMPLETE = "not_complete"  # some needed numbers are not drawn yet
    LINE_ALREADY_WON = "line_already_won"  # a line was confirmed at an earlier ball
    GAME_CLOSED = "game_closed"
    NO_BALLS = "no_balls"


@dataclass(frozen=True)
class Verdict:
    """Outcome of one claim.

    `bound_ordinal` is the ball the claim is bound to (0 if none drawn); `completed_at` the
    ordinal at which the card completed what was claimed; `missing` the undrawn numbers (for a
    line, those of the row closest to completion); `winning_row` the 0-based row of the line.
    """

    valid: bool
    refusal: Refusal | None
    bound_ordinal: int
    completed_at: int | None
    reason: str
    missing: tuple[int, ...] = ()
    winning_row: int | None = None


def _join(numbers: Sequence[int]) -> str:
    """'5', '5 and 7', '5, 7 and 9': how a caller reads numbers out."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _drawn_status(numbers: frozenset[int], ordinals: Mapping[int, int]) -> tuple[int | None, tuple[int, ...]]:
    """(ordinal completing `numbers` or None, their undrawn members sorted)."""
    missing = tuple(sorted(n for n in numbers if n not in ordinals))
    return (None if missing else max(ordinals[n] for n in numbers)), missing


def judge_claim(
    *,
    kind: ClaimKind,
    card: CardGrid | None,
    balls: Sequence[int],
    line_confirmed_at: int | None,
    game_closed: bool,
    serial: int | None = None,
) -> Verdict:
    """Judge a claim; `card` None means the card is not sold in this game.

    Raises ValueError on inconsistent input (repeated balls, a line confirmed at a ball not
    drawn yet): those are bugs in the caller, not refusals to show a player.
    """
    kind = ClaimKind(kind)
    ordinals = ordinal_map(balls)
    bound = len(balls)
    if line_confirmed_at is not None and not 1 <= line_confirmed_at <= bound:
        raise ValueError(f"line confirmed at ball {line_confirmed_at} but {bound} balls drawn")
    subject = "The card" if serial is None else f"Card {serial}"

    if game_closed:
        return Verdict(False, Refusal.GAME_CLOSED, bound, None, "The game is closed: no more claims")
    if not balls:
        return Verdict(False, Refusal.NO_BALLS, bound, None, "No ball has been drawn yet")
    if card is None:
        return Verdict(False, Refusal.NOT_SOLD, bound, None, f"{subject} is not sold in this game")

    if kind is ClaimKind.BINGO:
        at, missing = _drawn_status(card.numbers, ordinals)
        if at is None:
            reason = f"{subject} is not complete: {_join(missing)} not drawn"
            return Verdict(False, Refusal.NOT_COMPLETE, bound, None, reason, missing)
        reason = f"{subject} has bingo, complete at ball {at} (claim at ball {bound})"
        return Verdict(True, None, bound, at, reason)

    rows = [_drawn_status(row, ordinals) for row in card.row_numbers]
    complete = [(at, r) for r, (at, _) in enumerate(rows) if at is not None]
    # The first row to complete is the line (lowest index on a tie); else show the closest row.
    line_at, row = min(complete) if complete else (None, None)
    closest = min(range(len(rows)), key=lambda r: len(rows[r][1]))
    missing = rows[closest][1]
    if line_confirmed_at is not None and line_confirmed_at < bound:
        # Checked before completeness: the line prize is gone whatever this card holds.
        reason = f"Line already won at ball {line_confirmed_at}; this claim is at ball {bound}"
        return Verdict(False, Refusal.LINE_ALREADY_WON, bound, line_at, reason, missing, row)
    if row is None:
        reason = f"{subject} has no complete line: row {closest + 1} still needs {_join(missing)}"
        return Verdict(False, Refusal.NOT_COMPLETE, bound, None, reason, missing)
    reason = f"{subject} has a line: row {row + 1} complete at ball {line_at} (claim at ball {bound})"
    return Verdict(True, None, bound, line_at, reason, (), row)
