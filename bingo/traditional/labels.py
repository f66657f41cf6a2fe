"""How the records say the codes stored in rows (issue 15): each code a gettext label, chosen at display.

Rows keep their codes (a colour "red", a claim's refusal "not_complete", a prize's remainder destination),
so a record reads in the language of whoever opens it; nothing here is stored. The inspector's pages,
PDFs and CSV (bingo.venuewide.records, bingo.venuewide.inspector) print through these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from bingo.balls import ColourProblem, ColourRangeError
from bingo.claims import Refusal, VerdictCode

COLOURS: dict[str, Promise] = {
    "red": gettext_lazy("red"),
    "yellow": gettext_lazy("yellow"),
    "green": gettext_lazy("green"),
    "blue": gettext_lazy("blue"),
    "purple": gettext_lazy("purple"),
    "orange": gettext_lazy("orange"),
    "pink": gettext_lazy("pink"),
    "white": gettext_lazy("white"),
    "black": gettext_lazy("black"),
    "brown": gettext_lazy("brown"),
    "grey": gettext_lazy("grey"),
    "cyan": gettext_lazy("cyan"),
}

# Where the remainder of an equal split went (bingo.traditional.services.claims.REMAINDER_TO), as stored.
REMAINDERS: dict[str, Promise] = {
    "house: rounding residue of an equal split (OP-10)": gettext_lazy(
        "the house (rounding residue of an equal split, OP-10)"
    ),
}


def colour_label(code: str) -> str:
    """A ball's colour, said in the reader's language ('' when the ball set has none)."""
    label = COLOURS.get(code)
    return str(label) if label is not None else code


def colour_list(codes: Sequence[str]) -> str:
    return ", ".join(colour_label(c) for c in codes)


def colour_range_error(error: ColourRangeError) -> str:
    """Why a part of a hand-written colour map cannot be read (bingo.balls.parse_colour_ranges), said in
    the reader's language, quoting the part as written."""
    facts = {**error.facts, "part": f"«{error.part}»"}
    if error.reason == "not_range_and_colour":
        return _("%(part)s: write a range of balls and a colour, e.g. “%(example)s”") % {
            **facts,
            "example": f"1-18 {colour_label('red')}",
        }
    if error.reason == "not_numbers":
        return _("%(part)s: “%(numbers)s” is not a ball number or a range of them") % facts
    if error.reason == "out_of_range":
        return _("%(part)s: balls are numbered 1 to 90, the lower first") % facts
    if error.reason == "ball_twice":
        return _("%(part)s: ball %(ball)s has a colour already") % facts
    if error.reason == "unknown_colour":
        return _("%(part)s: “%(colour)s” is not a colour of a ball set (%(known)s)") % {
            **facts,
            "known": colour_list(list(COLOURS)),
        }
    return str(error)


def colour_problem(problem: ColourProblem) -> str:
    """Why a colour map is not a usable ball set (bingo.balls.colour_problems), in the reader's language."""
    facts = problem.facts
    if problem.reason == "missing_balls":
        return _("no colour for balls %(balls)s") % {"balls": facts["balls"]}
    if problem.reason == "not_balls":
        return _("not ball numbers: %(keys)s") % {"keys": facts["keys"]}
    if problem.reason == "unknown_colours":
        return _("unknown colours %(colours)s (known: %(known)s)") % {
            "colours": ", ".join(facts["colours"]),
            "known": ", ".join(facts["known"]),  # the codes: only a map of codes (the API's) has these
        }
    if problem.reason == "too_few_colours":
        return _("a ball set has at least four colours")
    return str(problem)


def remainder_label(stored: str) -> str:
    label = REMAINDERS.get(stored)
    return str(label) if label is not None else stored


def check_result(ok: bool) -> str:
    return _("Working") if ok else _("Not working")


def _numbers(numbers: Sequence[int]) -> str:
    """'5', '5 y 7', '5, 7 y 9': numbers as the reader's language lists them."""
    words = [str(n) for n in numbers]
    if len(words) <= 1:
        return "".join(words)
    return _("%(first)s and %(last)s") % {"first": ", ".join(words[:-1]), "last": words[-1]}


def verdict_text(code: str, facts: Mapping[str, Any]) -> str:
    """A claim's verdict as it is judged (bingo.claims.VerdictCode and its facts), in the
    reader's language
    (the console says the same from its JS catalogue)."""
    missing = facts.get("missing")
    words = {**facts, "missing": _numbers(missing) if isinstance(missing, list) else ""}
    sentences = {
        VerdictCode.BINGO: _("Card %(serial)s has bingo, complete at ball %(at)s (claim at ball %(bound)s)"),
        VerdictCode.LINE: _(
            "Card %(serial)s has a line: row %(row)s complete at ball %(at)s (claim at ball %(bound)s)"
        ),
        VerdictCode.GAME_CLOSED: _("The game is closed: no more claims"),
        VerdictCode.NO_BALLS: _("No ball has been drawn yet"),
        VerdictCode.NOT_SOLD: _("Card %(serial)s is not sold in this game"),
        VerdictCode.BINGO_INCOMPLETE: _("Card %(serial)s is not complete: %(missing)s not drawn"),
        VerdictCode.LINE_INCOMPLETE: _(
            "Card %(serial)s has no complete line: row %(row)s still needs %(missing)s"
        ),
        VerdictCode.LINE_ALREADY_WON: _(
            "Line already won at ball %(line_at)s; this claim is at ball %(bound)s"
        ),
        VerdictCode.LINE_ALREADY_PAID: _("The Line was already won and paid at ball %(line_at)s"),
    }
    sentence = sentences.get(VerdictCode(code)) if code in VerdictCode.__members__.values() else None
    return sentence % words if sentence is not None else code


def claim_reason(
    *,
    kind: str,
    serial: int,
    valid: bool,
    refusal: str,
    bound_ordinal: int,
    completed_at: int | None,
    winning_row: int | None,
    line_won_at: int | None = None,
    missing: Sequence[int] = (),
) -> str:
    """The verification of a claim in words, from what its row keeps (the stored English sentence is the
    audit's; this is what a person reads)."""
    facts = {
        "serial": serial,
        "bound": bound_ordinal,
        "at": completed_at,
        "row": (winning_row or 0) + 1,
        "line_at": line_won_at,
        "missing": _numbers(missing),
    }
    if valid:
        if kind == "bingo":
            return _("Card %(serial)s has bingo, complete at ball %(at)s (claim at ball %(bound)s)") % facts
        return (
            _("Card %(serial)s has a line: row %(row)s complete at ball %(at)s (claim at ball %(bound)s)")
            % facts
        )
    if refusal == Refusal.NOT_SOLD:
        return _("Card %(serial)s is not sold in this game") % facts
    if refusal == Refusal.NO_BALLS:
        return _("No ball had been drawn yet")
    if refusal == Refusal.GAME_CLOSED:
        return _("The game was closed: no more claims")
    if refusal == Refusal.LINE_ALREADY_WON:
        if line_won_at is None:
            return _("The Line was already won; this claim is at ball %(bound)s") % facts
        return _("The Line was already won at ball %(line_at)s; this claim is at ball %(bound)s") % facts
    if refusal == Refusal.NOT_COMPLETE:
        if not missing:
            return _("Card %(serial)s was not complete at ball %(bound)s") % facts
        if kind == "bingo":
            return _("Card %(serial)s was not complete at ball %(bound)s: missing %(missing)s") % facts
        return (
            _("Card %(serial)s had no complete line at ball %(bound)s: its closest row missed %(missing)s")
            % facts
        )
    return refusal
