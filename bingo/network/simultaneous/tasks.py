"""Celery doors of the central's draw of simultaneous games: thin tasks taking ids."""

from __future__ import annotations

from celery import shared_task

from bingo.network.simultaneous.services import central, venue


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def draw_network_ball(game_id: int, ordinal: int) -> int | None:
    """Draw ball `ordinal` of the network game; a repeat of a done step is a no-op."""
    ball = central.draw_ball(game_id=game_id, ordinal=ordinal)
    return None if ball is None else ball.number


def enqueue_network_ball(game_id: int, ordinal: int, countdown: float) -> None:
    draw_network_ball.apply_async(args=(game_id, ordinal), countdown=countdown)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def decide_network_claims(game_id: int) -> int:
    """The claim window is over: decide the prizes (a game with no claim waiting is left alone, unless its
    last ball is out: then the game closes if its end window is over)."""
    return int(central.end_claim_window(game_id=game_id, actor="draw"))


def enqueue_decision(game_id: int, countdown: float) -> None:
    decide_network_claims.apply_async(args=(game_id,), countdown=countdown)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def reveal_network_draw(game_id: int) -> bool:
    """Reveal the seed of the finished network game's draw (a drawing worker holds the key)."""
    return central.reveal_draw(game_id=game_id)


def enqueue_reveal(game_id: int) -> None:
    reveal_network_draw.apply_async(args=(game_id,))


@shared_task(ignore_result=True)
def tick_network_games() -> int:
    """Beat, every few seconds: close the sales of network games at their deadline, enqueue again the draw
    steps, decisions and reveals that were lost (the central), apply the central's entries a hall still
    holds."""
    done = len(central.close_due_sales()) + len(central.reap_stalled()) + len(central.reveal_due_draws())
    stalled = venue.stalled_halls()
    if stalled:
        done += venue.apply_entries(venue_ids=stalled)
    return done


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def apply_hall_entries(venue_ids: list[int]) -> int:
    """Venue: apply the central's entries the link kept for these halls (each hall's in order)."""
    return venue.apply_entries(venue_ids=venue_ids)


def enqueue_apply(venue_ids: list[int]) -> None:
    apply_hall_entries.delay(venue_ids)
