"""A real Celery worker and beat outlive a 30 s Redis outage in the middle of a draw, and the draw resumes.

The worker runs as `make worker` runs it (prefork pool, mingle, gossip and heartbeat on), the beat as
`make beat`, both against a private Redis (tests/e2e/redis_support.py) that the test kills and restarts
on the same port (every queued message is lost, as in a crash) or pauses with SIGSTOP (the server keeps
its sockets but answers nothing). Nobody restarts anything: the same worker and beat processes must be
running at the end, the balls must resume within seconds of Redis returning, with no ordinal skipped or
repeated and no number drawn twice.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from kombu import Connection, Producer, Queue

from bingo.traditional.models import Ball, CardSeries, Game, GameState
from bingo.traditional.services import draw, games
from halls.models import GameSession, Room
from tests.bingo.traditional.game_support import assert_no_ball_lost_or_repeated, drawn, rng_game
from tests.e2e.celery_support import CeleryProcesses, wait_for
from tests.e2e.redis_support import PrivateRedis

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(150)]

OUTAGE_SECONDS = 30.0
# From Redis answering again to the next ball: the worker reconnects (every 1-2 s, config.worker), beat's
# reaper (every second here) finds the stalled draw and re-enqueues it.
RESUME_WITHIN = 10.0


class OutageProcesses(CeleryProcesses):
    """tests/e2e/test_celery_worker.py's worker and beat on the private Redis; the worker as in production."""

    def __init__(self, directory: Path, redis_url: str) -> None:
        super().__init__(directory)
        self.env["REDIS_URL"] = redis_url

    def start_production_worker(self) -> Any:
        level = os.environ.get("OUTAGE_LOG_LEVEL", "info")  # debug to see kombu's reconnects
        proc = self._start("worker", ["worker", "-Q", "celery,draws", "-c", "1", "-l", level])
        wait_for(
            lambda: " ready." in self.log("worker") or proc.poll() is not None, 45, "worker ready", self.logs
        )
        assert proc.poll() is None, self.logs()
        return proc


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def outage_procs(
    transactional_db: None, tmp_path: Path, private_redis: PrivateRedis, monkeypatch: pytest.MonkeyPatch
) -> Iterator[OutageProcesses]:
    # This process (the caller starting the draw) enqueues on the private Redis too.
    def dispatch(game_id: int, ordinal: int, countdown: float = 0.0) -> None:
        from bingo.traditional.tasks import draw_next_ball

        with Connection(private_redis.url) as conn:
            draw_next_ball.apply_async(  # type: ignore[call-arg]  # Celery takes it; the stubs omit it
                args=(game_id, ordinal), countdown=countdown, connection=conn
            )

    monkeypatch.setattr(draw, "dispatch", dispatch)
    procs = OutageProcesses(tmp_path, private_redis.url)
    try:
        yield procs
    finally:
        procs.stop_all()


def run_outage(
    procs: OutageProcesses,
    redis_server: PrivateRedis,
    game: Game,
    caller: Any,
    begin: Callable[[], None],
    end: Callable[[], None],
) -> float:
    """Draw, interrupt Redis for OUTAGE_SECONDS mid-draw, and return the seconds to the first ball after."""
    worker = procs.start_production_worker()
    beat = procs.start_beat()
    games.start_draw(game=game, actor=caller)
    wait_for(lambda: Ball.objects.filter(game=game).count() >= 10, 30, "10 balls", procs.logs)

    begin()
    time.sleep(2)  # a step already running when Redis went may still commit its ball
    before = drawn(game)
    time.sleep(OUTAGE_SECONDS - 2)
    assert drawn(game) == before, "balls were drawn while Redis was away"
    assert worker.poll() is None and beat.poll() is None, procs.logs()
    end()
    back = timezone.now()
    back_clock = time.monotonic()

    wait_for(
        lambda: Ball.objects.filter(game=game).count() > len(before),
        RESUME_WITHIN + 20,
        "the first ball after the outage",
        procs.logs,
    )
    resumed_in = time.monotonic() - back_clock
    first_after = Ball.objects.get(game=game, ordinal=len(before) + 1)
    assert first_after.drawn_at > back
    wait_for(lambda: Ball.objects.filter(game=game).count() == 90, 60, "all 90 balls", procs.logs)

    balls = drawn(game)
    assert_no_ball_lost_or_repeated(balls)
    assert sorted(n for _, n in balls) == list(range(1, 91))
    assert balls[: len(before)] == before
    game.refresh_from_db()
    assert (game.state, game.balls_drawn) == (GameState.DRAWING, 90)
    # The very processes started before the outage did it all: none exited, none was restarted.
    assert worker.poll() is None and beat.poll() is None, procs.logs()
    assert "Unrecoverable error" not in procs.log("worker"), procs.logs()
    assert resumed_in < RESUME_WITHIN, f"the draw resumed {resumed_in:.1f} s after Redis returned"
    print(f"outage {OUTAGE_SECONDS:.0f} s: first ball {resumed_in:.1f} s after Redis returned")
    return resumed_in


def test_the_draw_resumes_after_redis_is_killed_and_restarted(
    outage_procs: OutageProcesses, private_redis: PrivateRedis, room: Room, session: GameSession,
    caller: Any, cashier: Any, card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    # Nobody claims in this game, so it draws all 90 balls.
    game = rng_game(room, session, caller, cashier, card_series, pace="0.2", last=6)
    run_outage(outage_procs, private_redis, game, caller, private_redis.kill, private_redis.start)
    # The restarted Redis held nothing: the reaper re-enqueued the draw.
    assert "re-enqueued" in outage_procs.log("worker")


def test_the_draw_resumes_after_redis_is_paused(
    outage_procs: OutageProcesses, private_redis: PrivateRedis, room: Room, session: GameSession,
    caller: Any, cashier: Any, card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="0.2", last=6)
    run_outage(outage_procs, private_redis, game, caller, private_redis.pause, private_redis.resume)


def test_an_ack_lost_to_a_silent_redis_frees_its_prefetch_place(private_redis: PrivateRedis) -> None:
    """With one prefetch place (one worker process), a held place after a failed ack would stop the
    worker's consumption for good (config.broker)."""
    options = {"socket_timeout": 1.0, "socket_connect_timeout": 1.0}
    transport = "config.broker:Transport"
    with Connection(private_redis.url, transport=transport, transport_options=options) as conn:
        channel: Any = conn.channel()  # the Redis transport's channel (the stubs know the base class)
        channel.basic_qos(0, 1, False)
        queue = Queue("ack-test", channel=channel)
        queue.declare()
        Producer(channel).publish({"n": 1}, routing_key="ack-test")
        message = queue.get(no_ack=False)
        assert message is not None
        assert not channel.qos.can_consume()  # the one place is taken until the ack
        private_redis.pause()
        try:
            with pytest.raises(conn.connection_errors):
                message.ack()
        finally:
            private_redis.resume()
        # The place is free again (Redis may yet apply the ack it was sent, or redeliver the message after the
        # visibility timeout: either is safe, every task being idempotent).
        assert channel.qos.can_consume()
