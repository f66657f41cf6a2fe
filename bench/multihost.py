"""deploy/'s hall on several hosts, in full, as private processes on this machine (issue 30): a PostgreSQL
primary with WAL archived by pgBackRest and a streaming replica, Redis with a replica and three Sentinels, two
web processes (uvicorn on config.asgi), two workers and two beats, every one configured through Sentinel
(REDIS_SENTINELS). Then:

- the Redis master is killed mid-draw: the Sentinels promote the replica, the workers and beats find it,
  the game's balls go on to the 90th with none lost or repeated, both web processes answer /health/ (Redis,
  the channel layer, the beat's heartbeat: all through the new master), and a sale goes through after;
- the night's backup is restored: a full pgBackRest backup taken before the play, a restore point named
  after the first game, more play after it; pgBackRest restores to the point into an empty directory,
  PostgreSQL recovers and promotes on it, ``manage.py verify_audit`` passes there and the data are the
  data at the point (the first game's balls exactly, nothing of the play after it).

A script, not a test: the private primary is migrated from nothing (107 migrations: 1-5 minutes on the
shared 2-core host), so a run takes 2-7 minutes. tests/e2e/test_multihost.py is the quick part (Sentinel
failover under the hall's settings; pgBackRest's point-in-time restore) in the default suite.

    flock /tmp/hall-bench.lock .venv/bin/python bench/multihost.py

Packages (Debian's): postgresql 15, pgbackrest, redis-server (scripts/ensure_multihost.sh). Ports: PostgreSQL
15432-15434, Redis 6395-6396, Sentinels 26395-26397, web 18500-18501 (change with --port-base-* if taken).
Exits 1 with the failing step named; prints one summary line.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.multihost_support import (  # after the path
    HallProcesses,
    PgBackRest,
    Postgres,
    RedisGroup,
    Workspace,
    start_replica,
    wait_until,
)

# The task's ports: PostgreSQL 15432-15439, Redis 6395-6399, Sentinels 26395-26399, web 18500-18599.
PG_PRIMARY, PG_REPLICA, PG_RESTORED = 15432, 15433, 15434
REDIS_MASTER, REDIS_REPLICA = 6395, 6396
SENTINELS = [26395, 26396, 26397]
# SQL on the tables of bingo.traditional's Ball and Game and of halls' Venue (their Django names).
# From the master's death to the next ball: Sentinel's down-after (1 s) and election, then the workers'
# reconnect (every 1-2 s) and the reaper (every second).
RESUME_WITHIN = 15.0
# A process's start (Django, Celery) on the shared host under load: up to minutes.
START = 300.0


def balls(pg: Postgres, game_id: int) -> list[tuple[int, int]]:
    rows = pg.query("SELECT ordinal, number FROM bingo_ball WHERE game_id = %s ORDER BY ordinal", game_id)
    return [(int(o), int(n)) for o, n in rows]


def health(port: int) -> dict[str, Any] | None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/health/?format=json", headers={"Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310  # http://127.0.0.1 only
            found: dict[str, Any] = json.loads(answer.read())
            return found
    except OSError:
        return None


def assert_no_ball_lost_or_repeated(drawn: list[tuple[int, int]]) -> None:
    assert [o for o, _ in drawn] == list(range(1, len(drawn) + 1)), drawn
    assert len({n for _, n in drawn}) == len(drawn), drawn


def healthy(port: int) -> bool:
    return (health(port) or {}).get("status") == "ok"


def health_and_logs(port: int, hall: HallProcesses) -> str:
    return f"{health(port)}\n{hall.logs()}"


def run(work: Workspace, figures: dict[str, float]) -> None:
    primary = Postgres(work, "primary", PG_PRIMARY)
    backrest = PgBackRest(work, primary.data, PG_PRIMARY)
    redis_group = RedisGroup(work, REDIS_MASTER, REDIS_REPLICA, SENTINELS)
    servers: list[Postgres] = [primary]
    hall: HallProcesses | None = None
    try:
        # --- PostgreSQL: the primary archiving to pgBackRest, its schema, a streaming replica --------------
        primary.initdb(backrest.archive_command)
        primary.start()
        primary.query("CREATE DATABASE hall", database="postgres")
        backrest.run("stanza-create")
        redis_group.start()
        hall = HallProcesses(work, primary.url(), redis_group.sentinels, redis_group.master_name)
        clock = time.monotonic()
        migrated = hall.manage("migrate", "--no-input", timeout=900)
        figures["migrate_s"] = time.monotonic() - clock
        assert migrated.returncode == 0, migrated.stdout + migrated.stderr
        replica = start_replica(work, primary, "replica", PG_REPLICA)
        servers.append(replica)
        ids = hall.driver("setup")
        # The replica streams: what the primary committed shows there, and the primary counts its sender.
        wait_until(
            lambda: replica.query("SELECT count(*) FROM halls_venue WHERE id = %s", ids["venue"])[0][0],
            20,
            "the venue on the replica",
            replica.log,
        )
        assert primary.query("SELECT state FROM pg_stat_replication") == [("streaming",)]
        assert replica.query("SELECT pg_is_in_recovery()") == [(True,)]

        # --- the night's backup (full), before the play ----------------------------------------------------
        clock = time.monotonic()
        backrest.run("backup", "--type=full", timeout=300)
        figures["backup_s"] = time.monotonic() - clock

        # --- the hall: two web processes, two workers, two beats, all through Sentinel ---------------------
        web_ports = [18500, 18501]
        for n, port in enumerate(web_ports, 1):
            hall.start_web(f"web{n}", port)
        for n in (1, 2):
            hall.start_worker(f"worker{n}")
            hall.start_beat(f"beat{n}")
        wait_until(
            lambda: all(" ready." in hall.log(f"worker{n}") for n in (1, 2)),
            START,
            "workers ready",
            hall.logs,
        )
        for port in web_ports:
            wait_until(
                partial(healthy, port),
                START,
                f"web :{port} healthy",
                hall.logs,
            )

        # --- a game drawing; the Redis master killed mid-draw ---------------------------------------------
        first = hall.driver("game", str(ids["room"]), "0.15", "6")["game"]
        wait_until(lambda: len(balls(primary, first)) >= 10, 60, "10 balls", hall.logs)
        redis_group.kill_master()
        killed_at = time.monotonic()
        before = len(balls(primary, first))
        wait_until(
            lambda: redis_group.master_port() == REDIS_REPLICA, 30, "Sentinel's promotion", redis_group.logs
        )
        wait_until(
            lambda: len(balls(primary, first)) > before + 1,
            RESUME_WITHIN + 15,
            "balls after the failover",
            hall.logs,
        )
        resumed_in = time.monotonic() - killed_at
        wait_until(lambda: len(balls(primary, first)) == 90, 90, "all 90 balls", hall.logs)
        drawn = balls(primary, first)
        assert_no_ball_lost_or_repeated(drawn)
        assert sorted(n for _, n in drawn) == list(range(1, 91))
        figures["failover_to_ball_s"] = resumed_in
        assert resumed_in < RESUME_WITHIN, f"balls resumed {resumed_in:.1f} s after the master died"
        # Every web process on the new master: Redis, channel layer, beat heartbeat, no stalled draw.
        for port in web_ports:
            wait_until(
                partial(healthy, port),
                60,
                f"web :{port} healthy after the failover",
                partial(health_and_logs, port, hall),
            )
        assert sorted(hall.running()) == sorted(hall.procs), hall.logs()

        # --- the restore point ("the night"), then play after it ------------------------------------------
        (point_lsn,) = primary.query("SELECT pg_create_restore_point('night')")[0]
        primary.query("SELECT pg_switch_wal()")
        games_at_point = sorted(r[0] for r in primary.query("SELECT id FROM bingo_game"))
        # A sale after the failover (and after the point): a second game sold, drawn a few balls.
        second = hall.driver("game", str(ids["room"]), "0.15", "3")["game"]
        wait_until(lambda: len(balls(primary, second)) >= 3, 60, "the second game's balls", hall.logs)
        wait_until(
            lambda: primary.query(
                "SELECT last_archived_wal >= pg_walfile_name(%s::pg_lsn) FROM pg_stat_archiver",
                str(point_lsn),
            )[0][0],
            60,
            "the restore point's WAL archived",
            primary.log,
        )
        hall.stop()

        # --- restore the night into an empty directory, recover to the point, verify --------------------
        restored = Postgres(work, "restored", PG_RESTORED)
        work.postgres_dir("restored")
        assert not any(restored.data.iterdir())
        clock = time.monotonic()
        backrest.run(
            f"--pg1-path={restored.data}",
            "--type=name",
            "--target=night",
            "--target-action=promote",
            "restore",
            timeout=180,
        )
        restored.start("-c archive_mode=off")
        servers.append(restored)
        wait_until(
            lambda: restored.query("SELECT pg_is_in_recovery()") == [(False,)],
            60,
            "recovery done",
            restored.log,
        )
        figures["restore_and_recover_s"] = time.monotonic() - clock
        assert sorted(r[0] for r in restored.query("SELECT id FROM bingo_game")) == games_at_point
        assert balls(restored, first) == drawn
        assert balls(restored, second) == []
        hall.env["DATABASE_URL"] = restored.url()
        clock = time.monotonic()
        verified = hall.manage("verify_audit")
        figures["verify_audit_s"] = time.monotonic() - clock
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "BAD" not in verified.stdout, verified.stdout
        assert "ok   venue" in verified.stdout, verified.stdout
        figures["balls_at_point"] = len(drawn)
    finally:
        if hall is not None:
            hall.stop()
        redis_group.stop()
        for server in reversed(servers):
            server.stop()


def main() -> int:
    os.chdir(Path(__file__).resolve().parents[1])
    figures: dict[str, float] = {}
    work = Workspace()
    started = time.monotonic()
    try:
        run(work, figures)
    except AssertionError as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        work.remove()
    figures["total_s"] = time.monotonic() - started
    load = os.getloadavg()
    print(
        "multihost: Redis master killed mid-draw -> next balls after {failover_to_ball_s:.1f} s, 90 balls, "
        "none lost or repeated, both web processes healthy; night restored to its point "
        "(backup {backup_s:.1f} s, restore+recovery {restore_and_recover_s:.1f} s, verify_audit ok in "
        "{verify_audit_s:.1f} s); migrate {migrate_s:.0f} s, total {total_s:.0f} s".format(**figures)
        + f"; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
