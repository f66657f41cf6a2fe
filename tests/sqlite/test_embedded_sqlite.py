"""The embedded hall on SQLite: a whole RNG game drawn by the in-process Celery worker (demo.embedded, the
in-memory broker), and the demo hall's pages, meters and reports served from SQLite."""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from bingo.traditional.models import Ball, CardSeries, Game, GameState, PrizeResult
from bingo.traditional.services import games
from demo.embedded import EmbeddedCelery, start_embedded_celery
from demo.hall import AUTOPLAY_ROOM
from demo.seed import seed_demo
from halls.models import GameSession, Room
from jackpots.models import Pool
from jackpots.services import reports
from machines.models import Machine
from tests.bingo.traditional.game_support import assert_no_ball_lost_or_repeated, drawn, play_caller, rng_game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


@pytest.fixture
def embedded(transactional_db: None) -> Iterator[EmbeddedCelery]:
    assert connection.vendor == "sqlite"
    handle = start_embedded_celery()
    try:
        yield handle
    finally:
        handle.stop()  # before the test database is flushed: the worker thread holds a connection


def test_the_embedded_worker_draws_a_whole_game_on_sqlite(
    embedded: EmbeddedCelery, room: Room, session: GameSession, caller: User, cashier: User,
    card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="0.1", last=60)
    games.start_draw(game=game, actor=caller)  # commits, then the in-memory broker hands ball 1 to the worker
    play_caller(game.pk, caller, time.monotonic() + 60)

    game = Game.objects.get(pk=game.pk)
    assert game.state == GameState.CLOSED
    assert embedded.alive
    balls = drawn(game)
    assert_no_ball_lost_or_repeated(balls)
    assert Ball.objects.filter(game=game).count() == game.balls_drawn == len(balls)
    line = PrizeResult.objects.get(game=game, kind="line")
    bingo = PrizeResult.objects.get(game=game, kind="bingo")
    # 60 cards × 2.00 € = 120.00 € (summed by the database: exact), Line 10 %, Bingo 50 %.
    assert (game.sales_total, line.amount, bingo.amount) == (
        Decimal("120.00"),
        Decimal("12.00"),
        Decimal("60.00"),
    )
    for result in (line, bingo):
        shares = [a.amount for a in result.awards.all()]
        assert sum(shares) + result.remainder == result.amount


def test_the_demo_halls_pages_answer_on_sqlite(db: None) -> None:
    """Every page `make demo` prints, plus the meters, the machine floor, each machine's reconciliation
    (500 on SQLite before: LATERAL) and every pool's balancing report, as the demo's operator."""
    hall = seed_demo()
    client = Client()
    client.force_login(hall.operator)
    urls = [f"/screens/{screen.token}/" for screen in hall.screens]
    urls += [f"/screens/{screen.token}/snapshot/" for screen in hall.screens]
    urls += ["/", "/console/", f"/console/rooms/{hall.rooms[AUTOPLAY_ROOM].pk}/", "/cashier/", "/tables/"]
    urls += ["/api/docs/", "/admin/", "/machines/floor/", "/machines/floor/snapshot/", "/machines/handpays/"]
    machines = list(Machine.objects.order_by("id"))
    assert len(machines) >= 2
    urls += [f"/machines/{machine.pk}/reconciliation/" for machine in machines[:3]]
    pools = list(Pool.objects.order_by("id"))
    assert pools
    urls += [f"/api/pools/{pool.pk}/balance/" for pool in pools]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
    for pool in pools:
        assert reports.balance(pool).holds, pool.code
