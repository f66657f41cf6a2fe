"""The web processes' uvicorn options: gunicorn's worker class for the deploy files (`--worker-class
config.web_worker.HallUvicornWorker`), and the same options for the benches that run uvicorn themselves.

No per-message deflate: browsers and devices offer it and uvicorn grants it by default; then every frame
is compressed separately for every socket (a ball to 1,000 terminals: 1,000 compressions). Frames here are
a few hundred bytes on the hall's own network, and the CPU is what the sockets' answers wait for: at 2,000
terminals buying in one 10-second window (bench/electronic_sales.py), p99 268 and 223 ms with it, 191 and
201 ms without; a quarter of a web process's event-loop time was deflate.
"""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker

UVICORN_OPTIONS: dict[str, Any] = {"ws_per_message_deflate": False}


class HallUvicornWorker(UvicornWorker):  # type: ignore[misc]  # uvicorn-worker ships no type hints
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, **UVICORN_OPTIONS}
