"""Browser fixtures: Debian's chromium driven by Playwright, and the ASGI app served by uvicorn in a thread.

The server runs in this process so a test can set up and act through the services while the page
watches; `transactional_db` commits for real, so the server's threads see the data and events are
published after commit (DESIGN §4), over the Redis channel layer of the settings.

Playwright's async API is used: its sync API keeps an event loop running in the test's thread, where
the services' `async_to_sync` publish cannot run. Tests call services from a worker thread instead
(channels' `database_sync_to_async`, which also closes that thread's database connection).
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.async_api import Browser, BrowserContext, Page, ViewportSize, async_playwright, expect

from tests.ports import free_port_in

ROOT = Path(__file__).resolve().parents[2]
# An assertion waits up to 15 s, not 5: a loaded CI machine is slow to render, never wrong to.
expect.set_options(timeout=15_000)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT: ViewportSize = {"width": 1920, "height": 1080}


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Install (when root) and smoke-test the browser; a missing browser fails the run, never skips."""
    script = ROOT / "scripts" / "ensure_chromium.sh"
    if script.exists():
        result = subprocess.run(
            ["bash", str(script)], capture_output=True, text=True, timeout=900, check=False
        )
        if result.returncode != 0:
            pytest.fail(f"{script.name} failed:\n{result.stdout}\n{result.stderr}", pytrace=False)
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)", pytrace=False)
    return CHROMIUM


@pytest.fixture
async def browser(chromium_path: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        yield browser
        await browser.close()


@pytest.fixture
async def context(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[BrowserContext]:
    # Staff pages in English as most tests read them, in Spanish where a module says ACCEPT_LANGUAGE = "es"
    # (the hall screens speak their venue's Spanish whatever the browser asks).
    language = getattr(request.module, "ACCEPT_LANGUAGE", "en")
    context = await browser.new_context(
        viewport=VIEWPORT,
        locale="es-ES",
        timezone_id="Europe/Madrid",
        extra_http_headers={"Accept-Language": language},
    )
    # Chromium sends its locale's Accept-Language (es-ES) on navigations whatever the extra header says, so
    # the pages themselves would be Spanish: set_language's cookie, which LocaleMiddleware reads first.
    await context.add_cookies(
        [{"name": "django_language", "value": language, "domain": "127.0.0.1", "path": "/"}]
    )
    context.set_default_timeout(10_000)
    yield context
    await context.close()


@pytest.fixture
async def page(context: BrowserContext) -> AsyncIterator[Page]:
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert not errors, f"JavaScript errors on the page: {errors}"


class ServerThread(threading.Thread):
    """uvicorn serving config.asgi:application on a socket bound here (so the port is known up front)."""

    def __init__(self) -> None:
        super().__init__(name="uvicorn-e2e", daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # HALL_TEST_PORTS (tests.ports): a port of the given range, on a machine where each user has theirs.
        spec = os.environ.get("HALL_TEST_PORTS", "").strip()
        self.sock.bind(("127.0.0.1", free_port_in(spec) if spec else 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            "config.asgi:application", host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self.server = uvicorn.Server(config)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        except BaseException as exc:  # reported by stop(): a server that dies mid-test explains a failure
            self.error = exc
            raise

    def wait_started(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.is_alive() or time.monotonic() > deadline:
                pytest.fail("uvicorn did not start", pytrace=False)
            time.sleep(0.02)

    def stop(self) -> None:
        died = not self.is_alive()
        self.server.should_exit = True
        self.join(timeout=10)
        self.sock.close()
        if died:
            pytest.fail(f"uvicorn stopped during the test: {self.error!r}", pytrace=False)


@pytest.fixture
def celery_procs(transactional_db: None, tmp_path: Path) -> Iterator[Any]:
    """A worker and a beat to start as subprocesses (tests/e2e/celery_support.py), all ended at teardown."""
    from tests.e2e.celery_support import CeleryProcesses, purge_queues

    purge_queues()
    procs = CeleryProcesses(tmp_path)
    try:
        yield procs
    finally:
        procs.stop_all()  # before the test database is flushed: no worker may hold a connection to it
        purge_queues()


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """No Celery worker here: tasks run where they are sent (the console's unclaimed winners are published
    where the ball commits)."""
    from config.celery import app as celery_app

    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def server_url(transactional_db: None) -> Iterator[str]:
    """Base URL of the app, served for one test against that test's (committed) database."""
    server = ServerThread()
    server.start()
    server.wait_started()
    yield f"http://127.0.0.1:{server.port}"
    server.stop()
