"""`manage.py demo` on PostgreSQL and Redis, as a real process: it creates its database when missing, and
whichever way it is stopped (SIGTERM as `make` passes it on, Ctrl+C's SIGINT, even SIGKILL) its Celery worker
and beat (and the worker's pool processes) stop with it: no process it started survives."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from django.conf import settings

from tests.ports import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

READY_TIMEOUT = 150.0  # a fresh database is migrated first
GONE_TIMEOUT = 20.0


def _server_url(database: str) -> str:
    db = settings.DATABASES["default"]
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{db['USER'] or 'postgres'}@{host}:{port}/{database}"


def _admin() -> psycopg.Connection[tuple[object, ...]]:
    db = settings.DATABASES["default"]
    return psycopg.connect(
        host=db.get("HOST") or "127.0.0.1",
        port=int(db.get("PORT") or 5432),
        user=db["USER"] or "postgres",
        password=db.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    )


def _exists(database: str) -> bool:
    with _admin() as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone() is not None


@pytest.fixture(scope="module")
def demo_database() -> Iterator[str]:
    """A database name nobody has created; dropped after the module's tests."""
    name = f"hall_demo_e2e_{uuid.uuid4().hex[:10]}"
    assert not _exists(name)
    yield name
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def command_of(proc: psutil.Process) -> str:
    """A descendant's command line; "" for one that ended while the list was read (a zombie, or gone)."""
    try:
        return " ".join(proc.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return ""


class Demo:
    def __init__(self, database: str, directory: Path) -> None:
        self.port = free_port()
        self.log_path = directory / f"demo-{self.port}.log"
        env = {
            **os.environ,
            "DATABASE_URL": _server_url(database),
            "REDIS_URL": str(settings.REDIS_URL),
            "CHANNEL_PREFIX": f"e2e-demo-{uuid.uuid4().hex[:8]}",
            "HALL_DEMO_MACHINES": "0",
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("TEST_DATABASE_NAME", None)
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "manage.py", "demo", "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=settings.BASE_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> list[psutil.Process]:
        """Wait for the server to answer, and for its worker (with its pool) and beat; return them all."""
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            assert self.proc.poll() is None, f"the demo exited with {self.proc.returncode}\n{self.log()}"
            assert time.monotonic() < deadline, f"the demo did not come up\n{self.log()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/docs/", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.5)
        while True:
            descendants: list[psutil.Process] = psutil.Process(self.proc.pid).children(recursive=True)
            commands = [command_of(p) for p in descendants]
            # The worker, its two pool processes, and the beat.
            if sum("celery" in c for c in commands) >= 4 and any(" beat " in c for c in commands):
                return descendants
            assert time.monotonic() < deadline, f"no worker and beat: {commands}\n{self.log()}"
            time.sleep(0.5)

    def kill_everything(self) -> None:
        """Teardown only: whatever is left (a failed test) is killed."""
        try:
            rest = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            rest = []
        for proc in [*rest]:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def start_demo(demo_database: str, tmp_path: Path) -> Iterator[Callable[[], Demo]]:
    started: list[Demo] = []

    class Started(Demo):
        def __init__(self) -> None:
            super().__init__(demo_database, tmp_path)
            started.append(self)

    try:
        yield Started
    finally:
        for demo in started:
            demo.kill_everything()


def stop_and_check(demo: Demo, children: list[psutil.Process], sig: signal.Signals) -> None:
    os.kill(demo.proc.pid, sig)
    demo.proc.wait(GONE_TIMEOUT + 10)
    gone, alive = psutil.wait_procs(children, timeout=GONE_TIMEOUT)
    assert not alive, f"left running after {sig.name}: {[p.cmdline() for p in alive]}\n{demo.log()}"
    assert len(gone) == len(children)


def test_the_demo_creates_its_database_and_sigterm_stops_its_worker_and_beat(
    start_demo: Callable[[], Demo], demo_database: str
) -> None:
    demo = start_demo()
    children = demo.wait_ready()
    assert f"Created the database {demo_database}." in demo.log()
    assert _exists(demo_database)
    stop_and_check(demo, children, signal.SIGTERM)
    # It went through its stop, not the signal's default action.
    assert "Stopping the Celery worker and beat" in demo.log()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_no_process_of_the_demo_survives_it(start_demo: Callable[[], Demo], sig: signal.Signals) -> None:
    demo = start_demo()
    children = demo.wait_ready()
    stop_and_check(demo, children, sig)


def command_line(process: psutil.Process) -> list[str]:
    """A child's command line; none for one that died and is not reaped yet (a zombie has none)."""
    try:
        return [str(part) for part in process.cmdline()]
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return []


def test_the_demo_starts_again_a_worker_that_died(start_demo: Callable[[], Demo]) -> None:
    demo = start_demo()
    children = demo.wait_ready()
    (worker,) = [p for p in children if " worker " in " ".join(p.cmdline()) and p.ppid() == demo.proc.pid]
    worker.kill()
    deadline = time.monotonic() + 30
    while True:
        again = [
            p
            for p in psutil.Process(demo.proc.pid).children()
            if p.pid != worker.pid and " worker " in " ".join(command_line(p))
        ]
        if again:
            break
        assert time.monotonic() < deadline, f"no new worker\n{demo.log()}"
        time.sleep(0.5)
    assert "Celery worker exited with -9: starting it again." in demo.log()
    children = demo.wait_ready()  # the new worker with its pool, and the beat
    stop_and_check(demo, children, signal.SIGTERM)
