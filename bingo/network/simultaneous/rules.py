"""Pure rules of a simultaneous game (no Django): the allocation of one network series to the member halls,
and who wins a prize among the claims the central holds.

Allocation: the central's one network series is cut into contiguous runs of whole strips, one run per hall,
in the order given. Runs never overlap and the cards of one series never repeat a face (bingo.cardgen), so
no two cards of the network game have the same numbers.

Winners: a prize goes to the claims bound to the lowest extraction order among the valid claims for it,
network-wide for a network prize, within the hall for the hall's prize; every claim at that order shares
equally to the cent (bingo.prizes.split_equally records the remainder).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CARDS_PER_STRIP = 6


@dataclass(frozen=True)
class Run:
    """A hall's allocated cards: serials `first`..`last` of the network series (whole strips)."""

    hall: str  # the hall's licence number
    first: int
    last: int

    @property
    def cards(self) -> int:
        return self.last - self.first + 1

    def holds(self, first: int, last: int) -> bool:
        return self.first <= first <= last <= self.last


def allocate(strips: Sequence[tuple[str, int]]) -> list[Run]:
    """Cut the network series into one run per hall: (licence, strips) in order; each hall once, each
    at least one strip. The series has sum(strips) strips; serials start at 1."""
    halls = [hall for hall, _ in strips]
    if len(set(halls)) != len(halls):
        raise ValueError("a hall is allocated once per network game")
    runs = []
    next_serial = 1
    for hall, count in strips:
        if count < 1:
            raise ValueError(f"hall {hall} gets at least one strip, not {count}")
        last = next_serial + count * CARDS_PER_STRIP - 1
        runs.append(Run(hall, next_serial, last))
        next_serial = last + 1
    return runs


@dataclass(frozen=True)
class Candidate:
    """A valid claim the central holds: its hall, the venue's claim reference and its extraction order."""

    hall: str
    claim: int
    ordinal: int


def first_ordinal(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The claims bound to the lowest extraction order (the co-winners), in (hall, claim) order; none for
    no candidates."""
    if not candidates:
        return []
    lowest = min(c.ordinal for c in candidates)
    return sorted((c for c in candidates if c.ordinal == lowest), key=lambda c: (c.hall, c.claim))


def hall_winners(candidates: Sequence[Candidate]) -> dict[str, list[Candidate]]:
    """Each hall's own prize: the first-ordinal claims among that hall's claims only."""
    by_hall: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_hall.setdefault(candidate.hall, []).append(candidate)
    return {hall: first_ordinal(claims) for hall, claims in sorted(by_hall.items())}
