"""RNG draws through a real Celery worker and beat on Redis, against the test database.

The worker and the beat are subprocesses (``python -m celery -A config ...``) pointed at the test database;
this process plays the caller (claims, confirmations) and the cashier through the services. A second test
SIGKILLs the worker in the middle of a draw: no ball is lost or repeated, and once a new worker is up the
reaper (run by beat every second) re-enqueues the stalled draw, which resumes at the next ordinal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone
from kombu import Queue

from bingo.cards import CardGrid
from bingo.models import Ball, CardSeries, ClaimWindow, DrawSource, Game, GameState, PrizeResult, SoldCard
from bingo.services import claims, games, sales
from config.celery import app as celery_app
from halls.models import GameSession, Room

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

QUEUES = ("celery", "draws")
START_TIMEOUT = 45.0


def _database_url() -> str:
    """The test database (pytest-django has renamed it in settings) as a URL for the subprocesses."""
    db = settings.DATABASES["default"]
    assert "postgresql" in db["ENGINE"]
    auth = quote(str(db["USER"] or ""), safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(str(db["PASSWORD"]), safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{auth}@{host}:{port}/{db['NAME']}"


def wait_for(condition: Callable[[], Any], timeout: float, what: str, logs: Callable[[], str]) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs()}")


class CeleryProcesses:
    """Workers and one beat as subprocesses, each logging to a file; all are ended at teardown."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "DATABASE_URL": _database_url(),
            "REDIS_URL": str(settings.REDIS_URL),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            # The reaper every second, and a draw counts as stalled one second past its pace.
            "HALL_REAPER_SECONDS": "1",
            "HALL_DRAW_STALL_GRACE_SECONDS": "1",
            "HALL_AUTOPLAY_SECONDS": "3600",
            # The other periodic tasks (meters, folds, seals, broadcasts, watches) stay quiet: the worker is a
            # solo pool, and while it ran one of them the next ball's message waited in Redis instead of in
            # the worker's hands, so a kill then left nothing for the reaper to find.
            **dict.fromkeys(
                [
                    "HALL_POOL_FOLD_SECONDS",
                    "HALL_POOL_SEAL_SECONDS",
                    "HALL_TABLE_AUTOPLAY_SECONDS",
                    "HALL_METER_SECONDS",
                    "HALL_PROGRAM_SCHEDULE_SECONDS",
                    "HALL_MACHINE_BROADCAST_SECONDS",
                    "HALL_MACHINE_WATCH_SECONDS",
                ],
                "3600",
            ),
            # Events the worker publishes stay off the channel groups of anything else on this Redis.
            "CHANNEL_PREFIX": f"e2e-{uuid.uuid4().hex[:8]}",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("TEST_DATABASE_NAME", None)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.directory / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *args],
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-3000:]}" for name in self.procs)

    def start_worker(self, name: str) -> subprocess.Popen[bytes]:
        proc = self._start(
            name,
            [
                "worker", "-Q", ",".join(QUEUES), "--pool=solo", "-c", "1", "-l", "info",
                "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h",
                "--without-mingle", "--without-gossip", "--without-heartbeat",
            ],
        )  # fmt: skip
        wait_for(
            lambda: " ready." in self.log(name) or proc.poll() is not None,
            START_TIMEOUT,
            f"{name} ready",
            self.logs,
        )
        assert proc.poll() is None, f"{name} exited with {proc.returncode}\n{self.logs()}"
        return proc

    def start_beat(self) -> subprocess.Popen[bytes]:
        schedule = self.directory / "beat-schedule"
        return self._start("beat", ["beat", "-l", "info", "-s", str(schedule)])

    def stop(self, name: str) -> None:
        proc = self.procs[name]
        if proc.poll() is None:
            proc.terminate()  # a warm shutdown puts the messages it holds back on the queue
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def stop_all(self) -> None:
        for name in self.procs:
            self.stop(name)


def purge_queues() -> None:
    with celery_app.connection_for_write() as conn:
        for queue in QUEUES:
            Queue(queue)(conn.default_channel).purge()


@pytest.fixture
def celery_procs(transactional_db: None, tmp_path: Path) -> Iterator[CeleryProcesses]:
    purge_queues()
    procs = CeleryProcesses(tmp_path)
    try:
        yield procs
    finally:
        procs.stop_all()  # before the test database is flushed: no worker may hold a connection to it
        purge_queues()


def rng_game(
    room: Room, session: GameSession, caller: Any, cashier: Any, series: CardSeries, *, pace: str, last: int
) -> Game:
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.RNG, pace_seconds=Decimal(pace))
    games.open_sales(game=game, actor=caller)
    sales.sell_range(game=game, series=series, first=1, last=last, actor=cashier)
    return games.close_sales(game=game, actor=caller)


def drawn(game: Game) -> list[tuple[int, int]]:
    return list(Ball.objects.filter(game=game).order_by("ordinal").values_list("ordinal", "number"))


def assert_no_ball_lost_or_repeated(balls: list[tuple[int, int]]) -> None:
    ordinals = [o for o, _ in balls]
    numbers = [n for _, n in balls]
    assert ordinals == list(range(1, len(balls) + 1)), ordinals
    assert len(set(numbers)) == len(numbers), numbers
    assert all(1 <= n <= 90 for n in numbers)


def sold_grids(game: Game) -> dict[tuple[str, int], CardGrid]:
    return {
        (sc.card.series.code, sc.card.serial): CardGrid.from_json(sc.card.grid)
        for sc in SoldCard.objects.filter(game=game).select_related("card__series")
    }


def play_caller(game: Game, caller: Any, deadline: float, logs: Callable[[], str]) -> None:
    """Claim every winning card as soon as it shows, lines before bingos, and confirm each prize."""
    while True:
        game.refresh_from_db()
        if game.state == GameState.CLOSED:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the game did not close in time: {game.state}, {game.balls_drawn} balls\n{logs()}"
            )
        if game.state not in (GameState.DRAWING, GameState.PAUSED):
            time.sleep(0.02)
            continue
        found = claims.unclaimed_winners(game)
        # Lines first: while the line window is open every card with a line at its ball is a co-winner.
        kind = "line" if found["line"] else "bingo" if found["bingo"] else None
        if kind is not None:
            for row in found[kind]:
                claim = claims.file_claim(
                    game=game,
                    kind=kind,
                    series_code=str(row["series"]),
                    serial=int(str(row["serial"])),
                    actor=caller,
                )
                assert claim.valid, claim.reason
            continue
        if game.state == GameState.PAUSED and game.claim_window:
            claims.confirm_claims(game=game, kind=game.claim_window, actor=caller)
            continue
        time.sleep(0.02)


def test_a_real_worker_draws_a_whole_game_with_line_and_bingo(
    celery_procs: CeleryProcesses, room: Room, session: GameSession, caller: Any, cashier: Any,
    card_series: CardSeries, ball_set: Any,
) -> None:  # fmt: skip
    celery_procs.start_worker("worker")
    celery_procs.start_beat()
    game = rng_game(room, session, caller, cashier, card_series, pace="0.1", last=60)
    started = timezone.now()
    games.start_draw(game=game, actor=caller)  # commits, then enqueues ball 1 on Redis

    play_caller(game, caller, time.monotonic() + 40, celery_procs.logs)

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
