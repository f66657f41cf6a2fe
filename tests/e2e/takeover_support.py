"""Two real workers on the draw queue, the one holding the next draw step killed (tests/e2e/
test_draw_worker_takeover.py): who holds the step (its lease, halls.leases), the kill, the ball's wait."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.utils import timezone

from tests.e2e.celery_support import CeleryProcesses, wait_for

# The step's lease only: the stall grace (the backstop for a lost message) far beyond the test's bound.
TAKEOVER_ENV = {"HALL_DRAW_STALL_GRACE_SECONDS": "120", "HALL_REAPER_SECONDS": "1"}
BOUND_SECONDS = 5.0


@dataclass
class Takeover:
    ordinal: int  # the ball the killed worker held
    killed: str  # its process's name
    waited: float  # from max(the kill, the ball's due instant) to the ball, seconds


def start_two_workers(procs: CeleryProcesses) -> dict[str, subprocess.Popen[bytes]]:
    """Two workers on the draw queue and a beat (leading: the reaper runs every second from then on),
    started together."""
    procs.env.update(TAKEOVER_ENV)
    procs.start_beat()
    workers = procs.start_workers("worker-a", "worker-b")
    procs.wait_leading()
    return workers


def holder(procs: CeleryProcesses, kind: str, game_id: int, ordinal: int) -> str | None:
    client = redis.Redis.from_url(str(settings.REDIS_URL))
    value = client.get(procs.redis_key("draw-lease", kind, game_id, ordinal))
    client.close()
    return None if value is None else value.decode() if isinstance(value, bytes) else str(value)


def kill_the_holder(
    procs: CeleryProcesses,
    workers: dict[str, subprocess.Popen[bytes]],
    kind: str,
    game_id: int,
    balls: Callable[[], int],
    ball_at: Callable[[int], datetime | None],
    pace: float,
) -> Takeover:
    """Wait until a worker holds the step of the next ball, SIGKILL it (not restarted), and time the first
    ball not drawn at the kill, which the other worker draws: from the kill, or from the instant the ball
    was due (the previous ball plus the pace) if that is later."""

    def held() -> str | None:
        name = holder(procs, kind, game_id, balls() + 1)
        found = [w for w in workers if name and name.startswith(f"{w}-")]
        return found[0] if found else None

    name = wait_for(held, 20, "a worker holding the next step", procs.logs)
    os.kill(workers[name].pid, signal.SIGKILL)
    killed_at = timezone.now()
    workers[name].wait(5)
    ordinal = balls() + 1
    at = wait_for(lambda: ball_at(ordinal), 30, f"ball {ordinal} after the kill", procs.logs)
    previous = ball_at(ordinal - 1)
    assert previous is not None
    due = previous + timedelta(seconds=pace)
    return Takeover(ordinal=ordinal, killed=name, waited=(at - max(killed_at, due)).total_seconds())
