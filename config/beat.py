"""Beat as one leader among several (issue 30): celery-redbeat's scheduler, whose Redis lock makes one beat
the leader; the others block at start-up until the lock is free. Changes here: a beat started while Redis
is away waits for it (redbeat's start-up would exit, or go on without the lock); a leader whose lock
expired (Redis away longer than the lock's timeout, or a stall) waits to lead again instead of exiting; a
Redis error in a tick is waited out (the process outlives a Redis outage, as the workers do); a schedule
that Redis lost (restarted empty) is installed again."""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace
from typing import Any

import redis
from redbeat import RedBeatScheduler
from redbeat.schedulers import acquire_distributed_beat_lock, get_redis
from redis.exceptions import LockError

log = logging.getLogger("hall.beat")


# celery-redbeat reads its settings as Celery's own names (`redbeat_redis_url`, ...): the Django settings'
# CELERY_ prefix hides them from its "is it set" check, which then falls back to the broker's options.
REDBEAT_SETTINGS = (
    "redbeat_redis_url",
    "redbeat_redis_options",
    "redbeat_key_prefix",
    "redbeat_lock_timeout",
)


class Scheduler(RedBeatScheduler):  # type: ignore[misc]
    def __init__(self, app: Any, *args: Any, **kwargs: Any) -> None:
        for name in REDBEAT_SETTINGS:
            value = app.conf.get(name)
            if value is not None:
                app.conf[name] = value
        super().__init__(app, *args, **kwargs)

    def setup_schedule(self) -> None:
        """At start-up (and after a loss, below): a beat started while Redis is away waits for it."""
        while True:
            try:
                super().setup_schedule()
                return
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                log.warning("beat: Redis did not answer (%s): installing the schedule again in 1 s", exc)
                time.sleep(1.0)

    def tick(self, *args: Any, **kwargs: Any) -> float:
        try:
            if self.lock_key and self.lock is None:
                self._lead_first()  # redbeat's start-up lock failed (Redis away): take it now
            self._reinstall_if_lost()
            return float(super().tick(*args, **kwargs))
        except LockError as exc:
            log.warning("beat: lost the leader's lock (%s): waiting to lead again", exc)
            self._lead_again()
            return 0.0
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("beat: Redis did not answer (%s): trying again", exc)
            return float(self.max_interval)

    def _reinstall_if_lost(self) -> None:
        """A Redis that lost its data (restarted without persistence, a failover to a replica that lagged)
        lost the schedule too: installed again from the settings, every entry runs at once (once)."""
        conf = self.app.redbeat_conf
        if conf.schedule and not get_redis(self.app).exists(conf.statics_key):
            log.warning("beat: the schedule is gone from Redis: installing it again")
            self.setup_schedule()

    def _lead_first(self) -> None:
        """Block until this beat holds the lock, taken as redbeat takes it at start-up."""
        while self.lock is None:
            try:
                acquire_distributed_beat_lock(sender=SimpleNamespace(scheduler=self))
            except redis.RedisError as exc:
                log.warning("beat: could not take the lock (%s): trying again", exc)
                time.sleep(float(self.max_interval))

    def _lead_again(self) -> None:
        """Block until this beat holds the lock again (another beat may lead meanwhile)."""
        while True:
            try:
                if self.lock.acquire():
                    log.info("beat: acquired the leader's lock again")
                    return
            except redis.RedisError as exc:
                log.warning("beat: could not take the lock (%s): trying again", exc)
            time.sleep(float(self.max_interval))
