"""Hooks that let an app above bingo plug into its rooms without bingo importing it (DESIGN §2).

Room players: something that plays rooms by itself (the demo's self-playing rooms, demo.autoplay): which
rooms it plays (the console marks them) and what it does after each ball the draw task draws in them.
With none registered (production) nothing plays by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from bingo.models import Game


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


def after_ball(game: Game) -> None:
    for player in _players:
        player.after_ball(game)


# --- Relayed games: a game whose play another app drives (bingo.simultaneous's mirror of a network game) --
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
