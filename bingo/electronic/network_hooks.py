"""The hook through which an app above bingo.electronic switches on a speciality's network prizes (Gran Línea,
Gran Bingo: AB-05, AB-08) without bingo.electronic importing it (DESIGN §2; bingo.network.interconnected
registers one).

The venue never decides a network prize: its game only finds its own first Line / first Bingo and the cards
completing it at that ball (the prize table's `decide` on the Gran prizes, no money), and reports them; the
central decides across the network. Every call runs INSIDE the game's transaction, under the game's lock:

- `joins(game)` at the close of sales, before the terms are fixed (sales counted, cards > 0): the Gran
  prizes' codes of the table this game plays (it joined a network round for each); writes no audit entry.
- `sales_closed(game)` at the end of the close of sales (last: its outbox number is the last lock).
- `decided(game, decisions)` at a ball: the Gran prizes that ball decided for this hall (won: the cards
  completing the pattern first at that ball; not won: the game ended without it). No audit entry.
- `ended(game)` once the game is closed (last in the step): the hall's result goes out.

And read-only, for the terminal's snapshot: `meters(speciality)`, the network prizes' meters as the central
last sent them (after a reconnect the terminal shows them at once, not after the next meter entry).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bingo.electronic.models import ElectronicGame, Speciality
from bingo.electronic.prizetable import Decision


@dataclass(frozen=True)
class NetworkListener:
    joins: Callable[[ElectronicGame], frozenset[str]]
    sales_closed: Callable[[ElectronicGame], None]
    decided: Callable[[ElectronicGame, Sequence[Decision]], None]
    ended: Callable[[ElectronicGame], None]
    meters: Callable[[Speciality], list[dict[str, Any]]] | None = None


_listeners: list[NetworkListener] = []


def register(listener: NetworkListener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def joins(game: ElectronicGame) -> frozenset[str]:
    return frozenset(code for listener in _listeners for code in listener.joins(game))


def sales_closed(game: ElectronicGame) -> None:
    for listener in _listeners:
        listener.sales_closed(game)


def decided(game: ElectronicGame, decisions: Sequence[Decision]) -> None:
    if decisions:
        for listener in _listeners:
            listener.decided(game, decisions)


def ended(game: ElectronicGame) -> None:
    for listener in _listeners:
        listener.ended(game)


def meters(speciality: Speciality) -> list[dict[str, Any]]:
    """The speciality's network prizes' meters: [{prize, kind, name, amount, max_ball, at}]."""
    return [m for listener in _listeners if listener.meters is not None for m in listener.meters(speciality)]
