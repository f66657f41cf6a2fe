"""A self-playing room resumes from every state a crash can leave its game in.

Each step of a tick (open the sales, sell, close them, start the draw) is one transaction; a worker killed
or a database lost between two of them leaves the game scheduled, on sale or with its sales closed. Here
the crash is an error raised by a step (as psycopg raises one when PostgreSQL goes away); the next tick,
with nothing failing, must take the game to its draw with the first ball enqueued.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import OperationalError

from bingo.traditional.models import Game, GameState, SoldCard
from bingo.traditional.services import draw, games, sales
from demo import autoplay
from demo.models import AutoplayRoom
from halls.models import Room


class Crash(OperationalError):
    """What a step raises when the database or the worker goes away under it."""


def failing(real: Callable[..., Any], after: int = 0) -> Callable[..., Any]:
    """``real``, except that call number ``after + 1`` raises (and every later one)."""
    calls = {"n": 0}

    def step(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] > after:
            raise Crash("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    return step


@pytest.fixture
def autoplay_room(room: Room) -> Room:
    AutoplayRoom.objects.create(room=room)
    return room


@pytest.fixture
def dispatched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(
        draw, "dispatch", lambda game_id, ordinal, countdown=0.0: sent.append((game_id, ordinal))
    )
    return sent


@pytest.mark.parametrize(
    ("module", "step", "after", "left_in"),
    [
        (games, "open_sales", 0, GameState.SCHEDULED),
        (sales, "sell_range", 0, GameState.ON_SALE),  # nothing sold yet
        (sales, "sell_range", 1, GameState.ON_SALE),  # one range sold, the others not
        (games, "close_sales", 0, GameState.ON_SALE),  # every sale made: the "on_sale forever"
        (games, "start_draw", 0, GameState.SALES_CLOSED),
    ],
)
def test_a_crash_between_two_steps_is_resumed_by_the_next_tick(
    autoplay_room: Room,
    dispatched: list[tuple[int, int]],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
    module: Any,
    step: str,
    after: int,
    left_in: str,
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(module, step, failing(getattr(module, step), after))
        with pytest.raises(Crash):
            autoplay.tick(autoplay_room)
    game = Game.objects.get(room=autoplay_room)
    assert game.state == left_in
    sold_before = SoldCard.objects.filter(game=game).count()
    assert (sold_before > 0) == (after > 0 or step in ("close_sales", "start_draw"))

    with django_capture_on_commit_callbacks(execute=True):
        assert autoplay.tick(autoplay_room) == f"resumed game {game.number}"
    game.refresh_from_db()
    assert game.state == GameState.DRAWING
    assert game.draw_started_at is not None
    assert dispatched == [(game.pk, 1)]
    sold = SoldCard.objects.filter(game=game).count()
    # Sales already made are kept and closed as they are; a game with none gets its sales.
    assert sold == sold_before if sold_before else sold >= 40
    assert game.cards_sold == sold
    # Still one game: the resumed one, not a new one beside it.
    assert Game.objects.filter(room=autoplay_room).count() == 1
    # And the tick after that plays on (claims when there are winners) instead of starting anything.
    assert autoplay.tick(autoplay_room) in ("drawing", "filed 0 claims")


def test_a_tick_never_resumes_a_game_a_person_paused(
    autoplay_room: Room, dispatched: list[tuple[int, int]], caller: Any
) -> None:
    autoplay.tick(autoplay_room)
    game = Game.objects.get(room=autoplay_room)
    games.pause_draw(game=game, actor=caller)
    assert autoplay.tick(autoplay_room) == "waiting"
    game.refresh_from_db()
    assert game.state == GameState.PAUSED
