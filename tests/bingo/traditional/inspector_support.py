"""A session as the inspector finds it: one game played to its Bingo (a refused claim, a corrected ball, a
switch to the reserve blower, a ball-set incident, the Line and the Bingo confirmed), one game void, the
session closed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bingo.cards import CardGrid
from bingo.traditional.models import Card, CardSeries, Game
from bingo.traditional.services import ballsets, claims, corrections, devices, draw, games, sales
from halls.models import GameSession, Room
from halls.services import sessions


@dataclass
class PlayedSession:
    session: GameSession
    played: Game
    void: Game


def play_session(
    *, session: GameSession, room: Room, series: CardSeries, caller: Any, cashier: Any
) -> PlayedSession:
    devices.register_device(room=room, name="Bombo 1", kind="pneumatic", actor=caller)
    reserve = devices.register_device(
        room=room, name="Bombo reserva", kind="turbine", actor=caller, reserve=True
    )
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    game = games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=20, actor=cashier)
    sales.sell_range(game=game, series=series, first=31, last=40, actor=cashier)
    game = games.close_sales(game=game, actor=caller)
    games.start_draw(game=game, actor=caller)
    grid = CardGrid.from_json(Card.objects.get(series=series, serial=7).grid)
    top = sorted(n for n in grid.rows[0] if n)
    others = sorted(set(range(1, 91)) - grid.numbers)
    # The first ball mis-keyed, corrected by the caller.
    draw.enter_ball(game=game, number=others[0], actor=caller)
    corrections.correct_ball(
        game=game, ordinal=1, number=top[0], reason="Mis-keyed at the reader", actor=caller
    )
    for number in top[1:3]:
        draw.enter_ball(game=game, number=number, actor=caller)
    claims.file_claim(game=game, kind="line", series_code=series.code, serial=7, actor=caller)  # too early

    devices.switch_device(game=game, device=reserve, reason="Turbine stopped", actor=caller)
    assert game.ball_set is not None
    ballsets.record_incident(
        ball_set=game.ball_set, note="Ball 12 chipped", balls=[12], actor=caller, game=game
    )
    for number in top[3:]:
        draw.enter_ball(game=game, number=number, actor=caller)
    assert claims.file_claim(game=game, kind="line", series_code=series.code, serial=7, actor=caller).valid
    claims.confirm_claims(game=game, kind="line", actor=caller)
    for number in sorted(grid.numbers - set(top)):
        draw.enter_ball(game=game, number=number, actor=caller)
    assert claims.file_claim(game=game, kind="bingo", series_code=series.code, serial=7, actor=caller).valid
    claims.confirm_claims(game=game, kind="bingo", actor=caller)
    void = games.create_game(room=room, actor=caller, draw_source="manual")
    void = games.open_sales(game=void, actor=caller)
    void = games.void_game(
        game=void, actor=caller, reason="Blower failure before the sale", public_message=""
    )
    session = sessions.close_session(session=session, actor=caller)
    return PlayedSession(session=session, played=Game.objects.get(pk=game.pk), void=void)
