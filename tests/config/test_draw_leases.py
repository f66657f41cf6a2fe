"""A worker's draw leases (config.leases, halls.leases; issue 30), on the test run's Redis: the steps the
worker holds (waiting for their countdown, reserved or running) are leased to it, other tasks are not, and
a lease left unrenewed expires."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

from celery.worker import state
from django.test import override_settings

from config import leases as worker_leases
from halls import leases


class FakeRequest:
    """What the renewal reads of a Celery request: its task's name and its args."""

    def __init__(self, task_name: str, args: tuple[Any, ...]) -> None:
        self.task_name = task_name
        self.args = args


def test_the_steps_a_worker_holds_are_leased_to_it_and_expire_when_it_stops_renewing() -> None:
    game = int(uuid.uuid4().int % 10**9)  # keys of this test only
    waiting = FakeRequest("bingo.traditional.tasks.draw_next_ball", (game, 7))
    running = FakeRequest("bingo.electronic.tasks.draw_ball", (game, 3))
    other = FakeRequest("bingo.electronic.tasks.tick", ())
    scheduled = state.scheduled_requests  # type: ignore[attr-defined]
    scheduled.add(waiting)
    state.active_requests.add(running)
    state.reserved_requests.add(other)
    try:
        with override_settings(HALL_DRAW_LEASE_SECONDS=1.0):
            assert worker_leases.renew("worker-a@host") == 2
            assert leases.holder("traditional", game, 7) == "worker-a@host"
            assert leases.holder("electronic", game, 3) == "worker-a@host"
            assert not leases.held("traditional", game, 8)
            # Renewed, it outlives its first term; not renewed (the worker died), it is gone.
            time.sleep(0.6)
            worker_leases.renew("worker-a@host")
            time.sleep(0.6)
            assert leases.held("traditional", game, 7)
            time.sleep(1.1)
            assert not leases.held("traditional", game, 7)
            # Due and unheld: lost; within the grace, or held: not; past the stall grace: lost regardless.
            assert leases.lost("traditional", game, 7, timedelta(seconds=1))
            assert not leases.lost("traditional", game, 7, timedelta(seconds=0.1))
            leases.hold("traditional", game, 7, "worker-b@host", seconds=30)
            assert not leases.lost("traditional", game, 7, timedelta(seconds=1))
            assert leases.lost("traditional", game, 7, timedelta(seconds=3600))
    finally:
        scheduled.discard(waiting)
        state.active_requests.discard(running)
        state.reserved_requests.discard(other)


def test_leases_are_off_without_redis_or_when_switched_off() -> None:
    with override_settings(HALL_DRAW_LEASES=False):
        assert not leases.enabled()
        leases.hold("traditional", 1, 2, "worker-a@host")  # a no-op
        assert leases.holder("traditional", 1, 2) is None
        # Only the stall grace decides then.
        assert not leases.lost("traditional", 1, 2, timedelta(seconds=5))
        assert leases.lost("traditional", 1, 2, timedelta(seconds=3600))
    with override_settings(REDIS_URL=None):
        assert not leases.enabled()
