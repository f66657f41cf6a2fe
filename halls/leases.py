"""Draw leases: "a live worker holds the step that draws ball N of game G" (issue 30).

A worker holding a draw step (waiting for its countdown or running it) renews the step's lease every
fraction of ``HALL_DRAW_LEASE_SECONDS`` (config.leases); killed, its leases expire within that time and the
reaper re-enqueues the steps that are due and held by nobody, on a worker that lives. Nothing here decides
a ball: a step run twice is still a no-op by its ordinal (unique (game, ordinal)).

On Redis the lease is a key with a millisecond expiry shared by every process; embedded (one process, its
worker a thread of the server) there is no other worker to take over and leases are off (``enabled``).
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import timedelta
from typing import Any

import redis
from django.conf import settings

log = logging.getLogger("hall.leases")

REAPER = "reaper"  # the holder of a step the reaper just re-enqueued
_client: tuple[int, redis.Redis] | None = None
_lock = threading.Lock()


def enabled() -> bool:
    """Leases decide takeovers only when workers share a Redis (HALL_DRAW_LEASES, default: on Redis)."""
    return bool(settings.HALL_DRAW_LEASES and settings.REDIS_URL)


def _key(kind: str, game_id: int, ordinal: int) -> str:
    """Under the channel layer's prefix: installations (and test runs) sharing a Redis stay apart."""
    config: dict[str, Any] = settings.CHANNEL_LAYERS["default"].get("CONFIG", {})
    return f"{config.get('prefix', 'hall')}:draw-lease:{kind}:{game_id}:{ordinal}"


def _redis() -> redis.Redis:
    """One client per process (a forked worker makes its own)."""
    global _client
    with _lock:
        if _client is None or _client[0] != os.getpid():
            timeout = settings.HALL_REDIS_SOCKET_TIMEOUT
            client = redis.Redis.from_url(
                str(settings.REDIS_URL), socket_timeout=timeout, socket_connect_timeout=timeout
            )
            _client = (os.getpid(), client)
        return _client[1]


def hold(kind: str, game_id: int, ordinal: int, holder: str, seconds: float | None = None) -> None:
    """Hold (or renew) the lease of step `ordinal` of the game for `seconds` (default the lease time)."""
    if not enabled():
        return
    ttl = settings.HALL_DRAW_LEASE_SECONDS if seconds is None else seconds
    _redis().set(_key(kind, game_id, ordinal), holder, px=max(1, int(ttl * 1000)))


def holder(kind: str, game_id: int, ordinal: int) -> str | None:
    """Who holds the step's lease now (a worker's name, or ``reaper`` just after a takeover), or None."""
    if not enabled():
        return None
    value = _redis().get(_key(kind, game_id, ordinal))
    return None if value is None else value.decode() if isinstance(value, bytes) else str(value)


def held(kind: str, game_id: int, ordinal: int) -> bool:
    return holder(kind, game_id, ordinal) is not None


def lost(kind: str, game_id: int, ordinal: int, late: timedelta) -> bool:
    """Is the step, `late` past the instant it was due (negative: not due yet), lost? Yes when no live
    worker holds its lease a short grace after it was due, or, leases or not, past the stall grace."""
    if late > timedelta(seconds=settings.HALL_DRAW_STALL_GRACE_SECONDS):
        return True
    if not enabled() or late < timedelta(seconds=settings.HALL_DRAW_LEASE_GRACE_SECONDS):
        return False
    try:
        return not held(kind, game_id, ordinal)
    except redis.RedisError as exc:  # Redis away: the broker too; the stall grace decides meanwhile
        log.warning("could not read the lease of %s game %s: %s", kind, game_id, exc)
        return False


def taken_over(kind: str, game_id: int, ordinal: int) -> None:
    """The reaper re-enqueued the step: it holds the lease until a worker receives the step and renews it,
    so the next rounds do not enqueue it again meanwhile."""
    try:
        hold(kind, game_id, ordinal, REAPER)
    except redis.RedisError as exc:
        log.warning("could not take the lease of %s game %s: %s", kind, game_id, exc)
