"""The locks of simultaneous bingo, through halls.locks' GAME rank (a network game and a hall game are
games: taken where a game's would be, before the cashier's and the audit chain's)."""

from __future__ import annotations

from django.db import connection

from bingo.network.simultaneous.models import HallEntry, HallGame, NetworkGame
from halls.locks import Rank, take


def lock_network_game(game_id: int) -> NetworkGame:
    """Central: the network game FOR UPDATE, with its network."""
    take(Rank.GAME, ("simultaneous", game_id))
    return NetworkGame.objects.select_for_update(of=("self",)).select_related("network").get(pk=game_id)


def share_network_game(game_id: int) -> NetworkGame:
    """Central: the network game FOR SHARE, with its network: halls' sale reports go on together, and the
    close of sales (FOR UPDATE) waits for the ones in flight, so the totals it counts are final. Its own key
    in the lock order: a sharer asking for the game FOR UPDATE would wait for the other sharers."""
    take(Rank.GAME, ("simultaneous.share", game_id))
    if connection.vendor != "postgresql":
        return lock_network_game(game_id)  # SQLite has one writer
    table = NetworkGame._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR SHARE", [game_id])  # noqa: S608 (a model's table)
    return NetworkGame.objects.select_related("network").get(pk=game_id)


def lock_hall_game(hall_game_id: int) -> HallGame:
    """Venue: the hall's copy of a network game FOR UPDATE (before its local bingo.Game)."""
    take(Rank.GAME, ("simultaneous.hall", hall_game_id))
    return HallGame.objects.select_for_update(of=("self",)).select_related("venue").get(pk=hall_game_id)


def lock_entry(entry_id: int) -> HallEntry:
    """Venue: a kept central entry FOR UPDATE, its hall's entries one at a time (before its hall game)."""
    entry = HallEntry.objects.only("venue_id").get(pk=entry_id)
    take(Rank.GAME, ("simultaneous.entries", entry.venue_id))
    return HallEntry.objects.select_for_update(of=("self",)).get(pk=entry_id)
