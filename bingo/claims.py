"""Pure claim rules: is a Line or Bingo claim valid, and why (not)?

A claim is bound to the last ball drawn when it is judged.  It is judged against all balls
drawn so far, so a Bingo completed at ball k and claimed at ball k + m is still valid while
the game is open.  A Line is only valid if no Line was confirmed at an earlier ball;
co-winners at the same ball share the prize.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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


class VerdictCode(StrEnum):
    """What a verdict says, as a stable code: the doors say it in the reader's language from the code and
    its facts (`Verdict.facts`); `Verdict.reason` is the English sentence the audit keeps."""

    BINGO = "bingo"  # valid: the card has bingo
    LINE = "line"  # valid: the card has a line
    GAME_CLOSED = "game_closed"
    NO_BALLS = "no_balls"
    NOT_SOLD = "not_sold"
    BINGO_INCOMPLETE = "bingo_incomplete"  # facts: missing
    LINE_INCOMPLETE = "line_incomplete"  # facts: row (the closest to complete, 1-based), missing
    LINE_ALREADY_WON = "line_already_won"  # facts: line_at (an earlier ball)
    LINE_ALREADY_PAID = "line_already_paid"  # facts: line_at (this very ball, its prize paid)


# The English sentence of each code (the audit's): "%(subject)s" is "Card 16" ("The card" with no serial),
# "%(missing)s" the numbers as a caller reads them ("25, 35 and 75"); the other figures are the facts'.
VERDICTS_EN: dict[VerdictCode, str] = {
    VerdictCode.BINGO: "%(subject)s has bingo, complete at ball %(at)s (claim at ball %(bound)s)",
    VerdictCode.LINE: "%(subject)s has a line: row %(row)s complete at ball %(at)s (claim at ball %(bound)s)",
    VerdictCode.GAME_CLOSED: "The game is closed: no more claims",
    VerdictCode.NO_BALLS: "No ball has been drawn yet",
    VerdictCode.NOT_SOLD: "%(subject)s is not sold in this game",
    VerdictCode.BINGO_INCOMPLETE: "%(subject)s is not complete: %(missing)s not drawn",
    VerdictCode.LINE_INCOMPLETE: "%(subject)s has no complete line: row %(row)s still needs %(missing)s",
    VerdictCode.LINE_ALREADY_WON: "Line already won at ball %(line_at)s; this claim is at ball %(bound)s",
    VerdictCode.LINE_ALREADY_PAID: "The Line was already won and paid at ball %(line_at)s",
}

Facts = dict[str, int | list[int] | None]


def verdict_sentence(code: VerdictCode | str, facts: Mapping[str, object]) -> str:
    """A verdict's English sentence (the audit's), from its code and facts."""
    serial = facts.get("serial")
    missing = facts.get("missing")
    words = {
        **facts,
        "subject": "The card" if serial is None else f"Card {serial}",
        "missing": _join(missing) if isinstance(missing, list) and missing else "",
    }
    return VERDICTS_EN[VerdictCode(code)] % words


@dataclass(frozen=True)
class Verdict:
    """Outcome of one claim.

    `bound_ordinal` is the ball the claim is bound to (0 if none drawn); `completed_at` the
    ordinal at which the card completed what was claimed; `missing` the undrawn numbers (for a
    line, those of the row closest to completion); `winning_row` the 0-based row of the line.
    `code` and `facts` are what it says, as data (the figures of its sentence: serial, bound, at, row,
    line_at, missing); `reason` is that said in English.
    """

    valid: bool
    refusal: Refusal | None
    bound_ordinal: int
    completed_at: int | None
    reason: str
    missing: tuple[int, ...] = ()
    winning_row: int | None = None
    code: VerdictCode = VerdictCode.NO_BALLS
    facts: Mapping[str, int | list[int] | None] = field(default_factory=dict)


def _verdict(
    code: VerdictCode,
    facts: Facts,
    *,
    refusal: Refusal | None,
    bound: int,
    completed_at: int | None = None,
    missing: tuple[int, ...] = (),
    winning_row: int | None = None,
) -> Verdict:
    return Verdict(
        valid=refusal is None,
        refusal=refusal,
        bound_ordinal=bound,
        completed_at=completed_at,
        reason=verdict_sentence(code, facts),
        missing=missing,
        winning_row=winning_row,
        code=code,
        facts=facts,
    )


def _join(numbers: Sequence[int]) -> str:
    """'5', '5 and 7', '5, 7 and 9': how a caller reads numbers out."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _drawn_status(numbers: frozenset[int], ordinals: Mapping[int, int]) -> tuple[int | None, tuple[int, ...]]:
    """(ordinal completing `numbers` or None, their undrawn members sorted)."""
    missing = tuple(sorted(n for n in numbers if n not in ordinals))
    return (None if missing else max(ordinals[n] for n in numbers)), missing


def _closest_row(rows: Sequence[tuple[int | None, tuple[int, ...]]]) -> int:
    """The 0-based row with the fewest numbers still undrawn (the first on a tie)."""
    return min(range(len(rows)), key=lambda r: len(rows[r][1]))


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
    facts: Facts = {"serial": serial, "bound": bound}

    if game_closed:
        return _verdict(VerdictCode.GAME_CLOSED, facts, refusal=Refusal.GAME_CLOSED, bound=bound)
    if not balls:
        return _verdict(VerdictCode.NO_BALLS, facts, refusal=Refusal.NO_BALLS, bound=bound)
    if card is None:
        return _verdict(VerdictCode.NOT_SOLD, facts, refusal=Refusal.NOT_SOLD, bound=bound)

    if kind is ClaimKind.BINGO:
        at, missing = _drawn_status(card.numbers, ordinals)
        if at is None:
            facts["missing"] = list(missing)
            return _verdict(
                VerdictCode.BINGO_INCOMPLETE,
                facts,
                refusal=Refusal.NOT_COMPLETE,
                bound=bound,
                missing=missing,
            )
        facts["at"] = at
        return _verdict(VerdictCode.BINGO, facts, refusal=None, bound=bound, completed_at=at)

    rows = [_drawn_status(row, ordinals) for row in card.row_numbers]
    complete = [(at, r) for r, (at, _) in enumerate(rows) if at is not None]
    # The first row to complete is the line (lowest index on a tie); else show the closest row.
    line_at, row = min(complete) if complete else (None, None)
    closest = _closest_row(rows)
    missing = rows[closest][1]
    if line_confirmed_at is not None and line_confirmed_at < bound:
        # Checked before completeness: the line prize is gone whatever this card holds.
        facts["line_at"] = line_confirmed_at
        return _verdict(
            VerdictCode.LINE_ALREADY_WON,
            facts,
            refusal=Refusal.LINE_ALREADY_WON,
            bound=bound,
            completed_at=line_at,
            missing=missing,
            winning_row=row,
        )
    if row is None:
        facts.update(row=closest + 1, missing=list(missing))
        return _verdict(
            VerdictCode.LINE_INCOMPLETE, facts, refusal=Refusal.NOT_COMPLETE, bound=bound, missing=missing
        )
    facts.update(row=row + 1, at=line_at)
    return _verdict(VerdictCode.LINE, facts, refusal=None, bound=bound, completed_at=line_at, winning_row=row)


def line_already_paid(verdict: Verdict, line_won_at: int) -> Verdict:
    """A valid Line claimed at the very ball of a Line already paid ("any more lines?" closed, TB-08): the
    prize is gone, so the verdict becomes a refusal."""
    facts: Facts = {
        "serial": verdict.facts.get("serial"),
        "bound": verdict.bound_ordinal,
        "line_at": line_won_at,
    }
    return _verdict(
        VerdictCode.LINE_ALREADY_PAID,
        facts,
        refusal=Refusal.LINE_ALREADY_WON,
        bound=verdict.bound_ordinal,
        completed_at=verdict.completed_at,
        winning_row=verdict.winning_row,
    )


def stored_verdict(
    *,
    kind: str,
    serial: int,
    valid: bool,
    refusal: str,
    bound_ordinal: int,
    completed_at: int | None,
    winning_row: int | None,
    line_won_at: int | None,
    card: CardGrid | None,
    balls: Sequence[int],
) -> tuple[VerdictCode, Facts]:
    """The code and facts of a verdict a claim's row keeps (its kind, refusal, balls and rows), as
    `judge_claim` gave them: `balls` are the game's balls in order (those up to the claim's ball count),
    `card` its grid (needed for an incomplete claim's missing numbers), `line_won_at` the game's Line."""
    facts: Facts = {"serial": serial, "bound": bound_ordinal}
    if valid:
        if kind == ClaimKind.BINGO:
            return VerdictCode.BINGO, {**facts, "at": completed_at}
        return VerdictCode.LINE, {**facts, "row": (winning_row or 0) + 1, "at": completed_at}
    if refusal == Refusal.LINE_ALREADY_WON:
        facts["line_at"] = line_won_at
        paid = line_won_at is not None and line_won_at >= bound_ordinal
        return (VerdictCode.LINE_ALREADY_PAID if paid else VerdictCode.LINE_ALREADY_WON), facts
    if refusal == Refusal.NOT_COMPLETE and card is not None:
        ordinals = ordinal_map(balls[:bound_ordinal])
        if kind == ClaimKind.BINGO:
            return VerdictCode.BINGO_INCOMPLETE, {
                **facts,
                "missing": list(_drawn_status(card.numbers, ordinals)[1]),
            }
        rows = [_drawn_status(row, ordinals) for row in card.row_numbers]
        closest = _closest_row(rows)
        return VerdictCode.LINE_INCOMPLETE, {**facts, "row": closest + 1, "missing": list(rows[closest][1])}
    if refusal in (Refusal.GAME_CLOSED, Refusal.NO_BALLS, Refusal.NOT_SOLD):
        return VerdictCode(refusal), facts
    raise ValueError(f"a refused claim's row with refusal {refusal!r} and card {card is not None}")
