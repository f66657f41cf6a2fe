"""Celery doors of electronic bingo: thin tasks that take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from bingo.electronic.services import commitments, games


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def draw_ball(game_id: int, ordinal: int) -> int | None:
    """Draw ball `ordinal` of the electronic game (and pay what it decides); a repeated step is a no-op."""
    ball = games.draw_ball(game_id, ordinal)
    return None if ball is None else ball.number


def enqueue_draw(game_id: int, ordinal: int, countdown: float) -> None:
    """The games service's way to the door above (registered in bingo.electronic.apps)."""
    draw_ball.apply_async(args=(game_id, ordinal), countdown=countdown)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def reveal_draw(game_id: int) -> bool:
    """Reveal the seed of the finished game's draw (a worker holds the key); a repeat is a no-op."""
    return commitments.reveal(game_id) is not None


def enqueue_reveal(game_id: int) -> None:
    """The commitments service's way to the door above (registered in bingo.electronic.apps)."""
    reveal_draw.apply_async(args=(game_id,))


@shared_task(ignore_result=True)
def tick() -> int:
    """Beat, every second: close due sales, begin waiting draws, start games, re-enqueue stalled draws."""
    done = games.tick()
    return len(done.closed) + len(done.begun) + len(done.started) + len(done.reaped) + len(done.revealed)
