"""RNG draws through a real Celery worker and beat on Redis, against the test database.

The worker and the beat are subprocesses (``python -m celery -A config ...``) pointed at the test database;
this process plays the caller (claims, confirmations) and the cashier through the services. A second test
SIGKILLs the worker in the middle of a draw: no ball is lost or repeated, and once a new worker is up the
reaper (run by beat every second) re-enqueues the stalled draw, which resumes at the next ordinal.
"""

from __future__ import annotations

import os
import signal
import time
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from bingo.cards import CardGrid
from bingo.traditional.models import (
    Ball,
    CardSeries,
    ClaimWindow,
    DrawSource,
    Game,
    GameState,
    PrizeResult,
    SoldCard,
)
from bingo.traditional.services import games
from halls.models import GameSession, Room
from tests.bingo.traditional.game_support import assert_no_ball_lost_or_repeated, drawn, play_caller, rng_game
from tests.e2e.celery_support import CeleryProcesses, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def sold_grids(game: Game) -> dict[tuple[str, int], CardGrid]:
    return {
        (sc.card.series.code, sc.card.serial): CardGrid.from_json(sc.card.grid)
        for sc in SoldCard.objects.filter(game=game).select_related("card__series")
    }


def test_a_real_worker_draws_a_whole_game_with_line_and_bingo(
    celery_procs: CeleryProcesses, room: Room, session: GameSession, caller: Any, cashier: Any,
    card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    celery_procs.start_worker("worker")
    celery_procs.start_beat()
    game = rng_game(room, session, caller, cashier, card_series, pace="0.1", last=60)
    started = timezone.now()
    games.start_draw(game=game, actor=caller)  # commits, then enqueues ball 1 on Redis

    play_caller(game.pk, caller, time.monotonic() + 40, celery_procs.logs)

    game.refresh_from_db()
    balls = drawn(game)
    assert_no_ball_lost_or_repeated(balls)
    assert Ball.objects.filter(game=game, source=DrawSource.RNG, drawn_at__gt=started).count() == len(balls)
    numbers = [n for _, n in balls]
    grids = sold_grids(game)
    assert len(grids) == 60

    line = PrizeResult.objects.get(game=game, kind="line")
    bingo = PrizeResult.objects.get(game=game, kind="bingo")
    assert line.ordinal == game.line_won_at
    # The Bingo closed the game at the ball it was claimed on: no ball after it.
    assert bingo.ordinal == game.balls_drawn == len(balls)
    assert game.claim_window == ClaimWindow.NONE

    # Recomputed here from the grids: every sold card with a complete row by the Line's ball won it, and
    # every card complete by the Bingo's ball won the Bingo. No one else did.
    by_line = {
        key
        for key, grid in grids.items()
        if any(row <= set(numbers[: line.ordinal]) for row in grid.row_numbers)
    }
    by_bingo = {key for key, grid in grids.items() if grid.numbers <= set(numbers[: bingo.ordinal])}
    assert by_line and by_bingo
    line_winners = {
        (a.claim.series.code, a.claim.serial) for a in line.awards.select_related("claim__series")
    }
    bingo_winners = {
        (a.claim.series.code, a.claim.serial) for a in bingo.awards.select_related("claim__series")
    }
    assert line_winners == by_line
    assert bingo_winners == by_bingo

    # 60 cards × 2.00 € = 120.00 €: Line 10 %, Bingo 50 %, split equally to the cent.
    assert (game.sales_total, line.amount, bingo.amount) == (
        Decimal("120.00"),
        Decimal("12.00"),
        Decimal("60.00"),
    )
    for result in (line, bingo):
        shares = [a.amount for a in result.awards.all()]
        assert result.winners == len(shares)
        assert set(shares) == {result.share}
        assert sum(shares) + result.remainder == result.amount


def test_a_killed_worker_loses_no_ball_and_the_draw_resumes(
    celery_procs: CeleryProcesses, room: Room, session: GameSession, caller: Any, cashier: Any,
    card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    first = celery_procs.start_worker("worker-1")
    celery_procs.start_beat()
    # Nobody claims in this game, so it draws all 90 balls.
    game = rng_game(room, session, caller, cashier, card_series, pace="0.05", last=6)
    games.start_draw(game=game, actor=caller)

    wait_for(lambda: Ball.objects.filter(game=game).count() >= 15, 30, "15 balls", celery_procs.logs)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(5)
    killed_at = timezone.now()
    time.sleep(1.5)  # with no worker, nothing draws; the killed worker's held message stays unacknowledged
    before = drawn(game)
    assert_no_ball_lost_or_repeated(before)
    assert len(before) < 90
    time.sleep(0.5)
    assert drawn(game) == before, "a ball was drawn with no worker running"

    restarted_at = timezone.now()
    celery_procs.start_worker("worker-2")
    wait_for(lambda: Ball.objects.filter(game=game).count() == 90, 40, "all 90 balls", celery_procs.logs)

    balls = drawn(game)
    assert_no_ball_lost_or_repeated(balls)
    assert sorted(n for _, n in balls) == list(range(1, 91))
    assert balls[: len(before)] == before
    resumed = Ball.objects.get(game=game, ordinal=len(before) + 1)
    assert resumed.drawn_at > restarted_at > killed_at
    game.refresh_from_db()
    assert (game.state, game.balls_drawn) == (GameState.DRAWING, 90)
    # The killed worker's message is still unacknowledged (redelivered only after the visibility timeout):
    # the reaper found the stalled draw and re-enqueued the next ordinal.
    assert f"stalled before ball {len(before) + 1}: re-enqueued" in celery_procs.log("worker-2")


def test_the_worker_keeps_its_database_connection_across_draw_steps(
    celery_procs: CeleryProcesses, room: Room, session: GameSession, caller: Any, cashier: Any,
    card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    celery_procs.start_worker("worker")
    game = rng_game(room, session, caller, cashier, card_series, pace="0.05", last=6)
    games.start_draw(game=game, actor=caller)
    wait_for(lambda: Ball.objects.filter(game=game).count() >= 10, 30, "10 balls", celery_procs.logs)

    first_ball = Ball.objects.get(game=game, ordinal=1).drawn_at
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT backend_start FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend'"
        )
        others = [row[0] for row in cursor.fetchall()]
    # One connection, opened for the first step and still open ten steps later (it was one per task).
    assert len(others) == 1, others
    assert others[0] < first_ball
