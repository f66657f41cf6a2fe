"""gunicorn settings the deploy files load (``-c config/gunicorn.py``); the command line sets the rest."""

import os
from typing import Any


def child_exit(server: Any, worker: Any) -> None:
    """An exited worker's live gauges (open sockets) leave the sum /metrics shows (halls.metrics)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]
