"""The web processes' uvicorn options: gunicorn's worker class for the deploy files (`--worker-class
config.web_worker.HallUvicornWorker`), and the same options for the benches that run uvicorn themselves.

No per-message deflate: browsers and devices offer it and uvicorn grants it by default; then every frame
is compressed separately for every socket (a ball to 1,000 terminals: 1,000 compressions). Frames here are
a few hundred bytes on the hall's own network, and the CPU is what the sockets' answers wait for: at 2,000
terminals buying in one 10-second window (bench/electronic_sales.py), p99 268 and 223 ms with it, 191 and
201 ms without; a quarter of a web process's event-loop time was deflate.
"""

from __future__ import annotations

import logging
import socket
import sys
from typing import Any

from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker

log = logging.getLogger("hall.web")

UVICORN_OPTIONS: dict[str, Any] = {"ws_per_message_deflate": False}


class DrainingServer(Server):
    """uvicorn's server, whose graceful stop (SIGTERM, SIGQUIT; gunicorn's restart of a worker) first stops
    accepting (the sibling workers take the new connections on the shared socket), then drains its screens
    and terminals (halls.fanout.drain_process: "come back within a few seconds, at a random moment", close
    1012), then does what uvicorn does. A worker killed outright (SIGKILL) drains nothing: its sockets drop
    and the pages come back with their own jittered back-off."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        try:
            from halls import fanout  # Django is set up by now (the app was loaded)

            closed = await fanout.drain_process()
            log.info("draining: %d sockets told to reconnect elsewhere", closed)
        except Exception:  # never in the way of stopping
            log.exception("draining the sockets failed")
        await super().shutdown(sockets=None)


class HallUvicornWorker(UvicornWorker):  # type: ignore[misc]  # uvicorn-worker ships no type hints
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, **UVICORN_OPTIONS}

    async def _serve(self) -> None:
        """As UvicornWorker's, with the `DrainingServer`."""
        self.config.app = self.wsgi
        server = DrainingServer(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
