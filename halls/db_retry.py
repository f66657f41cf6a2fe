"""A service transaction run again when PostgreSQL broke it off (a deadlock it detected, a serialization
failure): bounded (HALL_DB_RETRIES), with a short jittered pause, logged and counted on ``/metrics``
(hall_db_retries_total, hall_db_retries_exhausted_total).

Only the outermost call retries: inside a caller's transaction the failure aborted that transaction too, so
it is raised for the caller's own retry. A retried service must be idempotent by its key (every cashier
write is: a second run answers what the first one wrote, or writes it if the first one rolled back).
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import OperationalError, connection

from halls import metrics

P = ParamSpec("P")
R = TypeVar("R")
log = logging.getLogger(__name__)

# SQLSTATEs worth running the transaction again for.
TRANSIENT = {"40P01": "deadlock", "40001": "serialization"}
_jitter = random.SystemRandom()


def transient(exc: BaseException) -> str:
    """'deadlock' or 'serialization' when `exc` (Django's error or the driver's under it) is one, else ''."""
    seen: BaseException | None = exc
    while seen is not None:
        state = getattr(seen, "sqlstate", None)
        if state in TRANSIENT:
            return TRANSIENT[state]
        seen = seen.__cause__
    return ""


def run(service: str, fn: Callable[[], R]) -> R:
    """`fn()`, run again (at most HALL_DB_RETRIES times) when the database broke its transaction off."""
    limit = int(settings.HALL_DB_RETRIES)
    backoff = float(settings.HALL_DB_RETRY_BACKOFF_MS) / 1000
    attempt = 0
    while True:
        outermost = not connection.in_atomic_block
        try:
            return fn()
        except OperationalError as exc:
            reason = transient(exc)
            if not reason or not outermost:
                raise
            if attempt >= limit:
                metrics.DB_RETRIES_EXHAUSTED.labels(service, reason).inc()
                log.error("%s: %s after %s retries, giving up", service, reason, attempt)
                raise
            attempt += 1
            metrics.DB_RETRIES.labels(service, reason).inc()
            log.warning(
                "%s: %s, running the transaction again (retry %s of %s)", service, reason, attempt, limit
            )
            time.sleep(_jitter.uniform(0, backoff * 2 ** (attempt - 1)))


def retried(service: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a service: `run` around each call (see the module)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return run(service, lambda: fn(*args, **kwargs))

        return call

    return wrap
