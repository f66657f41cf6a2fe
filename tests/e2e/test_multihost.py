"""deploy/'s several hosts (issue 30), as private servers on this machine (never the shared ones): Redis
behind Sentinel under the hall's own settings, through a failover, in one process; and the whole layout (two
web processes, two workers, two beats, a primary with its streaming replica and pgBackRest, Redis with
Sentinel: the hall's game through a failover, a night restored to its point and ``verify_audit`` on it), with
its primary loaded from the run's migrated template. bench/multihost.py is the whole layout's long variant
(the primary migrated from nothing).

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
from django.conf import settings

from tests import migrated
from tests.e2e.multihost_layout import Plan, Ports, Result, from_template, run
from tests.e2e.multihost_support import ROOT, RedisGroup, Workspace, wait_until

# The whole layout's: its template may have to be built first (tests/migrated.py: minutes when loaded).
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

# The task's own ports, none of bench/multihost.py's (tests/e2e/multihost_layout.Ports: the lower ones of each
# range), so the bench and the test may run at once. This file's tests run one after the other on one xdist
# worker (`--dist loadfile`): the whole layout takes the Sentinel test's Redis and Sentinels again, its
# two Sentinels (quorum 2) as that test's.
REDIS_MASTER, REDIS_REPLICA = 6397, 6398
SENTINELS = [26398, 26399]
LAYOUT = Ports(
    pg_primary=15435,
    pg_replica=15436,
    pg_restored=15437,
    redis_master=REDIS_MASTER,
    redis_replica=REDIS_REPLICA,
    sentinels=tuple(SENTINELS),
    web=(18502, 18503),
)
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


@pytest.mark.timeout(180)
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


def test_the_whole_layout_goes_on_through_a_redis_failover_and_its_night_restores_and_verifies(
    work: Workspace,
) -> None:
    """Two web processes, two workers, two beats, a PostgreSQL primary (pgBackRest) with its streaming
    replica, Redis with its replica and Sentinels, all private: the master killed mid-draw, the balls
    go on (ten more, then the draw paused: none lost or repeated), both web processes healthy on the new
    master, a sale after;
    the night's backup restored to its named point into an empty directory and ``verify_audit`` passing
    there (tests/e2e/multihost_layout.py). The primary is loaded from the run's migrated template (read with
    pg_dump, the only use of the shared server), not migrated."""
    template = migrated.Server(settings.DATABASES["default"])
    template_url = template.url(migrated.postgresql_template(template))
    result = Result()
    started = time.monotonic()
    try:
        plan = Plan(
            seed=from_template(template_url),
            ports=LAYOUT,
            pace="0.1",
            balls_before_kill=5,
            balls_after_failover=10,
            start_timeout=120.0,
        )
        run(work, plan, result)
    finally:
        print(f"multihost steps (s): {json.dumps(result.steps)}")
        print(f"multihost exits (s): {json.dumps(result.exit_seconds)}")
    figures = result.figures
    print(result.verify_audit.rstrip())
    print(
        f"multihost: master killed after {figures['balls_before_kill']:.0f} balls, "
        f"{figures['balls_drawn']:.0f} drawn in all; promoted "
        f"{figures['promoted_s']:.1f} s, next ball {figures['failover_to_ball_s']:.1f} s, the one after "
        f"{figures['failover_to_second_ball_s']:.1f} s after the kill; restore+recovery "
        f"{figures['restore_and_recover_s']:.1f} s, verify_audit ok in {figures['verify_audit_s']:.1f} s; "
        f"total {time.monotonic() - started:.0f} s"
    )
