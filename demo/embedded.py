"""The embedded hall's Celery: a worker and a beat inside the server process, on the in-memory broker.

With no REDIS_URL the demo runs in one process (DESIGN §5). The tasks still go through Celery — the same
``draw_next_ball`` with ``acks_late``, the same beat schedule (the reaper, the autoplay ticks) — only the
broker is ``memory://`` and the worker is a thread. The worker uses the solo pool (one task at a time, which
also suits SQLite's single writer) and installs no signal handlers: the server in the main thread owns them.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from celery import Celery
from celery.beat import Scheduler, Service
from celery.worker import WorkController

log = logging.getLogger("hall.embedded")

QUEUES = ("celery", "draws")
# The in-memory transport polls its queues; the default second would add up to a second to every ball.
POLLING_INTERVAL = 0.05
STOP_TIMEOUT = 10.0


class _Worker(WorkController):
    """A worker controller that says when its consumer is ready (Celery's own test worker does the same)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.ready = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer: Any) -> None:
        self.ready.set()


@dataclass
class EmbeddedCelery:
    """Handle on the in-process worker and beat; ``stop()`` shuts both down."""

    worker: _Worker
    worker_thread: threading.Thread
    beat: Service
    beat_thread: threading.Thread

    def stop(self) -> None:
        self.beat.stop(wait=False)
        self.beat_thread.join(STOP_TIMEOUT)
        self.worker.stop()
        self.worker_thread.join(STOP_TIMEOUT)
        if self.worker_thread.is_alive() or self.beat_thread.is_alive():
            log.warning(
                "embedded celery did not stop within %.0f s (daemon threads end with the process)",
                STOP_TIMEOUT,
            )

    @property
    def alive(self) -> bool:
        return self.worker_thread.is_alive() and self.beat_thread.is_alive()


def start_embedded_celery(app: Celery | None = None, *, ready_timeout: float = 30.0) -> EmbeddedCelery:
    """Start a solo-pool worker on ``celery`` and ``draws`` and an in-memory beat, in daemon threads."""
    if app is None:
        from config.celery import app as project_app

        app = project_app
    broker = str(app.conf.broker_url or "")
    if not broker.startswith("memory://"):
        raise RuntimeError(f"the embedded worker runs on the in-memory broker, not {broker!r}")
    app.conf.broker_transport_options = {
        **(app.conf.broker_transport_options or {}),
        "polling_interval": POLLING_INTERVAL,
    }
    # Remote control needs a fanout exchange and a reply queue that nobody reads in one process.
    app.conf.worker_enable_remote_control = False
    app.finalize()
    app.set_current()
    app.set_default()

    worker = _Worker(
        app=app,
        hostname="embedded@hall",
        pool="solo",
        concurrency=1,
        queues=list(QUEUES),
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="WARNING",
    )
    worker_thread = threading.Thread(target=worker.start, name="celery-worker", daemon=True)
    worker_thread.start()
    if not worker.ready.wait(ready_timeout):
        raise RuntimeError(f"the embedded Celery worker did not start within {ready_timeout:.0f} s")

    # The plain scheduler keeps its state in memory: no shelve file to write, nothing to clean up.
    beat = Service(app, max_interval=1, scheduler_cls=Scheduler, remote_control=False)  # type: ignore[call-arg]
    beat_thread = threading.Thread(target=beat.start, name="celery-beat", daemon=True)
    beat_thread.start()
    log.info(
        "embedded celery started: worker on %s, beat with %d entries",
        ", ".join(QUEUES),
        len(app.conf.beat_schedule),
    )
    return EmbeddedCelery(worker=worker, worker_thread=worker_thread, beat=beat, beat_thread=beat_thread)
