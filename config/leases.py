"""A worker's draw leases (halls.leases): while its main process lives it renews the lease of every draw
step it holds (received, waiting for its countdown, or running), from a thread of its own; killed, the
leases expire and the reaper re-enqueues the steps on a worker that lives (issue 30)."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import signals
from celery.worker import state

log = logging.getLogger("hall.leases")

# The draw steps, by task name: the lease's kind (the reaper of that room reads it) and their args are
# (game id, ordinal).
DRAW_STEPS = {
    "bingo.traditional.tasks.draw_next_ball": "traditional",
    "bingo.electronic.tasks.draw_ball": "electronic",
}

_stop = threading.Event()


def held_steps() -> list[tuple[str, int, int]]:
    """The draw steps this worker holds: (kind, game id, ordinal)."""
    scheduled = getattr(state, "scheduled_requests", ())  # the ETA steps (not in celery-types' stubs)
    requests = [*scheduled, *state.reserved_requests, *state.active_requests]
    steps = set()
    for request in requests:
        kind = DRAW_STEPS.get(request.task_name)
        args = request.args
        if kind is not None and len(args) >= 2:
            steps.add((kind, int(args[0]), int(args[1])))
    return sorted(steps)


def renew(holder: str) -> int:
    """Renew the lease of every step held; a Redis error is logged (the next round tries again)."""
    from halls import leases

    steps = held_steps()
    try:
        for kind, game_id, ordinal in steps:
            leases.hold(kind, game_id, ordinal, holder)
    except Exception as exc:  # Redis away: leases expire, the reaper takes over once back
        log.warning("could not renew %d draw leases: %s", len(steps), exc)
    return len(steps)


def _renew_loop(holder: str, every: float) -> None:
    while not _stop.wait(every):
        renew(holder)


@signals.task_received.connect
def lease_on_receipt(request: Any = None, **kwargs: Any) -> None:
    """A step just received: its lease at once, not at the next round."""
    from halls import leases

    kind = DRAW_STEPS.get(getattr(request, "task_name", ""))
    if kind is None or not leases.enabled() or len(request.args) < 2:
        return
    try:
        leases.hold(kind, int(request.args[0]), int(request.args[1]), request.hostname or "worker")
    except Exception as exc:  # the renewal thread tries again
        log.warning("could not take a draw lease: %s", exc)


@signals.worker_ready.connect
def start_lease_renewal(sender: Any = None, **kwargs: Any) -> None:
    """In the worker's main process (which holds the messages; the pool's children only run them)."""
    from django.conf import settings

    from halls import leases

    if not leases.enabled():
        return
    holder = str(getattr(sender, "hostname", None) or "worker")
    every = settings.HALL_DRAW_LEASE_SECONDS / 4
    _stop.clear()
    threading.Thread(target=_renew_loop, args=(holder, every), name="draw-leases", daemon=True).start()
    log.info("renewing the draw leases of %s every %.2f s", holder, every)


@signals.worker_shutdown.connect
def stop_lease_renewal(**kwargs: Any) -> None:
    _stop.set()
