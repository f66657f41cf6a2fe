"""`manage.py demo` in a process of its own, as `make demo` starts it, played for a while and stopped with
Ctrl-C: the self-playing demo tests' common part.

The demo's database starts as a copy of the run's migrated SQLite template (tests/migrated.py, already built
for the run's own test databases), so the demo's `migrate` has nothing to do: on a first start the demo would
otherwise migrate a template of its own (demo/template.py, tested by tests/sqlite/test_demo_network.py), which
takes most of a minute of CPU, more than a minute on a loaded machine. The play time is counted from the
moment uvicorn serves, never from the process's start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests import migrated
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 240.0  # from the process's start to uvicorn serving, on a loaded machine
SERVING = "Uvicorn running"


def embedded_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """`make demo`'s environment (no DATABASE_URL / REDIS_URL), with a database file in `tmp_path`."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "HALL_TEST_DB")}
    env.update(
        SQLITE_PATH=str(tmp_path / "hall.sqlite3"), STATIC_ROOT=str(tmp_path / "static"), PYTHONUNBUFFERED="1"
    )
    env.update(extra)
    return env


def play_demo(
    env: dict[str, str],
    log_path: Path,
    seconds: float,
    args: tuple[str, ...] = (),
    while_playing: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> str:
    """The demo started with `env` (and the command's `args`), left to play `seconds` once it serves, stopped
    with Ctrl-C; its log. `while_playing(process)` is called once it has played."""
    migrated.copy_sqlite(Path(env["SQLITE_PATH"]))
    with log_path.open("wb") as log:
        demo = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(free_port()), "--host", "127.0.0.1", *args],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_while_running(demo, log_path, lambda: SERVING not in _read(log_path), READY_SECONDS)
            assert SERVING in _read(log_path), f"the demo did not serve in {READY_SECONDS:.0f} s:\n" + _tail(
                log_path
            )
            _wait_while_running(demo, log_path, lambda: True, seconds)
            if while_playing is not None:
                while_playing(demo)
        finally:
            demo.send_signal(signal.SIGINT)  # uvicorn stops, then the runners and the embedded worker
            try:
                demo.wait(60)
            except subprocess.TimeoutExpired:
                demo.kill()
                demo.wait(10)
    return _read(log_path)


def _wait_while_running(
    demo: subprocess.Popen[bytes], log_path: Path, still: Callable[[], bool], seconds: float
) -> None:
    """Up to `seconds` while `still()` holds; the demo must not end meanwhile."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and still():
        assert demo.poll() is None, _tail(log_path)
        time.sleep(0.5)


def _read(log_path: Path) -> str:
    return log_path.read_text(errors="replace")


def _tail(log_path: Path) -> str:
    return _read(log_path)[-5000:]
