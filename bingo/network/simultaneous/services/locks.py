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


def share_network_games(game_ids: list[int]) -> dict[int, NetworkGame]:
    """Central: network games FOR SHARE, in id order, read by the statement that locks them: halls' sale
    reports go on together, and the close of sales (FOR UPDATE) waits for the ones in flight, so the
    totals it counts are final. Its own key in the lock order: a sharer asking for the game FOR UPDATE
    would wait for the other sharers."""
    ordered = sorted(set(game_ids))
    for game_id in ordered:
        take(Rank.GAME, ("simultaneous.share", game_id))
    if connection.vendor != "postgresql":
        return {game_id: lock_network_game(game_id) for game_id in ordered}  # SQLite has one writer
    if not ordered:
        return {}
    table = NetworkGame._meta.db_table
    shared = NetworkGame.objects.raw(
        f"SELECT * FROM {table} WHERE id = ANY(%s) ORDER BY id FOR SHARE",  # noqa: S608 (a model's table)
        [ordered],
    )
    return {game.pk: game for game in shared}


def lock_hall_game(hall_game_id: int) -> HallGame:
    """Venue: the hall's copy of a network game FOR UPDATE (before its local bingo.Game)."""
    take(Rank.GAME, ("simultaneous.hall", hall_game_id))
    return HallGame.objects.select_for_update(of=("self",)).select_related("venue").get(pk=hall_game_id)


def lock_entry(entry_id: int) -> HallEntry:
    """Venue: a kept central entry FOR UPDATE, its hall's entries one at a time (before its hall game)."""
    entry = HallEntry.objects.only("venue_id").get(pk=entry_id)
    take(Rank.GAME, ("simultaneous.entries", entry.venue_id))
    return HallEntry.objects.select_for_update(of=("self",)).get(pk=entry_id)
