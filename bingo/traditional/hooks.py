"""Hooks that let an app above bingo plug into its rooms without bingo importing it (DESIGN §2).

Room players: something that plays rooms by itself (the demo's self-playing rooms, demo.autoplay): which
rooms it plays (the console marks them) and what it does after each ball the draw task draws in them.
With none registered (production) nothing plays by itself.

Game listeners: what an app above bingo does, in the game's own transaction, when a game's sales close
and when it ends (the interconnected prize's outbox messages, bingo.network.interconnected).

Records sections: what a wing above traditional bingo adds to the inspector's records (the session minutes
and the statistics, bingo.venuewide.records), read through that wing's read model as plain values.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from bingo.traditional.models import Game


@dataclass(frozen=True)
class RoomPlayer:
    plays: Callable[[Collection[int]], set[int]]  # of these room ids, the ones it plays
    after_ball: Callable[[Game], None]  # called with every game that drew a ball; it checks the room


_players: list[RoomPlayer] = []


def register_room_player(player: RoomPlayer) -> None:
    if player not in _players:
        _players.append(player)


def self_playing(room_ids: Collection[int]) -> set[int]:
    """Of ``room_ids``, those a registered player plays by itself."""
    return {room_id for player in _players for room_id in player.plays(room_ids)} if room_ids else set()


# Console links: an app above bingo whose games a room plays shows the caller a page of its own (a
# simultaneous game's hall page): room id -> [(label, url)], read-only.
_console_links: list[Callable[[Collection[int]], dict[int, list[tuple[str, str]]]]] = []


def register_console_links(links: Callable[[Collection[int]], dict[int, list[tuple[str, str]]]]) -> None:
    if links not in _console_links:
        _console_links.append(links)


def console_links(room_ids: Collection[int]) -> dict[int, list[tuple[str, str]]]:
    """Of ``room_ids``, the pages registered apps show for each (room id -> [(label, url)])."""
    found: dict[int, list[tuple[str, str]]] = {}
    for links in _console_links:
        for room_id, shown in links(room_ids).items():
            found.setdefault(room_id, []).extend(shown)
    return found


def after_ball(game: Game) -> None:
    for player in _players:
        player.after_ball(game)


# Game listeners: an app above bingo that owes something to the close of a game's sales or to its end (the
# interconnected prize, bingo.network.interconnected, writes its outbox message with the fact). Each runs
# INSIDE the
# service's transaction, under the game's lock: what it writes commits or rolls back with the fact.
@dataclass(frozen=True)
class GameListener:
    # close_sales, once the game is saved with its sales, prizes and announcement and audited (last:
    # what it writes after its own audit entry takes the last locks, an outbox number)
    sales_closed: Callable[[Game], None]
    # the game ended: its Bingo confirmed and the game closed, or the game voided
    ended: Callable[[Game], None]


_game_listeners: list[GameListener] = []


def register_game_listener(listener: GameListener) -> None:
    if listener not in _game_listeners:
        _game_listeners.append(listener)


def sales_closed(game: Game) -> None:
    for listener in _game_listeners:
        listener.sales_closed(game)


def game_ended(game: Game) -> None:
    for listener in _game_listeners:
        listener.ended(game)


# --- Relayed games: a game whose play another app drives (bingo.network.simultaneous's mirror of a network
# game) --
# A guard returns why a traditional command (sell, return, enter a ball, claim, confirm, close the sales,
# start the draw) is refused on `game`, or None; the driving app lets its own calls through itself.
GameGuard = Callable[[Game], str | None]
_guards: list[GameGuard] = []


def register_game_guard(guard: GameGuard) -> None:
    if guard not in _guards:
        _guards.append(guard)


def refuse_relayed(game: Game) -> None:
    """Raise Conflict `relayed_game` if a guard refuses traditional commands on this game."""
    for guard in _guards:
        message = guard(game)
        if message:
            from halls.errors import Conflict

            raise Conflict(message, code="relayed_game")


# --- A prize of a traditional game decided by a wing above it --------------------------------------------


@dataclass(frozen=True)
class WonPrize:
    """A prize won in a hall's traditional game that nobody here confirmed (the network's central decided
    it), as the network wing's read models report it to the session's minutes (bingo.venuewide.records)."""

    game_id: int
    label: str
    ordinal: int | None  # the ball it was won at, or the most it could take
    amount: Decimal
    card: str = ""  # "series #serial", when one card won it


# Prizes decided elsewhere: a game whose prizes another app decides (a network game's copy in a hall, whose
# Line and Bingo the central decides, bingo.network.simultaneous) has them shown as its own are (the screens'
# and
# consoles' snapshots, bingo.traditional.services.readmodels.game_summary), in the shape of a prize.awarded
# event.
DecidedPrizes = Callable[[Game], list[dict[str, Any]]]
_decided_prizes: list[DecidedPrizes] = []


def register_decided_prizes(source: DecidedPrizes) -> None:
    if source not in _decided_prizes:
        _decided_prizes.append(source)


def decided_prizes(game: Game) -> list[dict[str, Any]]:
    """The prizes registered apps decided for `game` outside it, in the order decided."""
    return [prize for source in _decided_prizes for prize in source(game)]


# --- A hall's copy of a game another installation reports -------------------------------------------------
# A game whose facts the authority's feed gets from elsewhere (a hall's copy of a network game: the central
# reports it, bingo.network.simultaneous): its balls, prizes and end are not this hall's feed messages.
_elsewhere: list[Callable[[Game], bool]] = []


def register_reported_elsewhere(predicate: Callable[[Game], bool]) -> None:
    if predicate not in _elsewhere:
        _elsewhere.append(predicate)


def reported_elsewhere(game: Game) -> bool:
    return any(predicate(game) for predicate in _elsewhere)
