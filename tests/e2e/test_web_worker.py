"""The production web server as the deploy files run it: gunicorn with `config.web_worker.HallUvicornWorker`.

It serves the device sockets, and refuses the per-message deflate a client offers (every frame compressed
again for every socket is CPU the sockets' answers wait for); gunicorn's plain uvicorn worker grants it, so
the difference is the hall's worker class, not the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from halls.models import Venue
from tests.e2e.celery_support import database_url
from tests.e2e.machines_support import link_floor
from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def serve(worker_class: str, log_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """gunicorn with one worker of this class, against the test database, answering HTTP."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(), "PYTHONUNBUFFERED": "1"}
    env.pop("TEST_DATABASE_NAME", None)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.asgi:application", "-c", "config/gunicorn.py",
             "--worker-class", worker_class, "--workers", "1", "--bind", f"127.0.0.1:{port}"],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text(errors="replace")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/docs/", timeout=5) as response:
                if response.status == 200:
                    return proc, port
        except OSError:
            time.sleep(0.2)


async def extensions_granted(url: str) -> str | None:
    """The socket opens (the client offering permessage-deflate, as browsers do); what the server granted."""
    async with connect(url, open_timeout=10, compression="deflate") as ws:
        assert ws.response is not None and ws.response.status_code == 101
        return ws.response.headers.get("Sec-WebSocket-Extensions")


def test_the_hall_worker_serves_sockets_without_deflate_where_the_plain_one_grants_it(
    venue: Venue, operator: Any, tmp_path: Path
) -> None:
    floor = link_floor(venue, operator, 1)
    url_path = f"/ws/machines/{floor.machines[0].asset_number}/?token={floor.tokens[0]}&venue={venue.pk}"
    granted: dict[str, str | None] = {}
    for worker_class in ("config.web_worker.HallUvicornWorker", "uvicorn_worker.UvicornWorker"):
        proc, port = serve(worker_class, tmp_path / f"{worker_class}.log")
        try:
            granted[worker_class] = asyncio.run(extensions_granted(f"ws://127.0.0.1:{port}{url_path}"))
        finally:
            proc.terminate()
            assert proc.wait(30) == 0, (tmp_path / f"{worker_class}.log").read_text(errors="replace")
    assert granted["config.web_worker.HallUvicornWorker"] is None
    assert (granted["uvicorn_worker.UvicornWorker"] or "").startswith("permessage-deflate")


async def _restart_notices(url: str, origin: str, count: int, restart: Any) -> list[tuple[str, int | None]]:
    """Open `count` screen sockets, `restart()` the server, and what each heard before its close."""
    sockets = [await connect(url, open_timeout=30, origin=origin) for _ in range(count)]  # type: ignore[arg-type]
    restart()
    heard = []
    for ws in sockets:
        notice = ""
        with contextlib.suppress(ConnectionClosed):  # closed: its close code says how
            async with asyncio.timeout(30):
                async for frame in ws:
                    if '"stream.restart"' in str(frame):
                        notice = str(frame)
        heard.append((notice, ws.close_code))
    async with connect(url, open_timeout=30, origin=origin) as again:  # type: ignore[arg-type]
        assert again.response is not None and again.response.status_code == 101  # a new worker took it
    return heard


def test_a_graceful_restart_tells_the_screens_to_come_back_within_the_spread(
    screen: Any, tmp_path: Path
) -> None:
    import json
    import signal

    log = tmp_path / "gunicorn.log"
    proc, port = serve("config.web_worker.HallUvicornWorker", log)
    try:
        url = f"ws://127.0.0.1:{port}/ws/screens/{screen.token}/"
        heard = asyncio.run(
            _restart_notices(url, f"http://127.0.0.1:{port}", 3, lambda: proc.send_signal(signal.SIGHUP))
        )
    finally:
        proc.terminate()
        proc.wait(30)
    spread = settings.HALL_SOCKET_DRAIN_SPREAD_SECONDS
    for notice, code in heard:
        assert notice and json.loads(notice) == {"type": "stream.restart", "within": spread}, log.read_text()
        assert code == 1012
