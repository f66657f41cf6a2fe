"""gunicorn settings the deploy files load (``-c config/gunicorn.py``); the command line sets the rest."""

import os
from typing import Any

# A uvicorn worker tells gunicorn it is alive from its event loop's tick: a worker taking a reconnect storm
# (thousands of handshakes queued on a starved CPU) missed gunicorn's default 30 s and was aborted, which
# dropped every socket it held and began the next storm (bench/reconnect_storm.py, issue 30). A hung worker
# is still replaced, after this long.
timeout = int(os.environ.get("WEB_WORKER_TIMEOUT", "120"))


def child_exit(server: Any, worker: Any) -> None:
    """An exited worker's live gauges (open sockets) leave the sum /metrics shows (halls.metrics)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]
