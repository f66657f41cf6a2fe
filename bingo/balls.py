"""Ball colours (TB-06): every number of a set has one colour; a set shows at least four (OP-09).

A set's colour map keeps codes ("red", "yellow", …): they are data, said in the reader's language only when
shown (bingo.traditional.labels). A map written by hand (`parse_colour_ranges`) may name its colours by their
code or
by the names a Spanish hall writes ("1-18 rojo, 19-36 amarillo, …"), in any case, with or without accents.
Pure: its refusals carry a reason and the facts (`ColourRangeError`, `ColourProblem`), which a door says
in the reader's language (bingo.traditional.labels) and whose str() is the English sentence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

# A common five-colour set: eighteen numbers per colour.
DEFAULT_PALETTE = ("red", "yellow", "green", "blue", "purple")
KNOWN_COLOURS = frozenset({*DEFAULT_PALETTE, "orange", "pink", "white", "black", "brown", "grey", "cyan"})

# Every name a hand-written map may give a colour, by its code: the code itself, then the names a Spanish
# hall writes (masculine as the page says them, "rojo"; feminine as a ball is, "roja"). The page's own
# Spanish names are bingo.traditional.labels.COLOURS' translations, and each of them is one of these (a test
# holds it).
COLOUR_NAMES: dict[str, tuple[str, ...]] = {
    "red": ("red", "rojo", "roja"),
    "yellow": ("yellow", "amarillo", "amarilla"),
    "green": ("green", "verde"),
    "blue": ("blue", "azul"),
    "purple": ("purple", "morado", "morada", "violeta"),
    "orange": ("orange", "naranja"),
    "pink": ("pink", "rosa"),
    "white": ("white", "blanco", "blanca"),
    "black": ("black", "negro", "negra"),
    "brown": ("brown", "marrón"),
    "grey": ("grey", "gray", "gris"),
    "cyan": ("cyan", "cian"),
}


def plain(name: str) -> str:
    """A colour name as the parser compares it: lower case, without accents ("Marrón" → "marron")."""
    decomposed = unicodedata.normalize("NFKD", name.strip().casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_CODE_OF: dict[str, str] = {plain(n): code for code, names in COLOUR_NAMES.items() for n in names}


def colour_code(name: str) -> str | None:
    """The stored code of a colour named in English or Spanish (None for a name not known)."""
    return _CODE_OF.get(plain(name))


class ColourProblem(NamedTuple):
    """Why a colour map is not a usable ball set: a reason and its facts (str(): in English)."""

    reason: str  # "missing_balls", "not_balls", "unknown_colours", "too_few_colours"
    facts: Mapping[str, Any]

    def __str__(self) -> str:
        return PROBLEMS_EN[self.reason] % dict(self.facts)


PROBLEMS_EN = {
    "missing_balls": "no colour for balls %(balls)s",
    "not_balls": "not ball numbers: %(keys)s",
    "unknown_colours": "unknown colours %(colours)s (known: %(known)s)",
    "too_few_colours": "a ball set has at least four colours",
}


class ColourRangeError(ValueError):
    """A part of a hand-written colour map that cannot be read: which part, why, and the facts."""

    def __init__(self, reason: str, part: str, **facts: Any) -> None:
        self.reason = reason  # one of RANGE_ERRORS_EN's keys
        self.part = part
        self.facts = {"part": part, **facts}
        super().__init__(RANGE_ERRORS_EN[reason] % self.facts)


RANGE_ERRORS_EN = {
    "not_range_and_colour": "%(part)r: write a range and a colour, e.g. '1-18 red'",
    "not_numbers": "%(part)r: %(numbers)r is not a number or a range of numbers",
    "out_of_range": "%(part)r: balls are numbered 1 to 90, low to high",
    "ball_twice": "%(part)r: ball %(ball)s has a colour already",
    "unknown_colour": "%(part)r: %(colour)r is not a colour a ball set has",
}


def default_colours() -> dict[str, str]:
    return {str(n): DEFAULT_PALETTE[(n - 1) // 18] for n in range(1, 91)}


def colour_problems(colours: Mapping[str, str]) -> list[ColourProblem]:
    """Why a colour map is not a usable ball set (empty when it is)."""
    problems = []
    missing = [n for n in range(1, 91) if str(n) not in colours]
    if missing:
        problems.append(ColourProblem("missing_balls", {"balls": missing}))
    extra = sorted(k for k in colours if not (k.isdigit() and 1 <= int(k) <= 90))
    if extra:
        problems.append(ColourProblem("not_balls", {"keys": extra}))
    unknown = sorted({c for c in colours.values()} - KNOWN_COLOURS)
    if unknown:
        problems.append(
            ColourProblem("unknown_colours", {"colours": unknown, "known": sorted(KNOWN_COLOURS)})
        )
    if len(set(colours.values())) < 4:
        problems.append(ColourProblem("too_few_colours", {}))
    return problems


def parse_colour_ranges(text: str) -> dict[str, str]:
    """A colour map written by hand, a range a line or separated by commas: "1-18 rojo, 19-36 amarillo, …"
    or "1-18 red, …" (a single number is a range of one; each colour by a name of COLOUR_NAMES, in any
    case, with or without accents), as the map of codes a set keeps. Raises ColourRangeError naming the
    bad part; the map's own problems (a ball with no colour, fewer than four colours) are
    `colour_problems`'."""
    colours: dict[str, str] = {}
    for part in (p.strip() for chunk in text.splitlines() for p in chunk.split(",")):
        if not part:
            continue
        pieces = part.split()
        if len(pieces) != 2:
            raise ColourRangeError("not_range_and_colour", part)
        numbers, name = pieces
        first, _, last = numbers.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise ColourRangeError("not_numbers", part, numbers=numbers)
        low, high = int(first), int(last or first)
        if not 1 <= low <= high <= 90:
            raise ColourRangeError("out_of_range", part)
        colour = colour_code(name)
        if colour is None:
            raise ColourRangeError("unknown_colour", part, colour=name)
        for n in range(low, high + 1):
            if str(n) in colours:
                raise ColourRangeError("ball_twice", part, ball=n)
            colours[str(n)] = colour
    return colours


def colour_ranges(colours: Mapping[str, str], name: Callable[[str], str] = str) -> str:
    """The map as `parse_colour_ranges` reads it: the runs of one colour, in ball order, each colour said
    by `name` (its code by default; a page says it in the reader's language,
    bingo.traditional.labels.colour_label,
    which the parser reads back when that language is English or Spanish)."""
    runs: list[tuple[int, int, str]] = []
    for n in range(1, 91):
        colour = colours.get(str(n), "")
        if runs and runs[-1][2] == colour and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n, colour)
        else:
            runs.append((n, n, colour))
    return ", ".join(f"{a}-{b} {name(c)}" if a != b else f"{a} {name(c)}" for a, b, c in runs if c)
