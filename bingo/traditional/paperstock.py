"""The paper stock of a series as ranges of serials, and the arithmetic of its moves (pure: no Django).

A hall receives, issues to a game, takes back and destroys ranges of a series ("serials 1–600 received;
1–120 issued to game 7; 101–120 returned; 121–130 destroyed"). The stock of a series is a sorted list of
disjoint `Span`s, each a range in one state (and, issued or returned, the game it went to); a serial no span
holds has not been received. `move` applies one movement to that list or refuses it whole, naming the spans
at fault; `blocked` and `sellable` say which serials a game may sell or print.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

RECEIVED = "received"
IN_STOCK = "in_stock"
ISSUED = "issued"
RETURNED = "returned"
DESTROYED = "destroyed"
NOT_RECEIVED = ""  # a serial no movement has recorded yet
STATES = (RECEIVED, IN_STOCK, ISSUED, RETURNED, DESTROYED)

# From each state, the states a serial may go to.
MOVES: dict[str, tuple[str, ...]] = {
    NOT_RECEIVED: (RECEIVED,),
    RECEIVED: (IN_STOCK, DESTROYED),
    IN_STOCK: (ISSUED, DESTROYED),
    ISSUED: (RETURNED,),
    RETURNED: (IN_STOCK, DESTROYED),
    DESTROYED: (),
}
# The states that keep the game their serials were issued to.
WITH_GAME = (ISSUED, RETURNED)


@dataclass(frozen=True, order=True)
class Span:
    """Serials first..last (inclusive) of a series, all in `state`; `game` for issued and returned."""

    first: int
    last: int
    state: str
    game: int | None = None

    @property
    def cards(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class Moved:
    """A movement applied: the series' stock after it, and the parts moved as they were before it (one per
    state and game they left, in serial order)."""

    spans: tuple[Span, ...]
    pieces: tuple[Span, ...]


class Refused(Exception):
    """A movement that does not fit; `spans` are the parts of its range at fault, as they stand."""

    def __init__(self, code: str, spans: Sequence[Span] = ()) -> None:
        super().__init__(code)
        self.code = code
        self.spans = tuple(spans)


def normalise(spans: Iterable[Span]) -> tuple[Span, ...]:
    """Sorted, with touching spans of the same state and game joined."""
    out: list[Span] = []
    for span in sorted(spans):
        if (
            out
            and out[-1].last + 1 == span.first
            and (out[-1].state, out[-1].game) == (span.state, span.game)
        ):
            out[-1] = replace(out[-1], last=span.last)
        else:
            out.append(span)
    return tuple(out)


def within(spans: Sequence[Span], first: int, last: int) -> tuple[Span, ...]:
    """The range first..last as it stands: the spans' parts inside it, and NOT_RECEIVED spans for the gaps."""
    out: list[Span] = []
    at = first
    for span in sorted(spans):
        if span.last < first or span.first > last:
            continue
        lo, hi = max(span.first, first), min(span.last, last)
        if lo > at:
            out.append(Span(at, lo - 1, NOT_RECEIVED))
        out.append(replace(span, first=lo, last=hi))
        at = hi + 1
    if at <= last:
        out.append(Span(at, last, NOT_RECEIVED))
    return tuple(out)


def move(
    spans: Sequence[Span], *, size: int, first: int, last: int, to: str, game: int | None = None
) -> Moved:
    """Move serials first..last of a series of `size` cards to state `to`, or refuse (`Refused`) changing
    nothing: ``bad_range`` (backwards), ``range_not_in_series``, ``bad_stock_state``, ``game_required``
    (issuing names a game), ``bad_stock_move`` (the spans whose state cannot go to `to`, every one named),
    ``several_games`` (a return takes back serials of one game at a time), ``issued_elsewhere`` (a return
    naming a game takes back only serials issued to it)."""
    if first > last:
        raise Refused("bad_range")
    if first < 1 or last > size:
        raise Refused("range_not_in_series")
    if to not in STATES:
        raise Refused("bad_stock_state")
    if to == ISSUED and game is None:
        raise Refused("game_required")
    inside = within(spans, first, last)
    wrong = [s for s in inside if to not in MOVES[s.state]]
    if wrong:
        raise Refused("bad_stock_move", normalise(wrong))
    if to == RETURNED:
        games = {s.game for s in inside}
        if len(games) > 1:
            raise Refused("several_games", normalise(inside))
        if game is not None and games != {game}:
            raise Refused("issued_elsewhere", normalise(inside))
        game = games.pop()
    elif to != ISSUED:
        game = None
    kept = [s for s in spans if s.last < first or s.first > last]
    kept += [replace(s, last=first - 1) for s in spans if s.first < first <= s.last]
    kept += [replace(s, first=last + 1) for s in spans if s.first <= last < s.last]
    return Moved(normalise([*kept, Span(first, last, to, game)]), normalise(inside))


def counts(spans: Iterable[Span], size: int) -> dict[str, int]:
    """Cards in each state (NOT_RECEIVED: those no movement has recorded); they add up to `size`."""
    out = dict.fromkeys((*STATES, NOT_RECEIVED), 0)
    for span in spans:
        out[span.state] += span.cards
    out[NOT_RECEIVED] = size - sum(out[s] for s in STATES)
    return out


def blocked(spans: Sequence[Span], first: int, last: int, game: int) -> tuple[Span, ...]:
    """The parts of first..last that game `game` may not sell or print: destroyed, or issued to another
    game. Serials received, in stock, returned or not recorded are the hall's to sell, as a series kept by
    no stock always was."""
    return tuple(
        s
        for s in within(spans, first, last)
        if s.state == DESTROYED or (s.state == ISSUED and s.game != game)
    )


def subtract(ranges: Iterable[tuple[int, int]], taken: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The serials of `ranges` not in `taken`, as sorted disjoint ranges."""
    out: list[tuple[int, int]] = []
    cuts = sorted(taken)
    for lo, hi in sorted(ranges):
        at = lo
        for a, b in cuts:
            if b < at or a > hi:
                continue
            if a > at:
                out.append((at, a - 1))
            at = max(at, b + 1)
            if at > hi:
                break
        if at <= hi:
            out.append((at, hi))
    return out


def sellable(spans: Sequence[Span], size: int, game: int) -> list[tuple[int, int]]:
    """The ranges of a series of `size` cards that game `game` may sell (see `blocked`)."""
    return subtract([(1, size)], [(s.first, s.last) for s in blocked(spans, 1, size, game)])


def first_run(free: Iterable[tuple[int, int]], count: int) -> int | None:
    """The first serial of the lowest `count` consecutive serials inside one of the `free` ranges."""
    for lo, hi in sorted(free):
        if hi - lo + 1 >= count:
            return lo
    return None


def runs(serials: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted serials as ranges: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(serials)):
        if out and out[-1][1] + 1 == n:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def shown(spans: Iterable[Span | tuple[int, int]]) -> str:
    """Ranges as a person reads them: "101–120, 125"."""
    parts = []
    for s in spans:
        lo, hi = (s.first, s.last) if isinstance(s, Span) else s
        parts.append(f"{lo}–{hi}" if lo != hi else str(lo))
    return ", ".join(parts)
