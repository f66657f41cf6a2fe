"""No device token reaches the web server's log.

The app is served as `make serve` serves it (the uvicorn command, its access log on, INFO), against the
test database; a machine's socket is opened with its real device token in the query string (accepted),
one with a wrong token (refused), and a plain request carries a token too. The server's whole output is
then read: every one of those requests is logged, and no token is in it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from config.redact import REDACTED, RedactTokens
from halls.models import Venue
from tests.e2e.celery_support import database_url
from tests.e2e.machines_support import link_floor
from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def serve(log_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(), "PYTHONUNBUFFERED": "1"}
    env.pop("TEST_DATABASE_NAME", None)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "info"],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while "Uvicorn running" not in log_path.read_text(errors="replace"):
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text(errors="replace")
        time.sleep(0.1)
    return proc, port


async def open_socket(url: str) -> str:
    try:
        async with connect(url, open_timeout=10):
            return "accepted"
    except InvalidStatus as exc:
        return f"refused {exc.response.status_code}"


def test_the_server_log_shows_the_machine_sockets_but_no_device_token(
    venue: Venue, operator: Any, tmp_path: Path
) -> None:
    floor = link_floor(venue, operator, 1)
    machine, token = floor.machines[0], floor.tokens[0]
    wrong = secrets.token_urlsafe(24)
    other = secrets.token_urlsafe(24)
    log_path = tmp_path / "uvicorn.log"
    proc, port = serve(log_path)
    try:
        base = f"ws://127.0.0.1:{port}/ws/machines/{machine.asset_number}/"
        assert asyncio.run(open_socket(f"{base}?token={token}&venue={venue.pk}")) == "accepted"
        assert asyncio.run(open_socket(f"{base}?token={wrong}")) == "refused 403"
        docs = f"http://127.0.0.1:{port}/api/docs/?token={other}"
        with urllib.request.urlopen(docs, timeout=10) as response:
            assert response.status == 200
    finally:
        proc.terminate()
        proc.wait(20)
    output = log_path.read_text(errors="replace")
    # The requests are logged (the handshakes and the access lines), with the token's value replaced.
    assert output.count(f"/ws/machines/{machine.asset_number}/?token={REDACTED}") >= 2, output
    assert f"/api/docs/?token={REDACTED}" in output, output
    for secret in (token, wrong, other):
        assert secret not in output, output


def test_the_filter_redacts_gunicorn_access_records_too() -> None:
    # gunicorn's access log formats a dict of atoms: the request line and the bare query string.
    record = logging.LogRecord(
        "gunicorn.access", logging.INFO, __file__, 1, '%(r)s %(q)s %(s)s',
        {"r": "GET /ws/machines/M1/?venue=1&token=abc HTTP/1.1", "q": "token=abc&venue=1", "s": "101"},
        None,
    )  # fmt: skip
    assert RedactTokens().filter(record)
    assert record.getMessage() == (
        f"GET /ws/machines/M1/?venue=1&token={REDACTED} HTTP/1.1 token={REDACTED}&venue=1 101"
    )
