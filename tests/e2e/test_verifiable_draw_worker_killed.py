"""A verifiable RNG draw through a real Celery worker killed with SIGKILL mid-game (issue 28): a new worker
re-opens the sealed seed and goes on with the same sequence, so every ball, before and after the kill, is
the one the revealed seed and the sales digest give (bingo.verifiable), and the worker reveals the seed once
the game ends."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from bingo import verifiable
from bingo.draws.models import DrawCommitment
from bingo.traditional.models import Ball, CardSeries
from bingo.traditional.services import games
from halls.models import GameSession, Room
from tests.bingo.traditional.game_support import assert_no_ball_lost_or_repeated, drawn, rng_game
from tests.e2e.celery_support import CeleryProcesses, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(150)]


def test_a_killed_worker_resumes_the_seeds_sequence_and_the_next_reveals_it(
    celery_procs: CeleryProcesses, room: Room, session: GameSession, caller: Any, cashier: Any,
    card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    first = celery_procs.start_worker("worker-1")
    celery_procs.start_beat()
    # Nobody claims in this game, so it draws all 90 balls.
    game = rng_game(room, session, caller, cashier, card_series, pace="0.05", last=6)
    committed = DrawCommitment.objects.get(room="traditional", game_ref=str(game.pk))
    assert committed.sales_digest and committed.seed == ""
    games.start_draw(game=game, actor=caller)

    wait_for(lambda: Ball.objects.filter(game=game).count() >= 15, 30, "15 balls", celery_procs.logs)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(5)
    time.sleep(1.5)  # with no worker, nothing draws
    before = drawn(game)
    assert_no_ball_lost_or_repeated(before)
    assert 15 <= len(before) < 90

    celery_procs.start_worker("worker-2")  # a new process: the seed only in its sealed form
    wait_for(lambda: Ball.objects.filter(game=game).count() == 90, 40, "all 90 balls", celery_procs.logs)
    balls = drawn(game)
    assert_no_ball_lost_or_repeated(balls)
    assert balls[: len(before)] == before

    # The game ends; the worker (it holds the key) reveals the seed once the void commits.
    games.void_game(game=game, actor=caller, reason="the test is over")
    revealed = wait_for(
        lambda: DrawCommitment.objects.filter(pk=committed.pk).exclude(seed="").first(),
        30,
        "the seed revealed",
        celery_procs.logs,
    )
    seed = verifiable.seed_from_hex(revealed.seed)
    assert verifiable.commit(seed) == committed.commitment
    assert [n for _, n in balls] == verifiable.balls(seed, committed.sales_digest, 90)
    check = verifiable.verify(seed, committed.commitment, committed.sales_digest, [n for _, n in balls], 90)
    assert check.verified, str(check)
