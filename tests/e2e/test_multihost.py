"""The quick part of deploy/'s several hosts (issue 30), as private servers on this machine (never the shared
ones): Redis behind Sentinel under the hall's own settings, through a failover; pgBackRest's point-in-time
restore into an empty directory. The whole layout (two web processes, two workers, two beats, a streaming
replica, the hall's game through a failover, a night restored and ``verify_audit`` on it) is
bench/multihost.py: it migrates a fresh primary, minutes on the shared host.

Packages (Debian's postgresql 15, pgbackrest, redis-server) come from scripts/ensure_multihost.sh, which
``make test`` runs; the test installs nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.multihost_support import ROOT, PgBackRest, Postgres, RedisGroup, Workspace, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

# The task's own ports (bench/multihost.py takes the lower ones of each range).
REDIS_MASTER, REDIS_REPLICA = 6397, 6398
SENTINELS = [26398, 26399]
PG_PRIMARY, PG_RESTORED = 15435, 15436
# From the master's death: Sentinel's down-after (1 s), the vote, the promotion, then each client's retry.
FAILOVER_WITHIN = 20.0


@pytest.fixture
def work() -> Iterator[Workspace]:
    space = Workspace()
    try:
        yield space
    finally:
        space.remove()


class Probe:
    """tests/e2e/sentinel_probe.py in a process of its own, under the hall's settings through Sentinel."""

    def __init__(self, work: Workspace, sentinels: str, master: str) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "PYTEST_XDIST_WORKER", "HALL_TEST_WORKER_SPLIT", "HALL_TEST_DB"}
        }
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            REDIS_URL="redis://sentinel/0",
            REDIS_SENTINELS=sentinels,
            REDIS_SENTINEL_MASTER=master,
            CHANNEL_PREFIX="sentinel-probe",
            SQLITE_PATH=str(work.path / "probe.sqlite3"),  # settings need a database; nothing opens it
            HALL_REDIS_SOCKET_TIMEOUT="2",
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.sentinel_probe"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def check(self) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("check\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the probe ended: {self.proc.stderr.read() if self.proc.stderr else ''}"
        found: dict[str, Any] = json.loads(line)
        return found

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def all_ok(result: dict[str, Any]) -> bool:
    return all(result.get(part) for part in ("cache", "layer", "broker", "client"))


def test_the_hall_s_redis_users_follow_a_sentinel_failover(work: Workspace) -> None:
    group = RedisGroup(work, REDIS_MASTER, REDIS_REPLICA, SENTINELS)
    probe: Probe | None = None
    try:
        group.start()
        probe = Probe(work, group.sentinels, group.master_name)
        before = probe.check()
        assert all_ok(before), before
        assert before["master_port"] == REDIS_MASTER
        # The cache wrote to the master the Sentinels named (under the hall's key prefix).
        assert group.client(REDIS_MASTER).keys("sentinel-probe.cache:*probe")

        group.kill_master()
        killed = time.monotonic()
        wait_until(lambda: group.master_port() == REDIS_REPLICA, FAILOVER_WITHIN, "the promotion", group.logs)
        # The same process (its cache pool, channel-layer connections, broker) carries on on the new master.
        seen: list[dict[str, Any]] = []

        def recovered() -> dict[str, Any] | None:
            seen.append(probe.check())
            return seen[-1] if all_ok(seen[-1]) else None

        after = wait_until(recovered, FAILOVER_WITHIN, "the probe", lambda: json.dumps(seen[-3:], indent=1))
        took = time.monotonic() - killed
        assert after["master_port"] == REDIS_REPLICA
        assert group.client(REDIS_REPLICA).keys("sentinel-probe.cache:*probe")
        assert took < FAILOVER_WITHIN
        print(
            f"sentinel failover: the hall's cache, layer, broker and client back {took:.1f} s after the kill"
        )
    finally:
        if probe is not None:
            probe.stop()
        group.stop()


def test_pgbackrest_restores_a_night_to_its_point_into_an_empty_directory(work: Workspace) -> None:
    primary = Postgres(work, "primary", PG_PRIMARY)
    backrest = PgBackRest(work, primary.data, PG_PRIMARY)
    restored = Postgres(work, "restored", PG_RESTORED)
    try:
        primary.initdb(backrest.archive_command)
        primary.start()
        primary.query("CREATE DATABASE hall", database="postgres")
        backrest.run("stanza-create")
        primary.query("CREATE TABLE night (n integer PRIMARY KEY, at timestamptz DEFAULT now())")
        primary.query("INSERT INTO night (n) SELECT generate_series(1, 10)")
        backrest.run("backup", "--type=full", timeout=120)
        # The night's play after the backup, up to the point; then more that the restore must leave out.
        primary.query("INSERT INTO night (n) SELECT generate_series(11, 50)")
        (point,) = primary.query("SELECT pg_create_restore_point('night')")[0]
        primary.query("INSERT INTO night (n) SELECT generate_series(51, 60)")
        primary.query("DELETE FROM night WHERE n <= 5")
        primary.query("SELECT pg_switch_wal()")
        wait_until(
            lambda: primary.query(
                "SELECT last_archived_wal >= pg_walfile_name(%s::pg_lsn) FROM pg_stat_archiver", str(point)
            )[0][0],
            30,
            "the point's WAL archived",
            primary.log,
        )

        work.postgres_dir("restored")
        backrest.run(
            f"--pg1-path={restored.data}",
            "--type=name",
            "--target=night",
            "--target-action=promote",
            "restore",
        )
        restored.start("-c archive_mode=off")
        wait_until(
            lambda: restored.query("SELECT pg_is_in_recovery()") == [(False,)],
            60,
            "the recovery",
            restored.log,
        )
        rows = [n for (n,) in restored.query("SELECT n FROM night ORDER BY n")]
        assert rows == list(range(1, 51))
        # The primary moved on; the restored server is a new timeline of its own, open for writes.
        assert [n for (n,) in primary.query("SELECT n FROM night ORDER BY n")] == list(range(6, 61))
        restored.query("INSERT INTO night (n) VALUES (51)")
    finally:
        restored.stop()
        primary.stop()
