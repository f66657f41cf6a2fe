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
