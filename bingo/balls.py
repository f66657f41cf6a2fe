"""Ball colours (TB-06): every number of a set has one colour; a set shows at least four (OP-09)."""

from __future__ import annotations

from collections.abc import Mapping

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
