"""Every lock of the bingo app, each through its rank (halls.locks): games, programs, the Bolsa."""

from __future__ import annotations

from django.db import connection
from django.db.models import OuterRef

from bingo.traditional.models import Ball, BallSet, CardSeries, Game, PrizeProgram, RoomBolsa
from halls.locks import Rank, take


def lock_game(game_id: int) -> Game:
    """The game FOR UPDATE, with its room and venue."""
    take(Rank.GAME, game_id)
    return Game.objects.select_for_update(of=("self",)).select_related("room", "room__venue").get(pk=game_id)


def lock_game_for_draw(game_id: int) -> Game | None:
    """The game FOR UPDATE in one SELECT with its room, its ball set and (PostgreSQL) the numbers drawn so
    far as ``drawn_numbers``; None when there is no such game."""
    take(Rank.GAME, game_id)
    games = Game.objects.select_for_update(of=("self",)).select_related("room", "ball_set")
    if connection.vendor == "postgresql":
        from django.contrib.postgres.expressions import ArraySubquery

        numbers = Ball.objects.filter(game=OuterRef("pk")).values("number")
        games = games.annotate(drawn_numbers=ArraySubquery(numbers))
    return games.filter(pk=game_id).first()


def lock_program(program_id: int) -> PrizeProgram:
    """A prize program FOR UPDATE (after its room)."""
    take(Rank.PROGRAM, ("program", program_id))
    return PrizeProgram.objects.select_for_update(of=("self",)).get(pk=program_id)


def lock_bolsa(room_id: int) -> RoomBolsa | None:
    """The room's Bolsa Acumulada FOR UPDATE (after its room), or None."""
    take(Rank.PROGRAM, ("bolsa", room_id))
    return RoomBolsa.objects.select_for_update(of=("self",)).filter(room_id=room_id).first()


def lock_series(series_id: int) -> CardSeries:
    """A card series FOR NO KEY UPDATE (after the game it sells in): its paper ranges move, and its next
    unsold cards are chosen, one transaction at a time. (NO KEY: rows that only name the series, a paper
    range or a movement written meanwhile, do not wait for it.)"""
    take(Rank.PAPER_STOCK, series_id)
    return (
        CardSeries.objects.select_for_update(of=("self",), no_key=True)
        .select_related("venue")
        .get(pk=series_id)
    )


def lock_ball_set(ball_set_id: int) -> BallSet:
    """A ball set FOR UPDATE (after the game that names it, if any)."""
    take(Rank.BALL_SET, ball_set_id)
    return BallSet.objects.select_for_update(of=("self",)).select_related("venue").get(pk=ball_set_id)
