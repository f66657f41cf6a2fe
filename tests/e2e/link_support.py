"""A central and a venue installation as real processes on one machine, each on its own PostgreSQL database,
and a TCP proxy between them that a test can cut and restore (tests/e2e/test_link_wan_cut.py).

- The databases: each cloned (``CREATE DATABASE … TEMPLATE``, a second) from the run's migrated template
  (tests/migrated.py: a fresh database takes about a minute to migrate); the clones are dropped at
  teardown.
- The central: uvicorn serving config.asgi (HALL_ROLE=central) on the Redis channel layer under a prefix
  of its own. The venue: `manage.py run_link` (HALL_ROLE=venue), pointed at the proxy.
- `CuttableProxy`: an asyncio TCP proxy in a thread of the test; `cut()` aborts every connection through it
  and refuses new ones (as a WAN line gone down: both ends see their sockets fail), `restore()` lets them
  through again.
- `run_in(db, code)`: a `manage.py shell -c` of that installation (tests/e2e/link_actions.py), its JSON line;
  `Driver`: one long-lived `manage.py shell` of an installation that runs one call after the other (a
  shell's start costs 2-3 s; tests/e2e/test_network_venues.py makes a hundred calls).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings

from tests import migrated
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def _db() -> dict[str, Any]:
    return dict(settings.DATABASES["default"])


def database_url(name: str) -> str:
    db = _db()
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    auth = db.get("USER") or "postgres"
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{host}:{port}/{name}"


def connect(name: str) -> psycopg.Connection[tuple[Any, ...]]:
    db = _db()
    return psycopg.connect(
        host=db.get("HOST") or "127.0.0.1",
        port=int(db.get("PORT") or 5432),
        user=db.get("USER") or "postgres",
        password=db.get("PASSWORD") or None,
        dbname=name,
        autocommit=True,
    )


def base_env(**more: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **more}
    env.pop("TEST_DATABASE_NAME", None)
    return env


def base_name() -> str:
    """This run's database name without pytest-django's "test_" (an xdist worker's suffix kept): the stem of
    every database these tests make, so runs of different engineers and workers never meet."""
    return str(_db()["NAME"]).removeprefix("test_")


def create_databases(*names: str) -> None:
    """Each of `names` a copy of the run's migrated template (tests/migrated.py): installations' schemas,
    nothing else in them."""
    migrated.clone_postgresql(migrated.Server(_db()), *names)


def drop_databases(*names: str) -> None:
    with connect("postgres") as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def drop_databases_later(*names: str) -> None:
    """Drop `names` from a process of their own, not waited for: each DROP DATABASE waits for a checkpoint
    (15 s each on a busy server, where the clone took half a second)."""
    if names:
        code = "import sys; from tests.e2e.link_support import drop_databases; drop_databases(*sys.argv[1:])"
        subprocess.Popen(
            [sys.executable, "-c", code, *names],
            cwd=ROOT,
            env=base_env(DJANGO_SETTINGS_MODULE="config.settings"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


def databases_like(prefix: str) -> list[str]:
    with connect("postgres") as admin:
        pattern = prefix.replace("_", r"\_") + "%"
        return [
            row[0]
            for row in admin.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [pattern])
        ]


def run_in(database: str, code: str, **env: str) -> Any:
    """Run `code` in `manage.py shell` of the installation on `database`; its last JSON line."""
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=base_env(DATABASE_URL=database_url(database), **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{code}\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def wait_for(condition: Callable[[], Any], timeout: float, what: str, logs: Callable[[], str]) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{logs()}"
        time.sleep(0.1)


class Process:
    """A subprocess logging to a file."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], directory: Path) -> None:
        self.name = name
        self.log_path = directory / f"{name}.log"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return f"--- {self.name} ---\n" + self.log_path.read_text(errors="replace")[-6000:]

    def terminate(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return int(self.proc.returncode)


class CuttableProxy:
    """127.0.0.1:<port> → 127.0.0.1:<target>, in a thread of its own with its own event loop."""

    def __init__(self, target: int) -> None:
        self.port = free_port()
        self.target = target
        self.is_cut = False
        self.connections: set[asyncio.StreamWriter] = set()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="link-proxy", daemon=True)
        self.thread.start()
        assert self.ready.wait(10), "the proxy did not start"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port))
        self.ready.set()
        self.loop.run_forever()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.is_cut:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.transport.abort()
            return
        self.connections.update((writer, up_writer))
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            self.connections.difference_update((writer, up_writer))

    async def _cut(self) -> None:
        self.is_cut = True
        for writer in list(self.connections):
            writer.transport.abort()

    def cut(self) -> None:
        asyncio.run_coroutine_threadsafe(self._cut(), self.loop).result(5)

    def restore(self) -> None:
        self.is_cut = False

    def close(self) -> None:
        self.cut()
        self.server.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


# --- a long-lived shell of an installation ----------------------------------------------------------------

REPLY = "@@reply "  # marks the driver's answers among whatever else the installation prints


def serve() -> None:
    """Inside an installation (`python -c`, Django set up as `manage.py shell` does): one call a line on
    stdin, {"module", "function", "kwargs"}; each answered with one REPLY line, {"ok": its value} or
    {"error": the traceback}."""
    import importlib
    import traceback

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import close_old_connections

    for line in sys.stdin:
        request = json.loads(line)
        try:
            close_old_connections()
            function = getattr(importlib.import_module(request["module"]), request["function"])
            reply = {"ok": function(**request["kwargs"])}
        except Exception:
            reply = {"error": traceback.format_exc()}
        sys.stdout.write(REPLY + json.dumps(reply, default=str) + "\n")
        sys.stdout.flush()


class Driver:
    """One Python shell of the installation on `database` running `serve()`: `call` a function of a
    module there (tests/e2e/network_actions.py), `send` and `receive` to have several drivers work at once."""

    def __init__(self, name: str, database: str, directory: Path, **env: str) -> None:
        self.name = name
        self.log_path = directory / f"{name}.log"
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "from tests.e2e.link_support import serve; serve()",
                ],
                cwd=ROOT,
                env=base_env(DATABASE_URL=database_url(database), **env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                bufsize=1,
            )
        self.pending = False

    def send(self, function: str, module: str = "tests.e2e.network_actions", **kwargs: Any) -> None:
        assert not self.pending and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"module": module, "function": function, "kwargs": kwargs}) + "\n")
        self.proc.stdin.flush()
        self.pending = True

    def receive(self) -> Any:
        assert self.pending and self.proc.stdout is not None
        self.pending = False
        for line in self.proc.stdout:  # the test's timeout bounds a shell that hangs
            if line.startswith(REPLY):
                reply = json.loads(line.removeprefix(REPLY))
                assert "error" not in reply, f"{self.name}: {reply['error']}"
                return reply["ok"]
        raise AssertionError(f"{self.name} exited ({self.proc.wait(10)})\n{self.log()}")

    def call(self, function: str, module: str = "tests.e2e.network_actions", **kwargs: Any) -> Any:
        self.send(function, module, **kwargs)
        return self.receive()

    def log(self) -> str:
        return f"--- {self.name} ---\n" + self.log_path.read_text(errors="replace")[-4000:]

    def terminate(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # its loop ends: the shell exits

    def stop(self) -> None:
        self.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def stop_all(processes: list[Process | Driver], timeout: float = 5.0) -> None:
    """Ask every process to stop at once, then wait for them (killing what is still up after `timeout`)."""
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + timeout
    for process in processes:
        try:
            process.proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.proc.kill()
            process.proc.wait(10)
