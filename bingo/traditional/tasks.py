"""Celery doors of the draw: thin tasks that take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from bingo.traditional import hooks
from bingo.traditional.services import commitments, draw, programs
from halls import heartbeat, metrics

REAPER_HEARTBEAT = "reaper"


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def draw_next_ball(game_id: int, ordinal: int) -> int | None:
    """Draw ball ``ordinal`` of the game; a repeat of a done step is a no-op."""
    with metrics.timed(metrics.DRAW_STEP):
        ball = draw.draw_rng_ball(game_id=game_id, ordinal=ordinal)
    if ball is None:
        return None
    hooks.after_ball(ball.game)  # a self-playing room (the demo's) claims its winners
    return ball.number


def enqueue_draw_step(game_id: int, ordinal: int, countdown: float) -> None:
    """The draw service's way to the door above (registered in bingo.traditional.apps)."""
    draw_next_ball.apply_async(args=(game_id, ordinal), countdown=countdown)


@shared_task(acks_late=True, ignore_result=True)
def reveal_draw(game_id: int) -> None:
    """Reveal an ended game's committed seed (the worker holds the key to open it); a repeat is a no-op."""
    commitments.reveal(game_id=game_id, actor="rng")


def enqueue_reveal(game_id: int) -> None:
    """The commitments service's way to the door above (registered in bingo.traditional.apps)."""
    reveal_draw.delay(game_id)


@shared_task(ignore_result=True)
def reap_stalled_draws() -> int:
    """Re-enqueue draws whose worker died (beat runs this every few seconds), and the reveals of ended games
    that a broker outage lost. Its heartbeat tells the health check that beat and the workers run
    (config.health)."""
    heartbeat.beat(REAPER_HEARTBEAT)
    reaped = len(draw.reap_stalled_draws())
    for game_id in commitments.unrevealed():
        enqueue_reveal(game_id)  # on the draws queue, whose workers hold the key
    return reaped


@shared_task(ignore_result=True)
def announce_scheduled_programs() -> int:
    """Announce on the screens the scheduled prizes due in a room's next game (beat, every 30 s)."""
    return programs.announce_scheduled()
