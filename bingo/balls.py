"""Ball colours (TB-06): every number of a set has one colour; a set shows at least four (OP-09)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

# A common five-colour set: eighteen numbers per colour.
DEFAULT_PALETTE = ("red", "yellow", "green", "blue", "purple")
KNOWN_COLOURS = frozenset({*DEFAULT_PALETTE, "orange", "pink", "white", "black", "brown", "grey", "cyan"})


def default_colours() -> dict[str, str]:
    return {str(n): DEFAULT_PALETTE[(n - 1) // 18] for n in range(1, 91)}


def colour_problems(colours: Mapping[str, str]) -> list[str]:
    """Why a colour map is not a usable ball set (empty when it is)."""
    problems = []
    missing = [n for n in range(1, 91) if str(n) not in colours]
    if missing:
        problems.append(f"no colour for balls {missing}")
    extra = sorted(k for k in colours if not (k.isdigit() and 1 <= int(k) <= 90))
    if extra:
        problems.append(f"not ball numbers: {extra}")
    unknown = sorted({c for c in colours.values()} - KNOWN_COLOURS)
    if unknown:
        problems.append(f"unknown colours {unknown} (known: {sorted(KNOWN_COLOURS)})")
    if len(set(colours.values())) < 4:
        problems.append("a ball set has at least four colours")
    return problems


def parse_colour_ranges(text: str) -> dict[str, str]:
    """A colour map written by hand, a range a line or separated by commas: "1-18 red, 19-36 yellow, …"
    (a single number is a range of one). Raises ValueError naming the bad part; the map's own problems
    (a ball with no colour, fewer than four colours) are `colour_problems`'."""
    colours: dict[str, str] = {}
    for part in (p.strip() for chunk in text.splitlines() for p in chunk.split(",")):
        if not part:
            continue
        pieces = part.split()
        if len(pieces) != 2:
            raise ValueError(f"{part!r}: write a range and a colour, e.g. '1-18 red'")
        numbers, colour = pieces
        first, _, last = numbers.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise ValueError(f"{part!r}: {numbers!r} is not a number or a range of numbers")
        low, high = int(first), int(last or first)
        if not 1 <= low <= high <= 90:
            raise ValueError(f"{part!r}: balls are numbered 1 to 90, low to high")
        for n in range(low, high + 1):
            if str(n) in colours:
                raise ValueError(f"{part!r}: ball {n} has a colour already")
            colours[str(n)] = colour.lower()
    return colours


def colour_ranges(colours: Mapping[str, str], name: Callable[[str], str] = str) -> str:
    """The map as `parse_colour_ranges` reads it: the runs of one colour, in ball order (each colour said
    by `name`: a page shows it in the reader's language, which the parser does not read)."""
    runs: list[tuple[int, int, str]] = []
    for n in range(1, 91):
        colour = colours.get(str(n), "")
        if runs and runs[-1][2] == colour and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n, colour)
        else:
            runs.append((n, n, colour))
    return ", ".join(f"{a}-{b} {name(c)}" if a != b else f"{a} {name(c)}" for a, b, c in runs if c)
