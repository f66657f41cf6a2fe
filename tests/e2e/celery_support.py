"""A real Celery worker and beat as subprocesses against the test database (tests/e2e/test_celery_worker.py
and the outage tests): their environment, their logs, waiting for them, ending them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from kombu import Queue

from config.celery import app as celery_app

QUEUES = ("celery", "draws")
START_TIMEOUT = 90.0  # a Python + Django + Celery start on a loaded 2-core machine: 10-60 s


def database_url() -> str:
    """The test database (pytest-django has renamed it in settings) as a URL for the subprocesses."""
    db = settings.DATABASES["default"]
    assert "postgresql" in db["ENGINE"]
    auth = quote(str(db["USER"] or ""), safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(str(db["PASSWORD"]), safe="")
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{auth}@{host}:{port}/{db['NAME']}"


def wait_for(condition: Callable[[], Any], timeout: float, what: str, logs: Callable[[], str]) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs()}")


class CeleryProcesses:
    """Workers and one beat as subprocesses, each logging to a file; all are ended at teardown."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "REDIS_URL": str(settings.REDIS_URL),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            # The reaper every second, and a draw counts as stalled one second past its pace.
            "HALL_REAPER_SECONDS": "1",
            "HALL_DRAW_STALL_GRACE_SECONDS": "1",
            "HALL_AUTOPLAY_SECONDS": "3600",
            # The other periodic tasks (meters, folds, seals, broadcasts, watches) stay quiet: the worker is a
            # solo pool, and while it ran one of them the next ball's message waited in Redis instead of in
            # the worker's hands, so a kill then left nothing for the reaper to find.
            **dict.fromkeys(
                [
                    "HALL_POOL_FOLD_SECONDS",
                    "HALL_POOL_SEAL_SECONDS",
                    "HALL_TABLE_AUTOPLAY_SECONDS",
                    "HALL_METER_SECONDS",
                    "HALL_PROGRAM_SCHEDULE_SECONDS",
                    "HALL_MACHINE_BROADCAST_SECONDS",
                    "HALL_MACHINE_WATCH_SECONDS",
                ],
                "3600",
            ),
            # Events the worker publishes stay off the channel groups of anything else on this Redis.
            "CHANNEL_PREFIX": f"e2e-{uuid.uuid4().hex[:8]}",
            # Beat's schedule and leader's lock (celery-redbeat, config.beat) are this test's own.
            "HALL_REDBEAT_PREFIX": f"e2e-{uuid.uuid4().hex[:8]}:redbeat:",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("TEST_DATABASE_NAME", None)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.directory / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *args],
            cwd=settings.BASE_DIR,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-3000:]}" for name in self.procs)

    def start_worker(self, name: str) -> subprocess.Popen[bytes]:
        return self.start_workers(name)[name]

    def start_workers(self, *names: str) -> dict[str, subprocess.Popen[bytes]]:
        """Workers started together (each start costs seconds on a busy machine), each waited for."""
        procs = {name: self._start_worker(name) for name in names}
        for name, proc in procs.items():
            self._wait_ready(name, proc)
        return procs

    def _start_worker(self, name: str) -> subprocess.Popen[bytes]:
        return self._start(
            name,
            [
                "worker", "-Q", ",".join(QUEUES), "--pool=solo", "-c", "1", "-l", "info",
                "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h",
                "--without-mingle", "--without-gossip", "--without-heartbeat",
            ],
        )  # fmt: skip

    def _wait_ready(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        wait_for(
            lambda: " ready." in self.log(name) or proc.poll() is not None,
            START_TIMEOUT,
            f"{name} ready",
            self.logs,
        )
        assert proc.poll() is None, f"{name} exited with {proc.returncode}\n{self.logs()}"

    def start_beat(self, name: str = "beat") -> subprocess.Popen[bytes]:
        """A beat (on Redis celery-redbeat's: several may run, one leads; `-s` is the file scheduler's)."""
        schedule = self.directory / f"{name}-schedule"
        return self._start(name, ["beat", "-l", "info", "-s", str(schedule)])

    def wait_leading(self, name: str = "beat") -> None:
        """Until beat `name` holds the leader's lock (celery-redbeat logs it) and sends."""
        wait_for(lambda: "beat: Acquired lock" in self.log(name), START_TIMEOUT, f"{name} leading", self.logs)

    def redis_key(self, *parts: object) -> str:
        """A key the subprocesses write under their channel prefix (halls.leases, halls.heartbeat)."""
        return ":".join([self.env["CHANNEL_PREFIX"], *map(str, parts)])

    def stop(self, name: str) -> None:
        proc = self.procs[name]
        if proc.poll() is None:
            proc.terminate()  # a warm shutdown puts the messages it holds back on the queue
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def stop_all(self) -> None:
        for name in self.procs:
            self.stop(name)


def purge_queues() -> None:
    with celery_app.connection_for_write() as conn:
        for queue in QUEUES:
            Queue(queue)(conn.default_channel).purge()
