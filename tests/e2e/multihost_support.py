"""Private servers for the multi-host test (tests/e2e/test_multihost.py), never the machine's shared ones:
a PostgreSQL primary with WAL archived by pgBackRest and a streaming replica, a Redis master with a replica
and three Sentinels, and the hall's processes (web, workers, beats) against them.

PostgreSQL refuses to run as root, so its servers and pgBackRest run as the ``postgres`` OS user (runuser)
in a directory of their own under /tmp. Packages (Debian's): postgresql, pgbackrest, redis-server; the test
installs nothing (scripts/ensure_multihost.sh, run by ``make test``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import redis

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = Path("/usr/lib/postgresql/15/bin")
STANZA = "hall"


def wait_until(condition: Callable[[], Any], timeout: float, what: str, logs: Callable[[], str] = str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except (OSError, psycopg.Error, redis.RedisError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs()}")
        time.sleep(0.1)


# The workspace in memory when there is room (a few hundred MB: three data directories, the WAL, pgBackRest's
# repository): pgBackRest's restore syncs each of the hall's thousands of files, 10-30 s on the loaded shared
# disk, nothing on tmpfs (the servers' own fsync is off anyway: a test's server has no crash to survive).
MEMORY = Path("/dev/shm")
MEMORY_NEEDED = 2 * 1024**3


STALE = 3 * 3600  # seconds: a workspace this old is a killed run's (a run takes minutes), its memory freed


def _workspace_parent() -> str:
    try:
        for old in MEMORY.glob("hall-multihost-*"):
            if time.time() - old.stat().st_mtime > STALE:
                shutil.rmtree(old, ignore_errors=True)
        usage = shutil.disk_usage(MEMORY)
    except OSError:
        return "/tmp"
    return str(MEMORY) if usage.free >= MEMORY_NEEDED else "/tmp"


class Workspace:
    """A directory the postgres user can enter (pytest's tmp_path is root's alone): in /dev/shm when it has
    room, else under /tmp."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="hall-multihost-", dir=_workspace_parent()))
        self.path.chmod(0o755)
        shutil.chown(self.path, "postgres", "postgres")

    def postgres_dir(self, name: str) -> Path:
        path = self.path / name
        path.mkdir(mode=0o700)
        shutil.chown(path, "postgres", "postgres")
        return path

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def as_postgres(*args: str | Path, timeout: float = 120) -> str:
    result = subprocess.run(
        ["runuser", "-u", "postgres", "--", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd="/tmp",
    )
    if result.returncode != 0:
        raise AssertionError(f"{args[0]} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


class PgBackRest:
    """pgBackRest with its repository, logs and locks in the workspace; the stanza is the primary's."""

    def __init__(self, work: Workspace, primary_dir: Path, port: int) -> None:
        self.repo = work.postgres_dir("pgbackrest-repo")
        for name in ("pgbackrest-log", "pgbackrest-lock", "pgbackrest-spool"):
            work.postgres_dir(name)
        self.config = work.path / "pgbackrest.conf"
        self.config.write_text(
            "[global]\n"
            f"repo1-path={self.repo}\n"
            "repo1-retention-full=2\n"
            f"log-path={work.path / 'pgbackrest-log'}\n"
            f"lock-path={work.path / 'pgbackrest-lock'}\n"
            f"spool-path={work.path / 'pgbackrest-spool'}\n"
            "log-level-console=warn\n"
            "log-level-file=info\n"
            "start-fast=y\n"
            "compress-type=lz4\n"
            # The hall's thousands of small files (a table, an index each) in few repository files: a full
            # backup of a migrated hall in 3.5 s instead of 25 s on the loaded shared host.
            "repo1-bundle=y\n"
            f"[{STANZA}]\n"
            f"pg1-path={primary_dir}\n"
            f"pg1-port={port}\n"
            f"pg1-socket-path={work.path}\n"
            "pg1-user=postgres\n"
        )
        self.config.chmod(0o644)

    @property
    def archive_command(self) -> str:
        return f"pgbackrest --config={self.config} --stanza={STANZA} archive-push %p"

    def run(self, *args: str, timeout: float = 120) -> str:
        return as_postgres(
            "pgbackrest", f"--config={self.config}", f"--stanza={STANZA}", *args, timeout=timeout
        )


class Postgres:
    """One PostgreSQL 15 server of the workspace, as the postgres user, on 127.0.0.1:port."""

    def __init__(self, work: Workspace, name: str, port: int) -> None:
        self.work = work
        self.name = name
        self.port = port
        self.data = work.path / name
        self.log_file = work.path / f"{name}.log"

    def initdb(self, archive_command: str) -> None:
        work_dir = self.work.postgres_dir(self.name)
        as_postgres(PG_BIN / "initdb", "-D", work_dir, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\nwal_level = replica\n"
                "archive_mode = on\n"
                f"archive_command = '{archive_command}'\n"
                "max_wal_senders = 5\n"
                "hot_standby = on\n"
                "fsync = off\n"  # a test's server: no crash to survive, and the machine is shared
                "shared_buffers = 32MB\n"
                "max_connections = 60\n"
            )
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.write("host replication postgres 127.0.0.1/32 trust\n")

    def start(self, *options: str) -> None:
        as_postgres(
            PG_BIN / "pg_ctl",
            "-D",
            self.data,
            "-l",
            self.log_file,
            "-w",
            "-t",
            "60",
            "-o",
            f"-p {self.port} -k {self.work.path} -c listen_addresses=127.0.0.1 {' '.join(options)}",
            "start",
        )

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [
                    "runuser",
                    "-u",
                    "postgres",
                    "--",
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
                capture_output=True,
                check=False,
                timeout=60,
                cwd="/tmp",
            )

    def url(self, database: str = "hall") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = "hall") -> psycopg.Connection[Any]:
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname=database, autocommit=True
        )

    def query(self, sql: str, *params: Any, database: str = "hall") -> list[tuple[Any, ...]]:
        with self.connect(database) as conn:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")[-3000:] if self.log_file.exists() else ""


def copy_database(source_url: str, target: Postgres, database: str = "hall") -> None:
    """`source_url`'s database (only read: pg_dump's one snapshot) loaded into `target`'s `database`, which
    is empty: the schema, its functions and triggers, and whatever rows it has."""
    dump = subprocess.Popen(
        [str(PG_BIN / "pg_dump"), "--no-owner", "--no-privileges", "-d", source_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert dump.stdout is not None
    load = subprocess.run(
        [str(PG_BIN / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", target.url(database)],
        stdin=dump.stdout,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    dump.stdout.close()
    _, dump_errors = dump.communicate(timeout=60)
    if dump.returncode != 0:  # e.g. a server of another major version than PG_BIN's pg_dump
        raise AssertionError(f"pg_dump of the template failed:\n{dump_errors.decode(errors='replace')}")
    if load.returncode != 0:
        raise AssertionError(f"loading the template's dump failed:\n{load.stdout}\n{load.stderr}")


def start_replica(work: Workspace, primary: Postgres, name: str, port: int) -> Postgres:
    """A streaming replica of the primary: pg_basebackup -R (standby.signal and primary_conninfo)."""
    replica = Postgres(work, name, port)
    as_postgres(
        PG_BIN / "pg_basebackup",
        "-h",
        "127.0.0.1",
        "-p",
        str(primary.port),
        "-U",
        "postgres",
        "-D",
        replica.data,
        "-R",
        "-X",
        "stream",
        "-c",
        "fast",
    )
    replica.start("-c archive_mode=off")
    return replica


class RedisGroup:
    """A Redis master, its replica and three Sentinels (quorum 2) watching it, each a process of its own."""

    def __init__(
        self, work: Workspace, master_port: int, replica_port: int, sentinel_ports: list[int]
    ) -> None:
        self.work = work
        self.master_name = "hall30"
        self.ports = {"master": master_port, "replica": replica_port}
        self.sentinel_ports = sentinel_ports
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.work.path / f"redis-{name}.log").open("wb")
        self.procs[name] = subprocess.Popen(["redis-server", *args], stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def start(self) -> None:
        common = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(self.work.path)]
        self._spawn("master", ["--port", str(self.ports["master"]), *common])
        self._spawn(
            "replica",
            [
                "--port",
                str(self.ports["replica"]),
                *common,
                "--replicaof",
                "127.0.0.1",
                str(self.ports["master"]),
            ],
        )
        wait_until(
            lambda: self.client(self.ports["replica"]).info("replication")["master_link_status"] == "up",
            20,
            "the Redis replica in sync",
            self.logs,
        )
        for port in self.sentinel_ports:
            conf = self.work.path / f"sentinel-{port}.conf"
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.work.path}\n"
                f"sentinel monitor {self.master_name} 127.0.0.1 {self.ports['master']} 2\n"
                f"sentinel down-after-milliseconds {self.master_name} 1000\n"
                f"sentinel failover-timeout {self.master_name} 5000\n"
                f"sentinel parallel-syncs {self.master_name} 1\n"
            )
            self._spawn(f"sentinel-{port}", [str(conf), "--sentinel"])
        wait_until(
            lambda: all(self.sentinel_sees_replica(p) for p in self.sentinel_ports),
            20,
            "the Sentinels to know the master and its replica",
            self.logs,
        )

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=2)

    def sentinel_sees_replica(self, port: int) -> bool:
        replicas = self.client(port).sentinel_slaves(self.master_name)
        return any(int(r["port"]) == self.ports["replica"] for r in replicas)

    def master_port(self) -> int:
        """The master's port as the first Sentinel names it."""
        address: Any = self.client(self.sentinel_ports[0]).sentinel_get_master_addr_by_name(self.master_name)
        _, port = address
        return int(port)

    @property
    def sentinels(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)

    def kill_master(self) -> None:
        proc = self.procs["master"]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def logs(self) -> str:
        parts = []
        for name in self.procs:
            text = (self.work.path / f"redis-{name}.log").read_text(errors="replace")
            parts.append(f"--- redis {name} ---\n{text[-1500:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


class Driver:
    """The hall's hand (tests/e2e/multihost_driver.py ``serve``): a command a line, its JSON answer back."""

    def __init__(self, proc: subprocess.Popen[str], log: Path) -> None:
        self.proc = proc
        self.log = log

    def __call__(self, *args: str) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(" ".join(args) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:  # Django may print before the answer
            kind, _, body = line.rstrip("\n").partition(" ")
            if kind == "RESULT":
                return json.loads(body)
            if kind == "ERROR":
                raise AssertionError(f"driver {args}:\n{json.loads(body)}")
        raise AssertionError(f"the driver ended at {args}:\n{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class HallProcesses:
    """The hall's processes as the hosts of deploy/ run them (two of each), against the private servers."""

    QUIET = (
        "HALL_POOL_FOLD_SECONDS",
        "HALL_POOL_SEAL_SECONDS",
        "HALL_TABLE_AUTOPLAY_SECONDS",
        "HALL_METER_SECONDS",
        "HALL_PROGRAM_SCHEDULE_SECONDS",
        "HALL_MACHINE_BROADCAST_SECONDS",
        "HALL_MACHINE_WATCH_SECONDS",
    )

    def __init__(self, work: Workspace, database_url: str, sentinels: str, master_name: str) -> None:
        self.work = work
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.terminated_at: float | None = None
        self.exit_seconds: dict[str, float] = {}
        drop = {
            "PYTEST_XDIST_WORKER",
            "PYTEST_XDIST_WORKER_COUNT",
            "HALL_TEST_WORKER_SPLIT",
            "TEST_DATABASE_NAME",
            "HALL_TEST_DB",
            "HALL_DB_POOL",
        }
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in drop},
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": "redis://sentinel/0",
            "REDIS_SENTINELS": sentinels,
            "REDIS_SENTINEL_MASTER": master_name,
            "CHANNEL_PREFIX": "multihost",
            "HALL_DETECTOR_DIR": str(work.path / "detector"),
            # The anchors in the workspace, and none written during the run: an anchor taken after the restore
            # point would (rightly) make verify_audit on the restored night report the anchored links missing.
            "HALL_AUDIT_ANCHOR_DIR": str(work.path / "anchors"),
            "HALL_AUDIT_ANCHOR_SECONDS": "3600",
            # The reaper every second; a draw counts as stalled one second past its pace.
            "HALL_REAPER_SECONDS": "1",
            "HALL_DRAW_STALL_GRACE_SECONDS": "1",
            "HALL_AUTOPLAY_SECONDS": "3600",
            **dict.fromkeys(self.QUIET, "3600"),
            "PYTHONUNBUFFERED": "1",
        }

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.work.path / f"{name}.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        self.procs[name] = proc
        return proc

    def manage(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def driver_session(self) -> Driver:
        """tests/e2e/multihost_driver.py serving commands in one process (one Django start for them all)."""
        log = (self.work.path / "driver.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.multihost_driver", "serve"],
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        log.close()
        return Driver(proc, self.work.path / "driver.log")

    def driver(self, *args: str) -> Any:
        result = subprocess.run(
            [sys.executable, "-m", "tests.e2e.multihost_driver", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, f"driver {args}:\n{result.stdout}\n{result.stderr}"
        return json.loads(result.stdout.strip().splitlines()[-1])

    def start_web(self, name: str, port: int) -> None:
        self._spawn(
            name,
            [
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--ws-per-message-deflate",
                "false",
            ],
        )

    def start_worker(self, name: str) -> None:
        self._spawn(
            name,
            [
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                "draws,celery",
                "-c",
                "1",
                "-l",
                "info",
                "-n",
                f"{name}@%h",
            ],
        )

    def start_beat(self, name: str) -> None:
        self._spawn(
            name,
            [
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "-l",
                "info",
                "-s",
                str(self.work.path / f"{name}-schedule"),
            ],
        )

    def log(self, name: str) -> str:
        path = self.work.path / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-2500:]}" for name in self.procs)

    def running(self) -> list[str]:
        return [name for name, proc in self.procs.items() if proc.poll() is None]

    def terminate(self) -> None:
        """SIGTERM to every process still running (their graceful stop), not waited for: stop() waits."""
        if self.terminated_at is None:
            self.terminated_at = time.monotonic()
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()

    def stop(self, grace: float = 20.0) -> None:
        """Each process stopped (SIGTERM, then SIGKILL `grace` seconds after it); how long each took to exit
        is in `exit_seconds` (when this noticed it: an upper bound)."""
        self.terminate()
        assert self.terminated_at is not None
        for name, proc in self.procs.items():
            try:
                proc.wait(max(0.1, self.terminated_at + grace - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            self.exit_seconds.setdefault(name, round(time.monotonic() - self.terminated_at, 1))
