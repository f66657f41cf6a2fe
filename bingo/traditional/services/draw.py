"""The draw: balls from the RNG (a Celery task per ball: the committed seed's, bingo.traditional.services.
commitments, or the CSPRNG's) or entered by the caller from the ball reader.

Each ball is a row with unique (game, ordinal) and (game, number), written and committed before it is
shown. An RNG step names the ordinal it draws, so a retried or duplicated task is a no-op; a draw whose
worker died is found by ``stalled_draws`` and re-enqueued by the reaper (DESIGN §4).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from kombu.exceptions import OperationalError

from bingo.traditional import hooks
from bingo.traditional.models import Ball, DrawSource, Game, GameState
from bingo.traditional.services import commitments, detection, feed
from bingo.traditional.services.console import tell_consoles
from bingo.traditional.services.locks import lock_game, lock_game_for_draw
from bingo.traditional.services.steps import record, step
from halls import leases
from halls.errors import Conflict, InvalidInput
from halls.eventtypes import BallDrawn, DrawnBall, EventType

log = logging.getLogger("hall.draw")

LEASE_KIND = "traditional"  # the draw step's lease (halls.leases; config.leases names the task's)

LAST_ORDINAL = 90

# Enqueues the RNG step (game id, ordinal, countdown): bingo.traditional.apps registers
# bingo.traditional.tasks' door here, so this
# service imports no Celery task (services import no doors; the contract is in pyproject.toml).
_enqueue_step: Callable[[int, int, float], None] | None = None


def register_step_enqueuer(enqueue: Callable[[int, int, float], None]) -> None:
    global _enqueue_step  # one door per process, set once at start-up
    _enqueue_step = enqueue


def schedule_next_ball(game: Game) -> None:
    """After the caller's transaction commits, enqueue the RNG step for the next ball at the game's pace."""
    if (
        game.draw_source != DrawSource.RNG
        or game.state != GameState.DRAWING
        or game.balls_drawn >= LAST_ORDINAL
    ):
        return
    ordinal = game.balls_drawn + 1
    countdown = float(game.pace_seconds) if game.balls_drawn else 1.0
    game_id = game.pk
    transaction.on_commit(lambda: dispatch(game_id, ordinal, countdown))


def dispatch(game_id: int, ordinal: int, countdown: float = 0.0) -> None:
    """Enqueue the step; with the broker away, log it and leave the draw to the reaper (its state is
    committed: the stalled draw is re-enqueued once the broker is back), not fail the caller's command."""
    if _enqueue_step is None:
        raise RuntimeError(
            "no draw step enqueuer registered (bingo.traditional.apps registers bingo.traditional.tasks')"
        )
    try:
        _enqueue_step(game_id, ordinal, countdown)
    except OperationalError as exc:
        log.warning("could not enqueue ball %s of game %s (%s): the reaper will", ordinal, game_id, exc)


def draw_rng_ball(*, game_id: int, ordinal: int) -> Ball | None:
    """Draw ball ``ordinal`` with the CSPRNG, or do nothing if that step is done, paused or not due.

    The ball returned carries its game as locked, with the room and the ball set: the task reads no more.
    """
    with transaction.atomic():
        locked = _lock_for_draw(game_id)
        if locked is None:
            return None
        game, drawn = locked
        if game.state != GameState.DRAWING or game.draw_source != DrawSource.RNG:
            return None
        if game.balls_drawn + 1 != ordinal:
            return None
        # The seed's ball when the game's draw is committed (bingo.draws), else the CSPRNG's.
        ball = _append(game, commitments.next_rng_ball(game, ordinal, drawn), DrawSource.RNG, None)
        schedule_next_ball(game)
    return ball


def _lock_for_draw(game_id: int) -> tuple[Game, set[int]] | None:
    """One locked SELECT: the game, its room, its ball set and (on PostgreSQL) the numbers drawn so far."""
    game = lock_game_for_draw(game_id)
    if game is None:
        return None
    drawn = set(getattr(game, "drawn_numbers", ()))
    # A SELECT that waited for the lock returns the row as committed, but its subquery still sees the
    # balls as they were when it began: short of one, read them again (SQLite, with no subquery, always does).
    if len(drawn) != game.balls_drawn:
        drawn = set(Ball.objects.filter(game=game).values_list("number", flat=True))
    return game, drawn


def enter_ball(*, game: Game, number: int, actor: User, ordinal: int | None = None) -> Ball:
    """The caller enters the ball the reader read. A retry naming the same ordinal and number is a no-op."""
    if not 1 <= number <= LAST_ORDINAL:
        raise InvalidInput(
            _("Ball %(number)s is out of range: balls are numbered 1 to 90.") % {"number": number},
            code="ball_out_of_range",
        )
    with transaction.atomic():
        game = lock_game(game.pk)
        hooks.refuse_relayed(game)
        if ordinal is not None:
            same = Ball.objects.filter(game=game, ordinal=ordinal).first()
            if same is not None and same.number == number:
                return same
        if game.draw_source != DrawSource.MANUAL:
            raise Conflict(
                _("Game %(number)s draws with the RNG: balls are not entered by hand.")
                % {"number": game.number},
                code="rng_game",
            )
        if game.state != GameState.DRAWING:
            label = GameState(game.state).label.lower()
            raise Conflict(
                _("Game %(number)s is %(label)s: no ball can be entered now.")
                % {"number": game.number, "label": label},
                code="wrong_state",
            )
        earlier = Ball.objects.filter(game=game, number=number).first()
        if earlier is not None:
            raise Conflict(
                _("Ball %(number)s was already drawn, at ordinal %(ordinal)s.")
                % {"number": number, "ordinal": earlier.ordinal},
                code="ball_already_drawn",
                ordinal=earlier.ordinal,
            )
        if ordinal is not None and ordinal != game.balls_drawn + 1:
            raise Conflict(
                _("The next ball is ordinal %(expected)s, not %(ordinal)s.")
                % {"expected": game.balls_drawn + 1, "ordinal": ordinal},
                code="wrong_ordinal",
            )
        return _append(game, number, DrawSource.MANUAL, actor)


def append_relayed_ball(*, game_id: int, ordinal: int, number: int) -> Ball | None:
    """A ball drawn elsewhere (the central's draw of a simultaneous game, bingo.network.simultaneous) applied
    to
    this hall's game: recorded, detected and shown like any other. Idempotent by ordinal: a ball already
    there is a no-op (None); the game must be drawing or paused, and the ball the next one."""
    with transaction.atomic():
        game = lock_game(game_id)
        if Ball.objects.filter(game=game, ordinal=ordinal).exists():
            return None
        if game.state not in (GameState.DRAWING, GameState.PAUSED) or ordinal != game.balls_drawn + 1:
            raise Conflict(
                _("Game %(number)s cannot take ball %(ordinal)s now.")
                % {"number": game.number, "ordinal": ordinal},
                code="wrong_ordinal",
            )
        return _append(game, number, DrawSource.RNG, None)


def _append(game: Game, number: int, source: str, actor: User | None) -> Ball:
    now = timezone.now()
    ball = Ball.objects.create(
        game=game, ordinal=game.balls_drawn + 1, number=number, source=source, drawn_at=now, entered_by=actor
    )
    game.balls_drawn = ball.ordinal
    game.last_ball_at = now
    game.save(update_fields=["balls_drawn", "last_ball_at"])
    done = detection.record_ball(game, ball)  # the lines and bingos this ball made, in its transaction
    colour = game.ball_set.colour_of(number) if game.ball_set else ""
    drawn = DrawnBall(ordinal=ball.ordinal, ball=number, colour=colour, source=source, drawn_at=now)
    record(game, actor or "rng", EventType.BALL_DRAWN, drawn, BallDrawn(**step(game), **drawn))
    feed.ball_drawn(game, ball)  # the authority's feed: the ball, with its fact
    # The consoles' unclaimed winners change with a ball only if it completed a claimable prize: bingos,
    # or lines while the Line is unclaimed (no claim window is open while drawing).
    if done.bingos.size or (done.lines.size and game.line_won_at is None):
        tell_consoles(game)
    return ball


def stalled_draws(now: datetime | None = None) -> list[tuple[int, int]]:
    """RNG draws whose next step is lost: (game id, next ordinal). A step is lost when it is due (the pace
    since the last ball) and no live worker holds its lease (halls.leases: its worker died), or, leases or
    not, when it is late by more than the stall grace (a message lost)."""
    now = now or timezone.now()
    stalled = []
    games = Game.objects.filter(
        state=GameState.DRAWING, draw_source=DrawSource.RNG, balls_drawn__lt=LAST_ORDINAL
    ).only("pk", "balls_drawn", "last_ball_at", "draw_started_at", "pace_seconds")
    for game in games:
        since = game.last_ball_at or game.draw_started_at
        if since is None:
            continue
        late = now - (since + timedelta(seconds=float(game.pace_seconds)))
        if leases.lost(LEASE_KIND, game.pk, game.balls_drawn + 1, late):
            stalled.append((game.pk, game.balls_drawn + 1))
    return stalled


def reap_stalled_draws() -> list[tuple[int, int]]:
    stalled = stalled_draws()
    for game_id, ordinal in stalled:
        log.warning("draw of game %s stalled before ball %s: re-enqueued", game_id, ordinal)
        leases.taken_over(LEASE_KIND, game_id, ordinal)
        dispatch(game_id, ordinal)
    return stalled
