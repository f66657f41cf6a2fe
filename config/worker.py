"""The Celery worker's consumer: Celery's, reconnecting to the broker every 1-2 s while it is away.
Selected by ``CELERY_WORKER_CONSUMER`` (config.settings); retries are unbounded
(``CELERY_BROKER_CONNECTION_MAX_RETRIES = None``).
"""

from __future__ import annotations

import functools
from typing import Any

from celery.worker.consumer import Consumer as CeleryConsumer

# Celery's own retries are 2, 4, 6 … up to 30 s apart: after a 30 s outage a worker could idle 12 s more.
# A refused connection costs nothing, so every second, then every two: a draw resumes within seconds.
RETRY_START = 1.0
RETRY_STEP = 1.0
RETRY_MAX = 2.0


class Consumer(CeleryConsumer):
    def ensure_connected(self, conn: Any) -> Any:
        # Celery calls conn.ensure_connection(errback, max_retries, callback=...) with kombu's default
        # intervals; this connection object gets ours (it is made for this connect and dropped after).
        conn.ensure_connection = functools.partial(
            type(conn).ensure_connection,
            conn,
            interval_start=RETRY_START,
            interval_step=RETRY_STEP,
            interval_max=RETRY_MAX,
        )
        return super().ensure_connected(conn)
